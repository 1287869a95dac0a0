#include "engine/packing/token_decoder.h"

#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "formats/mds/column_encoder.h"

namespace sluice {
namespace {

std::vector<int64_t> TokensOfForTest(const TokenDecoder& d, std::string_view field) {
  std::vector<int64_t> out;
  Status st = d.Append(field.data(), field.size(), &out);
  EXPECT_TRUE(st.ok()) << st.message();
  return out;
}

TEST(PackTokenDecoder, MdsNdarrayOfAnyForm) {
  const int32_t values[] = {5, -1, 70000};
  const std::string_view data(reinterpret_cast<const char*>(values), sizeof(values));
  for (const char* name : {"ndarray", "ndarray:int32", "ndarray:int32:3"}) {
    auto enc = ParseColumnEncoding(name, "tokens");
    ASSERT_TRUE(enc.ok());
    auto stored = EncodeNdArray(*enc, NdDtype::kInt32, {3}, data);
    ASSERT_TRUE(stored.ok()) << stored.status().message();
    auto d = TokenDecoder::For("mds", name, "tokens", "int64");
    ASSERT_TRUE(d.ok()) << d.status().message();
    EXPECT_EQ(TokensOfForTest(*d, *stored), (std::vector<int64_t>{5, -1, 70000})) << name;
  }
}

TEST(PackTokenDecoder, BytesParquetListsAndJson) {
  const uint16_t u16[] = {1, 65535};
  const std::string_view two(reinterpret_cast<const char*>(u16), sizeof(u16));
  auto bytes = TokenDecoder::For("mds", "bytes", "tokens", "uint16");
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(TokensOfForTest(*bytes, two), (std::vector<int64_t>{1, 65535}));
  // Raw files' one column holds stored bytes as MDS bytes do.
  auto raw = TokenDecoder::For("raw", "bytes", "data", "uint16");
  ASSERT_TRUE(raw.ok());
  EXPECT_EQ(TokensOfForTest(*raw, two), (std::vector<int64_t>{1, 65535}));
  auto list = TokenDecoder::For("parquet", "list<uint16>", "tokens", "int64");
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(TokensOfForTest(*list, two), (std::vector<int64_t>{1, 65535}));
  auto json = TokenDecoder::For("json", "str", "tokens", "int64");
  ASSERT_TRUE(json.ok());
  EXPECT_EQ(TokensOfForTest(*json, "[3, -4, 5]\n"), (std::vector<int64_t>{3, -4, 5}));
  std::vector<int64_t> out;
  Status st = json->Append("[1, 2.5]", 8, &out);
  EXPECT_EQ(st.message(),
            "token packing: column 'tokens' (str) of format json: element 1 of a field is no "
            "integer (int64)");
  st = bytes->Append("abc", 3, &out);
  EXPECT_EQ(st.message(),
            "token packing: column 'tokens' (bytes) of format mds: a field of 3 bytes is no "
            "whole number of 2-byte ids");
}

TEST(PackTokenDecoder, RefusesColumnsOfNoTokenIds) {
  auto f = TokenDecoder::For("mds", "ndarray:float32", "emb", "int64");
  EXPECT_EQ(f.status().message(),
            "token packing: column 'emb' (ndarray:float32) of format mds holds floats, not "
            "token ids");
  auto s = TokenDecoder::For("mds", "str", "text", "int64");
  EXPECT_EQ(s.status().message(),
            "token packing: column 'text' (str) of format mds is no MDS ndarray of integers "
            "nor bytes");
  auto p = TokenDecoder::For("parquet", "list<str>", "t", "int64");
  EXPECT_EQ(p.status().message(),
            "token packing: column 't' (list<str>) of format parquet is no list of integers");
  auto c = TokenDecoder::For("csv", "str", "t", "int64");
  EXPECT_EQ(c.status().message(),
            "token packing: column 't' (str) of format csv cannot hold token ids (mds, raw, "
            "json or parquet only)");
}

}  // namespace
}  // namespace sluice
