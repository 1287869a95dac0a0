// sluice_index_shards / sluice_index_merge: index.json read and merged by
// the engine through libsluice.so.
#include "sluice.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace {

const std::string kMerged = std::string(SLUICE_TEST_DATA_DIR) + "/mosaic/mds/merged";

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

const uint8_t* U8(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

TEST(CApiIndex, ShardsAsTheEngineWritesThem) {
  const std::string text = Read(kMerged + "/part3/index.json");
  char* json = nullptr;
  uint64_t size = 0;
  ASSERT_EQ(sluice_index_shards(U8(text), text.size(), "part3/index.json", &json, &size), SLUICE_OK)
      << sluice_last_error();
  const std::string got(json, size);
  sluice_free(json);
  // The one entry of part3, as Mosaic's MDSWriter wrote it (sorted keys).
  const size_t open = text.find("[{"), close = text.rfind("}]");
  ASSERT_NE(open, std::string::npos);
  EXPECT_EQ(got, text.substr(open, close + 2 - open));
}

TEST(CApiIndex, ErrorsNameTheSourceAndField) {
  char* json = nullptr;
  const std::string empty;
  EXPECT_EQ(sluice_index_shards(U8(empty), 0, "/d/index.json", &json, nullptr), SLUICE_ECORRUPT);
  EXPECT_EQ(json, nullptr);
  EXPECT_EQ(std::string(sluice_last_error()).rfind("corrupt: /d/index.json: malformed JSON: ", 0), 0u)
      << sluice_last_error();
  const std::string no_samples =
      R"({"version": 2, "shards": [{"format": "mds", "version": 2, "column_names": [], )"
      R"("column_encodings": [], "column_sizes": [], "compression": null, "hashes": [], )"
      R"("size_limit": null, "raw_data": {"basename": "a.mds", "bytes": 1, "hashes": {}}, )"
      R"("zip_data": null}]})";
  EXPECT_EQ(sluice_index_shards(U8(no_samples), no_samples.size(), "x", &json, nullptr),
            SLUICE_ECORRUPT);
  EXPECT_STREQ(sluice_last_error(), "corrupt: x: shard 0: field 'samples': missing");
  EXPECT_EQ(sluice_index_shards(nullptr, 0, "x", nullptr, nullptr), SLUICE_EINVAL);
}

TEST(CApiIndex, MergeIsMosaicsMergedIndex) {
  const std::string parts[] = {Read(kMerged + "/part0/index.json"),
                               Read(kMerged + "/part2/index.json"),
                               Read(kMerged + "/part3/index.json")};
  const uint8_t* texts[] = {U8(parts[0]), U8(parts[1]), U8(parts[2])};
  const uint64_t sizes[] = {parts[0].size(), parts[1].size(), parts[2].size()};
  const char* sources[] = {"part0/index.json", "part2/index.json", "part3/index.json"};
  const char* prefixes[] = {"part0", "part2", "part3"};
  char* out = nullptr;
  uint64_t size = 0;
  ASSERT_EQ(sluice_index_merge(texts, sizes, sources, prefixes, 3, &out, &size), SLUICE_OK)
      << sluice_last_error();
  EXPECT_EQ(std::string(out, size), Read(kMerged + "/index.json"));
  sluice_free(out);

  const char* unsafe[] = {"..", "part2", "part3"};
  EXPECT_EQ(sluice_index_merge(texts, sizes, sources, unsafe, 3, &out, &size), SLUICE_EINVAL);
  EXPECT_EQ(out, nullptr);
  EXPECT_STREQ(sluice_last_error(),
               "invalid argument: part0/index.json: shard 0: folder name '..' makes an unsafe "
               "basename '../shard.00000.mds'");
  EXPECT_EQ(sluice_index_merge(texts, sizes, sources, nullptr, 3, &out, &size), SLUICE_EINVAL);
}

}  // namespace
