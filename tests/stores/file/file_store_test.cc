// The local file store and OpenStore's dispatch of paths and file:// URLs.
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/file.h"
#include "engine/runtime/event_loop.h"
#include "stores/file/file_store.h"
#include "stores/store.h"
#include "tests/stores/http/test_servers.h"

namespace sluice {
namespace {

using testing::PatternBytes;
using testing::TempDir;

class FileStoreTest : public ::testing::Test {
 protected:
  std::unique_ptr<Store> Open(const std::string& url) {
    auto store = OpenStore(url, loop_.executor());
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(store).value() : nullptr;
  }
  EventLoop loop_;
  TempDir dir_;
};

TEST_F(FileStoreTest, PutGetHeadRangeRoundTrip) {
  auto store = Open(dir_.path() + "/root");
  ASSERT_NE(store, nullptr);
  std::string data = PatternBytes(100000, 7);
  ASSERT_TRUE(loop_.Run(store->Put("a/b/shard.mds", data)).ok());
  auto got = loop_.Run(store->Get("a/b/shard.mds"));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, data);
  auto head = loop_.Run(store->Head("a/b/shard.mds"));
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(head->size, 100000u);
  EXPECT_EQ(head->key, "a/b/shard.mds");
  auto range = loop_.Run(store->GetRange("a/b/shard.mds", 99990, 100));
  ASSERT_TRUE(range.ok());
  EXPECT_EQ(*range, data.substr(99990));
  auto mid = loop_.Run(store->GetRange("a/b/shard.mds", 5, 3));
  ASSERT_TRUE(mid.ok());
  EXPECT_EQ(*mid, data.substr(5, 3));
  auto empty = loop_.Run(store->GetRange("a/b/shard.mds", 100000, 3));
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(*empty, "");
  auto past = loop_.Run(store->GetRange("a/b/shard.mds", 100001, 3));
  EXPECT_EQ(past.status().code(), StatusCode::kOutOfRange);
}

TEST_F(FileStoreTest, FileUrlAndGetToFileAndPutFile) {
  auto store = Open("file://" + dir_.path() + "/r");
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->root(), "file://" + dir_.path() + "/r");
  std::string data = PatternBytes(3 << 20, 3);
  std::string src = dir_.path() + "/src.bin";
  ASSERT_TRUE(WriteFileAtomic(src, data).ok());
  ASSERT_TRUE(loop_.Run(store->PutFile("x/y.bin", src)).ok());
  std::string dst = dir_.path() + "/out/deep/y.bin";
  ASSERT_TRUE(loop_.Run(store->GetToFile("x/y.bin", dst, std::nullopt)).ok());
  auto back = ReadFile(dst);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, data);
  // No temporary file is left next to the destination.
  auto listing = Open(dir_.path() + "/out");
  auto all = loop_.Run(listing->List(""));
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ((*all)[0].key, "deep/y.bin");
}

TEST_F(FileStoreTest, MissingObjectIsNotFoundAndLeavesDestinationUntouched) {
  auto store = Open(dir_.path());
  std::string dst = dir_.path() + "/keep.bin";
  ASSERT_TRUE(WriteFileAtomic(dst, "old").ok());
  Status s = loop_.Run(store->GetToFile("nope.bin", dst, std::nullopt));
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_NE(s.message().find(dir_.path() + "/nope.bin"), std::string::npos) << s.message();
  EXPECT_EQ(*ReadFile(dst), "old");
  EXPECT_EQ(loop_.Run(store->Head("nope")).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(loop_.Run(store->Get("nope")).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(loop_.Run(store->GetRange("nope", 0, 1)).status().code(), StatusCode::kNotFound);
  // A folder is not an object.
  ASSERT_TRUE(MakeDirs(dir_.path() + "/sub").ok());
  EXPECT_EQ(loop_.Run(store->Head("sub")).status().code(), StatusCode::kNotFound);
}

TEST_F(FileStoreTest, AnObjectOfAnotherSizeThanExpectedIsNotCopied) {
  std::unique_ptr<Store> store = Open(dir_.path());
  ASSERT_TRUE(loop_.Run(store->Put("s.mds", PatternBytes(1000))).ok());
  std::string dst = dir_.path() + "/copy.mds";
  Status s = loop_.Run(store->GetToFile("s.mds", dst, 2000));
  EXPECT_EQ(s.code(), StatusCode::kCorrupt);
  EXPECT_EQ(s.message(), dir_.path() + "/s.mds: the object is 1000 bytes, index.json says 2000 (the "
                                       "remote changed since it was indexed?)");
  EXPECT_FALSE(FileExists(dst));
  ASSERT_TRUE(loop_.Run(store->GetToFile("s.mds", dst, 1000)).ok());
  EXPECT_EQ(*ReadFile(dst), PatternBytes(1000));
}

// The tag's text at its widest and narrowest (made on the stack since
// issue 38's million-file listings): every digit of both numbers.
TEST(LocalFileTag, IsTheInodeAndTheMtimeInNanosecondsAtAnyWidth) {
  struct stat st {};
  st.st_ino = UINT64_MAX;
  st.st_mtim.tv_sec = 18446744073;  // so that the nanoseconds take 20 digits
  st.st_mtim.tv_nsec = 709551615;
  EXPECT_EQ(LocalFileTag(st), "18446744073709551615-18446744073709551615");
  st.st_ino = 0;
  st.st_mtim.tv_sec = 0;
  st.st_mtim.tv_nsec = 7;
  EXPECT_EQ(LocalFileTag(st), "0-7");
  st.st_ino = 1234567;
  st.st_mtim.tv_sec = 1733500000;
  st.st_mtim.tv_nsec = 5;
  EXPECT_EQ(LocalFileTag(st), "1234567-1733500000000000005");
}

// Every digit count of both numbers, odd and even (the digits are written
// two at a time from the end), against to_string's decimal text.
TEST(LocalFileTag, WritesEveryDigitCountOfBothNumbers) {
  std::vector<uint64_t> values = {0, 9, 10, 99, 100, 101, 909};
  for (uint64_t p = 1000; p <= 1000000000000000000u; p *= 10) {
    values.insert(values.end(), {p - 1, p, p + 1, p + p / 2 + 7});
  }
  values.insert(values.end(), {10000000000000000000u, UINT64_MAX - 1, UINT64_MAX});
  for (const uint64_t v : values) {
    struct stat st {};
    st.st_ino = v;
    st.st_mtim.tv_sec = static_cast<time_t>(v / 1000000000u);
    st.st_mtim.tv_nsec = static_cast<long>(v % 1000000000u);
    EXPECT_EQ(LocalFileTag(st), std::to_string(v) + "-" + std::to_string(v)) << v;
    st.st_ino = v / 7;
    EXPECT_EQ(LocalFileTag(st), std::to_string(v / 7) + "-" + std::to_string(v)) << v;
  }
}

TEST_F(FileStoreTest, ListGivesEachFileItsInodeAndMtimeAsEtag) {
  auto store = Open(dir_.path());
  ASSERT_TRUE(loop_.Run(store->Put("a.parquet", "0123456789")).ok());
  auto first = loop_.Run(store->List(""));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_EQ(first->size(), 1u);
  struct stat st {};
  ASSERT_EQ(::stat((dir_.path() + "/a.parquet").c_str(), &st), 0);
  EXPECT_EQ((*first)[0].etag, std::to_string(st.st_ino) + "-" +
                                  std::to_string(uint64_t(st.st_mtim.tv_sec) * 1000000000u +
                                                 uint64_t(st.st_mtim.tv_nsec)));
  EXPECT_EQ((*first)[0].etag, LocalFileTag(st));
  // Replaced by another file of the same size (Put renames a new file into
  // place): a new inode, so a new etag.
  ASSERT_TRUE(loop_.Run(store->Put("a.parquet", "9876543210")).ok());
  auto second = loop_.Run(store->List(""));
  ASSERT_TRUE(second.ok());
  ASSERT_EQ(second->size(), 1u);
  EXPECT_EQ((*second)[0].size, 10u);
  EXPECT_NE((*second)[0].etag, (*first)[0].etag);
}

// A read of the version listed (its LocalFileTag) gets its bytes; once the
// file is replaced (a new inode), the read is the one "changed since it
// was listed" error, naming both tags, and reads nothing.
TEST_F(FileStoreTest, ReadOfTheListedVersionFailsOnceTheFileIsReplaced) {
  auto store = Open(dir_.path());
  ASSERT_TRUE(loop_.Run(store->Put("a.parquet", "0123456789")).ok());
  auto listed = loop_.Run(store->List(""));
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  const std::string etag = (*listed)[0].etag;
  auto head = loop_.Run(store->Head("a.parquet"));
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(head->etag, etag);
  auto same = loop_.Run(store->GetRangeOnlyOfVersion("a.parquet", 2, 5, etag));
  ASSERT_TRUE(same.ok()) << same.status().ToString();
  EXPECT_EQ(*same, "23456");
  ASSERT_TRUE(loop_.Run(store->Put("a.parquet", "9876543210")).ok());
  struct stat st {};
  ASSERT_EQ(::stat((dir_.path() + "/a.parquet").c_str(), &st), 0);
  auto changed = loop_.Run(store->GetRangeOnlyOfVersion("a.parquet", 2, 5, etag));
  EXPECT_EQ(changed.status().code(), StatusCode::kCorrupt);
  EXPECT_EQ(changed.status().message(),
            dir_.path() + "/a.parquet: changed since it was listed (ETag " + LocalFileTag(st) +
                ", listed " + etag + "); bytes 2..7 not read");
}

// A ranged read that names the file's size (a dataset's index gives it)
// reads the exact bytes when the file has it, with or without its tag;
// another size is the one "the remote changed" error, naming the path and
// both sizes, and reads nothing.
TEST_F(FileStoreTest, RangeOfAnExpectedSizeFailsWhenTheFileHasAnother) {
  auto store = Open(dir_.path());
  ASSERT_TRUE(loop_.Run(store->Put("shard.mds", "0123456789")).ok());
  auto listed = loop_.Run(store->List(""));
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  auto right = loop_.Run(store->GetRangeOnlyOfVersion("shard.mds", 2, 5, ObjectVersion("", 10)));
  ASSERT_TRUE(right.ok()) << right.status().ToString();
  EXPECT_EQ(*right, "23456");
  auto tagged = loop_.Run(
      store->GetRangeOnlyOfVersion("shard.mds", 2, 5, ObjectVersion((*listed)[0].etag, 10)));
  ASSERT_TRUE(tagged.ok()) << tagged.status().ToString();
  EXPECT_EQ(*tagged, "23456");
  std::string into(5, '.');
  auto right_into =
      loop_.Run(store->GetRangeOnlyInto("shard.mds", 2, 5, ObjectVersion("", 10), into.data()));
  ASSERT_TRUE(right_into.ok()) << right_into.status().ToString();
  EXPECT_EQ(*right_into, 5u);
  EXPECT_EQ(into, "23456");

  const std::string error = dir_.path() + "/shard.mds: the object is 10 bytes, index.json says "
                                          "9 (the remote changed since it was indexed?)";
  auto wrong = loop_.Run(store->GetRangeOnlyOfVersion("shard.mds", 2, 5, ObjectVersion("", 9)));
  EXPECT_EQ(wrong.status().code(), StatusCode::kCorrupt);
  EXPECT_EQ(wrong.status().message(), error);
  std::string untouched(5, '.');
  auto wrong_into = loop_.Run(
      store->GetRangeOnlyInto("shard.mds", 2, 5, ObjectVersion("", 9), untouched.data()));
  EXPECT_EQ(wrong_into.status().code(), StatusCode::kCorrupt);
  EXPECT_EQ(wrong_into.status().message(), error);
  EXPECT_EQ(untouched, ".....");
}

// ReadFileStoreRange (a read with no store or loop made) answers as the
// store's GetRangeOnlyOfVersion does: the same bytes and stated version, or
// the same error, for every case its checks tell apart.
TEST_F(FileStoreTest, ReadFileStoreRangeAnswersAsTheStoresVersionedRead) {
  auto store = Open(dir_.path());
  ASSERT_TRUE(loop_.Run(store->Put("a.parquet", "0123456789")).ok());
  ASSERT_TRUE(loop_.Run(store->Put("sub/b.parquet", "abcdef")).ok());
  ASSERT_EQ(::mkdir((dir_.path() + "/folder").c_str(), 0755), 0);
  auto listed = loop_.Run(store->List(""));
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  const std::string etag = (*listed)[0].etag;
  struct Case {
    std::string key;
    uint64_t offset, length;
    std::string etag;
    uint64_t size;
  };
  const std::vector<Case> cases = {
      {"a.parquet", 2, 5, "", 0},          {"a.parquet", 2, 5, etag, 10},
      {"a.parquet", 0, 100, "", 0},        {"a.parquet", 10, 4, "", 0},
      {"a.parquet", 11, 1, "", 0},         {"a.parquet", 2, 5, "", 9},
      {"a.parquet", 2, 5, "1-2", 0},       {"sub/b.parquet", 1, 3, "", 6},
      {"missing.parquet", 0, 4, "", 0},    {"folder", 0, 4, "", 0},
      {"../a.parquet", 0, 4, "", 0},       {"", 0, 4, "", 0}};
  const auto text = [](const Result<std::string>& r, const ObjectStated& stated) {
    const std::string size = stated.size ? std::to_string(*stated.size) : "none";
    return r.ok() ? "ok " + *r + " stated " + size + " " + stated.etag : r.status().ToString();
  };
  size_t oks = 0;
  for (const std::string& root : {dir_.path(), "file://" + dir_.path()}) {
    auto rooted = Open(root);
    const LocalRangeReader reader(root);
    for (const Case& c : cases) {
      ObjectStated by_store, by_read;
      ObjectVersion version(c.etag, c.size);
      version.stated = &by_store;
      const std::string want =
          text(loop_.Run(rooted->GetRangeOnlyOfVersion(c.key, c.offset, c.length, version)),
               by_store);
      version.stated = &by_read;
      EXPECT_EQ(text(ReadFileStoreRange(root, c.key, c.offset, c.length, version), by_read),
                want)
          << root << " " << c.key << " " << c.offset << "+" << c.length;
      ObjectStated by_reader;
      version.stated = &by_reader;
      std::string into(c.length, '.');
      auto n = reader.ReadInto(c.key, c.offset, c.length, version, into.data());
      EXPECT_EQ(text(n.ok() ? Result<std::string>(into.substr(0, *n)) : n.status(), by_reader),
                want)
          << "LocalRangeReader " << root << " " << c.key << " " << c.offset << "+" << c.length;
      if (want.rfind("ok ", 0) == 0) ++oks;
    }
  }
  EXPECT_EQ(oks, 10u);  // five readable cases under each root
  EXPECT_EQ(ReadFileStoreRange("s3://b", "a.parquet", 0, 1, ObjectVersion()).status().ToString(),
            "invalid argument: 's3://b' is a store URL, not a local path");
  char byte = 0;
  EXPECT_EQ(LocalRangeReader("s3://b").ReadInto("a.parquet", 0, 1, {}, &byte).status().ToString(),
            "invalid argument: 's3://b' is a store URL, not a local path");
}

// A LocalRangeReader names each file relative to its folder, held open
// from its first read: a folder renamed since is still the one read (its
// errors still name the path it was opened by), and one that did not exist
// at the first read is read by whole paths.
TEST_F(FileStoreTest, ALocalRangeReaderReadsTheFolderItHeldOpenAtItsFirstRead) {
  const std::string ds = dir_.path() + "/ds", moved = dir_.path() + "/moved";
  auto store = Open(ds);
  ASSERT_TRUE(loop_.Run(store->Put("a.parquet", "0123456789")).ok());
  const LocalRangeReader held(ds), late(dir_.path() + "/late");
  std::string into(4, '.');
  EXPECT_EQ(late.ReadInto("a.parquet", 0, 4, {}, into.data()).status().ToString(),
            "not found: cannot open " + dir_.path() + "/late/a.parquet: No such file or directory");
  auto n = held.ReadInto("a.parquet", 2, 4, {}, into.data());
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(into, "2345");
  ASSERT_EQ(::rename(ds.c_str(), moved.c_str()), 0);
  n = held.ReadInto("a.parquet", 6, 4, {}, into.data());
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(into, "6789");
  EXPECT_EQ(held.ReadInto("b.parquet", 0, 4, {}, into.data()).status().ToString(),
            "not found: cannot open " + ds + "/b.parquet: No such file or directory");
  EXPECT_EQ(ReadFileStoreRange(ds, "a.parquet", 0, 4, {}).status().ToString(),
            "not found: cannot open " + ds + "/a.parquet: No such file or directory");
  // The folder made at the path the late reader names is read by path.
  ASSERT_EQ(::rename(moved.c_str(), (dir_.path() + "/late").c_str()), 0);
  n = late.ReadInto("a.parquet", 0, 4, {}, into.data());
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(into, "0123");
}

TEST_F(FileStoreTest, ListIsRecursiveSortedAndFiltersByPrefix) {
  auto store = Open(dir_.path() + "/ds");
  for (const char* key : {"b/2", "a", "b/1", "b/10/x", "bz", "c/d/e/f"}) {
    ASSERT_TRUE(loop_.Run(store->Put(key, key)).ok()) << key;
  }
  auto all = loop_.Run(store->List(""));
  ASSERT_TRUE(all.ok());
  std::vector<std::string> keys;
  for (const auto& info : *all) keys.push_back(info.key);
  EXPECT_EQ(keys, (std::vector<std::string>{"a", "b/1", "b/10/x", "b/2", "bz", "c/d/e/f"}));
  EXPECT_EQ((*all)[2].size, 6u);

  auto b = loop_.Run(store->List("b"));
  keys.clear();
  for (const auto& info : *b) keys.push_back(info.key);
  EXPECT_EQ(keys, (std::vector<std::string>{"b/1", "b/10/x", "b/2", "bz"}));

  auto b1 = loop_.Run(store->List("b/1"));
  keys.clear();
  for (const auto& info : *b1) keys.push_back(info.key);
  EXPECT_EQ(keys, (std::vector<std::string>{"b/1", "b/10/x"}));

  auto bdir = loop_.Run(store->List("b/"));
  EXPECT_EQ(bdir->size(), 3u);
  auto none = loop_.Run(store->List("zzz/"));
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  // A store whose folder does not exist lists nothing.
  auto missing = Open(dir_.path() + "/missing");
  EXPECT_TRUE(loop_.Run(missing->List(""))->empty());
}

// ListFileStoreNames: List's files and order, a regular file by its name
// alone (size 0, etag ""), a link stat'ed (its target's size and tag), a
// fifo left out; ReadTailInto then states each file's size and tag.
TEST_F(FileStoreTest, ListByNameLeavesRegularFilesUnstatedForTheirTailReadToState) {
  const std::string root = dir_.path() + "/ds";
  auto store = Open(root);
  for (const char* key : {"b/2", "a", "b/c/x"}) {
    ASSERT_TRUE(loop_.Run(store->Put(key, std::string("bytes of ") + key)).ok()) << key;
  }
  ASSERT_EQ(::symlink("a", (root + "/link").c_str()), 0);
  ASSERT_EQ(::mkfifo((root + "/pipe").c_str(), 0600), 0);
  auto listed = loop_.Run(store->List(""));
  ASSERT_TRUE(listed.ok());
  auto named = ListFileStoreNames(root, "");
  ASSERT_TRUE(named.ok()) << named.status().ToString();
  ASSERT_EQ(named->size(), listed->size());
  ASSERT_EQ(named->size(), 4u);
  const struct stat a = [&] {
    struct stat st;
    EXPECT_EQ(::stat((root + "/a").c_str(), &st), 0);
    return st;
  }();
  for (size_t i = 0; i < named->size(); ++i) {
    const ObjectInfo& n = (*named)[i];
    const ObjectInfo& l = (*listed)[i];
    EXPECT_EQ(n.key, l.key);
    if (n.key == "link") {
      EXPECT_EQ(n.size, uint64_t(a.st_size));
      EXPECT_EQ(n.etag, LocalFileTag(a));
      continue;
    }
    EXPECT_EQ(n.size, 0u) << n.key;
    EXPECT_EQ(n.etag, "") << n.key;
    ObjectStated stated;
    char tail[4];
    const LocalRangeReader reader(root);
    auto got = reader.ReadTailInto(n.key, sizeof(tail), &stated, tail);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    const std::string whole = std::string("bytes of ") + n.key;
    EXPECT_EQ(std::string(tail, *got), whole.substr(whole.size() - 4)) << n.key;
    EXPECT_EQ(stated.size.value_or(0), l.size) << n.key;
    EXPECT_EQ(stated.etag, l.etag) << n.key;
  }
  // Under a prefix, as List's.
  auto b = ListFileStoreNames(root, "b/");
  ASSERT_TRUE(b.ok());
  std::vector<std::string> keys;
  for (const auto& info : *b) keys.push_back(info.key);
  EXPECT_EQ(keys, (std::vector<std::string>{"b/2", "b/c/x"}));
}

TEST_F(FileStoreTest, RefusesKeysThatEscapeTheRoot) {
  auto store = Open(dir_.path());
  for (const char* key : {"", "/etc/passwd", "../x", "a/../../x", "a//b", "a/./b", "a/"}) {
    Status s = loop_.Run(store->Put(key, "x"));
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << key;
    EXPECT_EQ(loop_.Run(store->Head(key)).status().code(), StatusCode::kInvalidArgument) << key;
  }
  EXPECT_EQ(loop_.Run(store->List("../")).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(loop_.Run(store->List("/a")).status().code(), StatusCode::kInvalidArgument);
}

TEST(OpenStoreTest, DispatchAndUrlErrors) {
  EventLoop loop;
  auto url = FileUrlToPath("file:///tmp/a%20b/");
  ASSERT_TRUE(url.ok());
  EXPECT_EQ(*url, "/tmp/a b");
  EXPECT_EQ(*FileUrlToPath("file://localhost/x"), "/x");
  EXPECT_EQ(*FileUrlToPath("relative/dir"), "relative/dir");
  EXPECT_EQ(*FileUrlToPath("/"), "/");
  auto other_host = OpenStore("file://example.com/x", loop.executor());
  EXPECT_EQ(other_host.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(other_host.status().message().find("example.com"), std::string::npos);
  EXPECT_EQ(OpenStore("file:///a%zz", loop.executor()).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(OpenStore("", loop.executor()).status().code(), StatusCode::kInvalidArgument);
  auto unknown = OpenStore("ftp://host/x", loop.executor());
  EXPECT_EQ(unknown.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("'ftp'"), std::string::npos);
  // A path holding ':' is a path.
  EXPECT_TRUE(OpenStore("dir:with:colons", loop.executor()).ok());
}

// Whether a text is a file URL is StoreUrlScheme's one reading: any case of
// "file://" is one, a store URL is no local path, and a path holding ':' or
// "file:" without "//" is a path.
TEST(FileUrlToPathTest, TheSchemeIsTheStoresOneReading) {
  EXPECT_EQ(*FileUrlToPath("FILE:///data/x/"), "/data/x");
  EXPECT_EQ(*FileUrlToPath("File://localhost/a%20b"), "/a b");
  EXPECT_EQ(*FileUrlToPath("file:/data/x"), "file:/data/x");
  EXPECT_EQ(*FileUrlToPath("/data/a://b"), "/data/a://b");
  auto store = FileUrlToPath("s3://bucket/key");
  EXPECT_EQ(store.status().ToString(),
            "invalid argument: 's3://bucket/key' is a store URL, not a local path");
  EXPECT_EQ(FileUrlToPath("dbfs:/Volumes/x").status().ToString(),
            "invalid argument: 'dbfs:/Volumes/x' is a store URL, not a local path");
  EXPECT_EQ(FileUrlToPath("FILE://host/x").status().ToString(),
            "invalid argument: malformed file URL 'FILE://host/x': names host 'host' (only local "
            "paths: file:///path)");
}

// Downloads and uploads go through one temporary named by base/file.h's
// scheme: a rename onto a folder fails naming it, and leaves none behind.
TEST_F(FileStoreTest, TemporariesAreNamedByTheOneScheme) {
  auto store = Open(dir_.path() + "/r");
  ASSERT_TRUE(loop_.Run(store->Put("x.bin", "data")).ok());
  const std::string taken = dir_.path() + "/taken";
  ASSERT_TRUE(MakeDirs(taken + "/inside").ok());
  Status st = loop_.Run(store->GetToFile("x.bin", taken, std::nullopt));
  ASSERT_FALSE(st.ok());
  const std::string head = "cannot rename " + dir_.path() + "/";
  ASSERT_EQ(st.message().rfind(head, 0), 0u) << st.message();
  const std::string temp = st.message().substr(head.size(), st.message().find(" onto ") - head.size());
  EXPECT_EQ(temp.rfind(".taken.sluice-tmp.", 0), 0u) << temp;
  ASSERT_TRUE(ParseTempName(temp).has_value()) << temp;
  EXPECT_EQ(ParseTempName(temp)->owner, ThisProcessTempOwner());
  EXPECT_FALSE(FileExists(dir_.path() + "/" + temp));
  // Created 0666 masked by the umask.
  const mode_t old = ::umask(027);
  Status got = loop_.Run(store->GetToFile("x.bin", dir_.path() + "/y.bin", std::nullopt));
  ::umask(old);
  ASSERT_TRUE(got.ok()) << got.ToString();
  struct stat sb;
  ASSERT_EQ(::stat((dir_.path() + "/y.bin").c_str(), &sb), 0);
  EXPECT_EQ(sb.st_mode & 07777, 0640u);
}

}  // namespace
}  // namespace sluice
