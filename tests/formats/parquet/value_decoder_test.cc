// A page's values by encoding, on hand-made sections: dictionary indices
// (including the fuzzer's finding: an error naming a freed encoding name),
// RLE booleans, and the refusals.
#include "formats/parquet/value_decoder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

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

// The dictionary's 4- and 8-byte values are gathered four at a time
// (value_decoder.cc, GatherFixed): every count from 1 to 24 (the four-value
// step's remainders), asked for in one call and in calls of 1, 3 and 5 at a
// time (DictionaryFixedValues::Next), each value exactly the dictionary's
// entry at its index.
template <class T>
void ExpectGathered(PhysicalType type) {
  SCOPED_TRACE(sizeof(T));
  const LeafColumn leaf = Leaf(type);
  const std::vector<T> entries = {T(1000001), T(-2), T(33), T(0x7fff0004), T(-5), T(6), T(7)};
  std::string dict_bytes(entries.size() * sizeof(T), '\0');
  std::memcpy(dict_bytes.data(), entries.data(), dict_bytes.size());
  Result<Dictionary> dict = DecodeDictionaryPage(dict_bytes, entries.size(), leaf);
  ASSERT_TRUE(dict.ok());
  // Bit width 3, a bit-packed run of three groups of 8 (header 3 << 1 | 1).
  std::vector<uint32_t> idx;
  for (uint32_t i = 0; i < 24; ++i) idx.push_back((i * 5 + i / 7) % 7);
  std::string section = {'\x03', '\x07'};
  uint64_t bits = 0;
  int held = 0;
  for (uint32_t v : idx) {
    bits |= uint64_t{v} << held;
    held += 3;
    for (; held >= 8; held -= 8, bits >>= 8) section += static_cast<char>(bits & 0xff);
  }
  for (size_t n = 1; n <= idx.size(); ++n) {
    std::vector<T> want;
    for (size_t i = 0; i < n; ++i) want.push_back(entries[idx[i]]);
    std::vector<T> got(n);
    ASSERT_TRUE(DecodeFixedValues(Encoding::kRleDictionary, section, n, leaf, &*dict,
                                  reinterpret_cast<uint8_t*>(got.data())).ok());
    EXPECT_EQ(got, want) << n << " values in one call";
    for (size_t step : {1, 3, 5}) {
      Result<DictionaryFixedValues> values =
          DictionaryFixedValues::Create(Encoding::kRleDictionary, section, leaf, &*dict);
      ASSERT_TRUE(values.ok());
      SlotArray<uint32_t> scratch;
      std::vector<T> stepped(n);
      for (size_t at = 0; at < n; at += step) {
        const size_t k = std::min(step, n - at);
        ASSERT_TRUE(values->Next(k, reinterpret_cast<uint8_t*>(stepped.data() + at), &scratch).ok());
      }
      EXPECT_EQ(stepped, want) << n << " values, " << step << " a call";
    }
  }
}

TEST(ValueDecoder, DictionaryGathersEveryCount) {
  ExpectGathered<int32_t>(PhysicalType::kInt32);
  ExpectGathered<int64_t>(PhysicalType::kInt64);
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
