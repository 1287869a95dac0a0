// The footer store's layout (parquet_footer_store.h): what is written is
// found again by path, with its size, etag and tail; and no damaged byte
// anywhere in the file is ever handed out as a file's data: the header's
// checksum, each record's checksum (over its path, etag and tail) and the
// sections' bounds catch it, as an error naming the store.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "base/file.h"
#include "engine/dataset/parquet_footer_store.h"
#include "tests/common/temp_dir.h"

namespace sluice {
namespace {

const std::vector<ListedFile> kStoreFiles = {
    {"b/two.parquet", 300, "etag-2"}, {"a.parquet", 100, "etag-1"}, {"c.parquet", 900}};
const std::vector<std::string> kStoreTails = {std::string(40, 'B') + "PAR1",
                                              std::string(12, 'A') + "PAR1", "CCCCPAR1"};

TEST(ParquetFooterStoreLayout, EveryFileIsFoundByPathWithItsSizeEtagAndTail) {
  auto store = ParquetFooterStore::FromBytes(
      SerializeParquetFooterStore("s3://b/t", "fp", kStoreFiles, kStoreTails), "store");
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ(store->source(), "s3://b/t");
  EXPECT_EQ(store->fingerprint(), "fp");
  ASSERT_EQ(store->size(), 3u);
  ASSERT_TRUE(store->CheckAll().ok());
  for (size_t i = 0; i < kStoreFiles.size(); ++i) {
    auto f = store->Find(kStoreFiles[i].path);
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    EXPECT_EQ(f->path, kStoreFiles[i].path);
    EXPECT_EQ(f->size, *kStoreFiles[i].size);
    EXPECT_EQ(f->etag, kStoreFiles[i].etag);
    EXPECT_EQ(f->tail, kStoreTails[i]);
  }
  for (const char* absent : {"", "a", "b.parquet", "d.parquet", "b/two.parquetx"}) {
    auto f = store->Find(absent);
    ASSERT_FALSE(f.ok()) << absent;
    EXPECT_EQ(f.status().ToString(),
              std::string("not found: store: holds no footer of ") + absent);
  }
}

// Find with a hint (the index's: a file's position in its listing) gives
// Find's answer whatever the hint: the record there when its path is the
// one asked for, else the search's (another file's record, past the end,
// a path the store does not hold).
TEST(ParquetFooterStoreLayout, FindWithAnyHintIsFindsAnswer) {
  auto store = ParquetFooterStore::FromBytes(
      SerializeParquetFooterStore("s3://b/t", "fp", kStoreFiles, kStoreTails), "store");
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  const auto text = [](const Result<FooterStoreFile>& f) {
    if (!f.ok()) return f.status().ToString();
    return std::string(f->path) + "|" + std::to_string(f->size) + "|" + std::string(f->etag) +
           "|" + std::string(f->tail);
  };
  size_t found_at_hint = 0;
  for (const char* path : {"a.parquet", "b/two.parquet", "c.parquet", "", "b.parquet", "d"}) {
    const std::string want = text(store->Find(path));
    for (size_t hint : {size_t{0}, size_t{1}, size_t{2}, size_t{3}, size_t{1000}, SIZE_MAX}) {
      EXPECT_EQ(text(store->Find(path, hint)), want) << path << " at " << hint;
    }
    if (store->Find(path).ok()) ++found_at_hint;
  }
  EXPECT_EQ(found_at_hint, 3u);
  // In path order, file i's record is the i-th.
  EXPECT_EQ(text(store->Find("a.parquet", 0)), "a.parquet|100|etag-1|" + kStoreTails[1]);
  EXPECT_EQ(text(store->Find("c.parquet", 2)), "c.parquet|900||" + kStoreTails[2]);
}

// The records are in path order whatever order the listing gives: a
// listing already in path order (as the stores list) and the same files
// in any other order make the same bytes.
TEST(ParquetFooterStoreLayout, AListingInPathOrderAndItsShufflesMakeTheSameStore) {
  const std::vector<ListedFile> sorted = {kStoreFiles[1], kStoreFiles[0], kStoreFiles[2]};
  const std::vector<std::string> sorted_tails = {kStoreTails[1], kStoreTails[0], kStoreTails[2]};
  const std::string want = SerializeParquetFooterStore("s", "fp", sorted, sorted_tails);
  EXPECT_EQ(SerializeParquetFooterStore("s", "fp", kStoreFiles, kStoreTails), want);
  const std::vector<ListedFile> last_two = {kStoreFiles[1], kStoreFiles[2], kStoreFiles[0]};
  EXPECT_EQ(SerializeParquetFooterStore("s", "fp", last_two,
                                        {kStoreTails[1], kStoreTails[2], kStoreTails[0]}),
            want);
  auto store = ParquetFooterStore::FromBytes(want, "store");
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_TRUE(store->CheckAll().ok());
}

TEST(ParquetFooterStoreLayout, NoDamagedOrTruncatedStoreHandsOutOtherBytes) {
  const std::string good = SerializeParquetFooterStore("src", "fp", kStoreFiles, kStoreTails);
  for (size_t at = 0; at < good.size(); ++at) {
    for (const bool truncate : {false, true}) {
      std::string bad = truncate ? good.substr(0, at) : good;
      if (!truncate) bad[at] ^= 0x20;
      auto store = ParquetFooterStore::FromBytes(bad, "store");
      if (!store.ok()) {
        EXPECT_EQ(store.status().code(), StatusCode::kCorrupt) << at;
        continue;
      }
      ASSERT_FALSE(truncate) << "a store cut at " << at << " was opened";
      // The padding between the text and the tails is the one byte range
      // no checksum covers, and nothing reads it.
      bool damaged_found = false;
      for (size_t i = 0; i < kStoreFiles.size(); ++i) {
        auto f = store->Find(kStoreFiles[i].path);
        if (!f.ok()) {
          damaged_found = true;
          continue;
        }
        EXPECT_EQ(f->tail, kStoreTails[i]) << at;
        EXPECT_EQ(f->etag, kStoreFiles[i].etag) << at;
        EXPECT_EQ(f->size, *kStoreFiles[i].size) << at;
      }
      EXPECT_EQ(store->CheckAll().ok(), !damaged_found) << at;
    }
  }
}

TEST(ParquetFooterStoreLayout, AStoreOfAnotherLayoutIsNotOne) {
  const std::string json = "{\"source\": \"src\", \"fingerprint\": \"fp\", \"files\": []}\n";
  const std::string good = SerializeParquetFooterStore("src", "fp", kStoreFiles, kStoreTails);
  std::string version_1 = good;
  version_1[8] = 1;
  const std::pair<std::string, std::string> cases[] = {
      {json, "corrupt: old: " + std::to_string(json.size()) +
                 " bytes, shorter than the 64-byte header of a footer store"},
      {"", "corrupt: old: 0 bytes, shorter than the 64-byte header of a footer store"},
      {std::string(64, '\0'), "corrupt: old: not a footer store"},
      {version_1, "corrupt: old: a footer store of layout 1, expected 2"}};
  for (const auto& [bytes, error] : cases) {
    auto store = ParquetFooterStore::FromBytes(bytes, "old");
    ASSERT_FALSE(store.ok());
    EXPECT_EQ(store.status().ToString(), error);
  }
}

// The maker's own store (OpenJustMade) checks its header and bounds, not
// its records' checksums, which the maker has just computed: a damaged
// tail is handed out by it as written, while Open (every other reader)
// and CheckAll refuse it.
TEST(ParquetFooterStoreLayout, AStoreJustMadeChecksNoRecordAgainButOpenAndCheckAllDo) {
  testing::TempDir dir("footer_store_just_made");
  const std::string path = ParquetFooterStorePath(dir.path());
  std::string bytes = SerializeParquetFooterStore("src", "fp", kStoreFiles, kStoreTails);
  // The tails come last, in path order: a.parquet's first byte.
  const size_t tails = kStoreTails[0].size() + kStoreTails[1].size() + kStoreTails[2].size();
  ASSERT_EQ(bytes[bytes.size() - tails], 'A');
  bytes[bytes.size() - tails] = 'a';
  ASSERT_TRUE(WriteFileAtomic(path, bytes).ok());
  const std::string damaged =
      "corrupt: " + path + ": the footer of a.parquet does not match its checksum";

  auto opened = ParquetFooterStore::Open(path);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  EXPECT_EQ(opened->Find("a.parquet").status().ToString(), damaged);
  EXPECT_EQ(opened->Find("a.parquet", 0).status().ToString(), damaged);

  auto made = ParquetFooterStore::OpenJustMade(path);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  for (size_t hint : {size_t{0}, size_t{2}}) {
    auto f = made->Find("a.parquet", hint);
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    EXPECT_EQ(f->tail, "a" + std::string(11, 'A') + "PAR1");
  }
  EXPECT_EQ(made->CheckAll().ToString(), damaged);

  // Its header is checked as Open checks it.
  bytes[sizeof(uint64_t) + 8] ^= 0x01;
  ASSERT_TRUE(WriteFileAtomic(path, bytes).ok());
  EXPECT_EQ(ParquetFooterStore::OpenJustMade(path).status().code(), StatusCode::kCorrupt);
}

// tests/data/binary_files/parquet_footers.bin was written by the code
// before base/binary_file.h (main at c9be08a): the layout on disk is
// unchanged, read and written to the byte.
TEST(ParquetFooterStoreLayout, AStoreWrittenBeforeTheSharedTagReadsAndWritesTheSameBytes) {
  const std::string old = *ReadFile(std::string(SLUICE_TEST_DATA_DIR) + "/binary_files/parquet_footers.bin");
  ASSERT_EQ(old.size(), 356u);
  EXPECT_EQ(SerializeParquetFooterStore("s3://b/t", "fp", kStoreFiles, kStoreTails), old);
  auto store = ParquetFooterStore::FromBytes(old, "old");
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_TRUE(store->CheckAll().ok());
  auto f = store->Find("b/two.parquet");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->tail, kStoreTails[0]);
}

}  // namespace
}  // namespace sluice
