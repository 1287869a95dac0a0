// OpenRemoteSource: which sources a stream's remote opens, and what fails
// at open rather than at the first download.
#include "engine/dataset/remote_source.h"

#include <gtest/gtest.h>

#include "base/file.h"
#include "tests/stores/common/node_servers.h"
#include "tests/stores/http/test_servers.h"

namespace sluice {
namespace {

TEST(RemoteSourceTest, AnUnknownSchemeFailsAtOpen) {
  Result<std::unique_ptr<RemoteSource>> r = OpenRemoteSource("nosuch://bucket/ds?token=t");
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(),
            "unknown store URL scheme 'nosuch' in 'nosuch://bucket/ds' (known: file, s3, oci, gs, "
            "azure, azure-dl, http, https, dbfs, hf, or a local path)");
}

TEST(RemoteSourceTest, APathWithSchemeLikeTextInsideIsAFolder) {
  Result<std::unique_ptr<RemoteSource>> r = OpenRemoteSource("/data/a://b");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE((*r)->RetriesItself());  // a folder copy, not a store
  EXPECT_EQ((*r)->Describe(), "/data/a://b");
}

TEST(RemoteSourceTest, KnownSchemesOpenWithoutTouchingTheStore) {
  // Credentials and the URL's shape are checked by the fetching process.
  Result<std::unique_ptr<RemoteSource>> r = OpenRemoteSource("s3://bucket/ds");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE((*r)->RetriesItself());
}

// A Parquet row group's piece is read in parts of the source's PartSize
// (StreamShards::ReadPiece): the part size the stream's store was opened
// with, not the default's.
TEST(RemoteSourceTest, PartSizeIsTheOneTheSourceWasOpenedWith) {
  StoreOptions options;
  options.part_size = uint64_t{3} << 20;
  Result<std::unique_ptr<RemoteSource>> r = OpenRemoteSource("s3://bucket/ds", options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)->PartSize(), uint64_t{3} << 20);
  Result<std::unique_ptr<RemoteSource>> plain = OpenRemoteSource("s3://bucket/ds");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ((*plain)->PartSize(), StoreOptions{}.part_size);
  options.part_size = 0;  // never parts of no bytes
  Result<std::unique_ptr<RemoteSource>> zero = OpenRemoteSource("s3://bucket/ds", options);
  ASSERT_TRUE(zero.ok());
  EXPECT_EQ((*zero)->PartSize(), 1u);
}

// A single pass's shard (FetchToMemory) from nginx in ranged parts of
// `part_size`: the exact bytes, the GETs each a range of it; a shorter or
// longer object is kCorrupt naming the object and both sizes, from the
// first part's answer.
TEST(RemoteSourceTest, FetchToMemoryReadsAShardInRangedParts) {
  testing::TempDir dir;
  auto nginx = testing::NginxServer::Start(dir.path());
  if (nginx == nullptr) GTEST_SKIP() << "nginx did not start (is it installed?)";
  testing::ScopedEnv env(testing::CleanStoreEnv());
  const std::string data = testing::PatternBytes(5 << 20, 42);
  ASSERT_TRUE(MakeDirs(nginx->www() + "/ds").ok());
  ASSERT_TRUE(WriteFileAtomic(nginx->www() + "/ds/shard.00000.mds", data).ok());
  StoreOptions options;
  options.local_concurrency = 0;  // nginx here answers as if local
  const std::string root = "http://127.0.0.1:" + std::to_string(nginx->http_port()) + "/ds";
  auto source = OpenRemoteSource(root, options);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  auto got = (*source)->FetchToMemory("shard.00000.mds", data.size(), 1 << 20);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(got->view() == data);
  // 5 MiB + 1 in parts of 1 MiB at least: six GETs with a Range each.
  const std::string log = nginx->AccessLog();
  size_t gets = 0;
  for (size_t at = log.find(" GET /ds/shard.00000.mds "); at != std::string::npos;
       at = log.find(" GET /ds/shard.00000.mds ", at + 1)) {
    ++gets;
    const size_t eol = log.find('\n', at);
    EXPECT_NE(log.substr(at, eol - at).find(" 206 bytes="), std::string::npos) << log;
  }
  EXPECT_EQ(gets, 6u) << log;

  // Each part asks for the index's size: the first answer stating another
  // fails the read, before any of its bytes is passed on (whichever part
  // answers first names itself: only the rest of the text is exact).
  const std::string shard_url = root + "/shard.00000.mds";
  auto shorter = (*source)->FetchToMemory("shard.00000.mds", data.size() + 10, 1 << 20);
  ASSERT_FALSE(shorter.ok());
  EXPECT_EQ(shorter.status().code(), StatusCode::kCorrupt);
  EXPECT_EQ(shorter.status().message().rfind("downloading " + shard_url + ": part ", 0), 0u)
      << shorter.status().ToString();
  EXPECT_NE(shorter.status().message().find(
                shard_url + ": the object is 5242880 bytes, index.json says 5242890 "
                            "(the remote changed since it was indexed?)"),
            std::string::npos)
      << shorter.status().ToString();
  auto longer = (*source)->FetchToMemory("shard.00000.mds", data.size() - 10, 1 << 20);
  ASSERT_FALSE(longer.ok());
  EXPECT_EQ(longer.status().code(), StatusCode::kCorrupt);
  EXPECT_NE(longer.status().message().find(
                shard_url + ": the object is 5242880 bytes, index.json says 5242870 "
                            "(the remote changed since it was indexed?)"),
            std::string::npos)
      << longer.status().ToString();
}

}  // namespace
}  // namespace sluice
