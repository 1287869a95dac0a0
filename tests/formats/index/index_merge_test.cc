// MergeIndexes: the merged index Mosaic's merge_index wrote over the
// part*/index.json files it merged, byte for byte, and the errors.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/file.h"
#include "formats/index/index.h"

namespace sluice {
namespace {

const std::string kMerged = std::string(SLUICE_TEST_DATA_DIR) + "/mosaic/mds/merged";

std::string ReadWhole(const std::string& path) {
  Result<std::string> r = ReadFile(path);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : std::string();
}

TEST(IndexMerge, MosaicsMergedIndexByteForByte) {
  const std::string part0 = ReadWhole(kMerged + "/part0/index.json");
  const std::string part2 = ReadWhole(kMerged + "/part2/index.json");
  const std::string part3 = ReadWhole(kMerged + "/part3/index.json");
  Result<std::string> merged = MergeIndexes({{part0, "part0/index.json", "part0"},
                                             {part2, "part2/index.json", "part2"},
                                             {part3, "part3/index.json", "part3"}});
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  EXPECT_EQ(*merged, ReadWhole(kMerged + "/index.json"));
}

TEST(IndexMerge, PrefixesAsOsPathJoin) {
  const std::string part3 = ReadWhole(kMerged + "/part3/index.json");
  Result<std::string> bare = MergeIndexes({{part3, "a", ""}});
  ASSERT_TRUE(bare.ok());
  EXPECT_NE(bare->find("\"basename\": \"shard.00000.mds\""), std::string::npos) << *bare;
  Result<std::string> slash = MergeIndexes({{part3, "a", "p/"}});
  ASSERT_TRUE(slash.ok());
  EXPECT_NE(slash->find("\"basename\": \"p/shard.00000.mds\""), std::string::npos) << *slash;
  Result<std::string> none = MergeIndexes({});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, R"({"version": 2, "shards": []})");
}

TEST(IndexMerge, ErrorsNameThePart) {
  const std::string part3 = ReadWhole(kMerged + "/part3/index.json");
  Result<std::string> up = MergeIndexes({{part3, "s3://b/x/index.json", "/abs"}});
  ASSERT_FALSE(up.ok());
  EXPECT_EQ(up.status().ToString(),
            "invalid argument: s3://b/x/index.json: shard 0: folder name '/abs' makes an unsafe "
            "basename '/abs/shard.00000.mds'");
  Result<std::string> bad = MergeIndexes({{part3, "one", "p"}, {"{", "two/index.json", "q"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kCorrupt);
  EXPECT_EQ(bad.status().message().rfind("two/index.json: malformed JSON: ", 0), 0u)
      << bad.status().message();
}

}  // namespace
}  // namespace sluice
