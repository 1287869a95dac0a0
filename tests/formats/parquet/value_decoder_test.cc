// A page's values by encoding, on hand-made sections: dictionary indices
// (including the fuzzer's finding: an error naming a freed encoding name),
// RLE booleans, and the refusals.
#include "formats/parquet/value_decoder.h"

#include <gtest/gtest.h>

#include <string>

namespace sluice::parquet {
namespace {

LeafColumn Leaf(PhysicalType t) {
  LeafColumn l;
  l.physical_type = t;
  return l;
}

TEST(ValueDecoder, DictionaryIndices) {
  const LeafColumn leaf = Leaf(PhysicalType::kInt32);
  const std::string dict_bytes("\x07\x00\x00\x00\x09\x00\x00\x00", 8);
  Result<Dictionary> dict = DecodeDictionaryPage(dict_bytes, 2, leaf);
  ASSERT_TRUE(dict.ok());
  // bit width 1; an RLE run of 2 copies of 1; a bit-packed group of 8: 0,1,0,...
  const std::string section("\x01\x04\x01\x03\x02", 5);
  int32_t out[10] = {};
  ASSERT_TRUE(DecodeFixedValues(Encoding::kRleDictionary, section, 10, leaf, &*dict,
                                reinterpret_cast<uint8_t*>(out)).ok());
  EXPECT_EQ(out[0], 9);
  EXPECT_EQ(out[1], 9);
  EXPECT_EQ(out[2], 7);
  EXPECT_EQ(out[3], 9);
  EXPECT_EQ(out[4], 7);
  // Asking for more than the runs hold: the error names the encoding (the
  // fuzzer found it naming a temporary string that was already freed).
  EXPECT_EQ(DecodeFixedValues(Encoding::kPlainDictionary, section, 11, leaf, &*dict,
                              reinterpret_cast<uint8_t*>(out)).ToString().rfind(
                "corrupt: PLAIN_DICTIONARY at offset ", 0), 0u);
  const std::string past("\x01\x04\x01", 3);  // index 1 of a one-entry dictionary
  Result<Dictionary> one = DecodeDictionaryPage(dict_bytes.substr(0, 4), 1, leaf);
  EXPECT_EQ(DecodeFixedValues(Encoding::kRleDictionary, past, 2, leaf, &*one,
                              reinterpret_cast<uint8_t*>(out)).ToString(),
            "corrupt: RLE_DICTIONARY: value 0 is index 1 of a dictionary of 1");
  EXPECT_EQ(DecodeFixedValues(Encoding::kRleDictionary, past, 2, leaf, nullptr,
                              reinterpret_cast<uint8_t*>(out)).ToString(),
            "corrupt: RLE_DICTIONARY values without a dictionary page");
  EXPECT_EQ(DecodeDictionaryPage(dict_bytes, 3, leaf).status().code(), StatusCode::kCorrupt);
}

TEST(ValueDecoder, RleBooleansAndRefusals) {
  const LeafColumn b = Leaf(PhysicalType::kBoolean);
  // length 2, then an RLE run of 3 trues.
  const std::string section("\x02\x00\x00\x00\x06\x01", 6);
  uint8_t out[3] = {};
  ASSERT_TRUE(DecodeFixedValues(Encoding::kRle, section, 3, b, nullptr, out).ok());
  EXPECT_EQ(out[0] + out[1] + out[2], 3);
  float f[1];
  EXPECT_EQ(DecodeFixedValues(Encoding::kDeltaBinaryPacked, section, 1, Leaf(PhysicalType::kFloat),
                              nullptr, reinterpret_cast<uint8_t*>(f)).ToString(),
            "unimplemented: encoding DELTA_BINARY_PACKED of a FLOAT column is not supported");
  std::vector<std::unique_ptr<std::string>> owned;
  std::string_view v[1];
  EXPECT_EQ(DecodeBinaryValues(Encoding::kByteStreamSplit, section, 1, nullptr, 100, &owned, v).ToString(),
            "unimplemented: encoding BYTE_STREAM_SPLIT of a BYTE_ARRAY column is not supported");
}

}  // namespace
}  // namespace sluice::parquet
