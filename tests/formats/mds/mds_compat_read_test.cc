// Every MDS compat dataset reads to exactly what its expected.jsonl says,
// sample by sample and field by field.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>

#include "base/bytes.h"
#include "base/file.h"
#include "formats/mds/column_decoder.h"
#include "formats/mds/mds_shard_reader.h"
#include "tests/formats/mds/compat_util.h"
#include "tests/formats/mds/shard_bytes.h"

namespace sluice {
namespace {

using testing::Arr;
using testing::At;
using testing::Get;
using testing::Int;
using testing::Str;

uint64_t Bits(double d) {
  uint64_t b;
  std::memcpy(&b, &d, sizeof b);
  return b;
}

// A Python float repr compared with a decoded double: same bits, or both NaN.
void ExpectDoubleRepr(const std::string& repr, double actual, const std::string& where) {
  const double expected = std::strtod(repr.c_str(), nullptr);
  if (std::isnan(expected)) {
    EXPECT_TRUE(std::isnan(actual)) << where << ": expected nan, got " << actual;
  } else {
    EXPECT_EQ(Bits(expected), Bits(actual)) << where << ": expected " << repr << ", got " << actual;
  }
}

std::string SortedJson(const JsonValue& v) {
  auto s = DumpPyJson(v, /*sort_keys=*/true);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? *s : "";
}

void ExpectImage(const JsonValue& image, std::string_view stored, const std::string& where) {
  auto pil = DecodePilImage(stored, where);
  ASSERT_TRUE(pil.ok()) << pil.status().ToString();
  EXPECT_EQ(pil->width, Int(At(image, "width"))) << where;
  EXPECT_EQ(pil->height, Int(At(image, "height"))) << where;
  EXPECT_EQ(pil->mode, Str(At(image, "mode"))) << where;
  EXPECT_EQ(HexEncode(pil->pixels), Str(At(image, "pixels_hex"))) << where;
}

void ExpectNdArray(const ColumnEncoding& enc, const JsonValue& f, std::string_view stored,
                   const std::string& where) {
  auto nd = DecodeNdArray(enc, stored);
  ASSERT_TRUE(nd.ok()) << nd.status().ToString();
  EXPECT_EQ(NdDtypeName(nd->dtype), Str(At(f, "dtype"))) << where;
  std::vector<uint64_t> shape;
  for (const auto& d : Arr(At(f, "shape"))) shape.push_back(static_cast<uint64_t>(Int(d)));
  EXPECT_EQ(nd->shape, shape) << where;
  const JsonValue* values = Get(f, "values");
  const JsonValue* reprs = Get(f, "values_repr");
  const JsonValue* head = Get(f, "values_head");
  if (head != nullptr) {
    EXPECT_GT(nd->element_count(), 4096u) << where;
    values = head;
  }
  if (values != nullptr) {
    const auto& list = Arr(*values);
    if (head == nullptr) {
      EXPECT_EQ(list.size(), nd->element_count()) << where;
    }
    for (size_t i = 0; i < list.size() && i < nd->element_count(); ++i) {
      const JsonValue& v = list[i];
      if (const auto* big = std::get_if<JsonValue::BigInt>(&v.v)) {
        EXPECT_EQ(std::to_string(NdElementAsUInt64(*nd, i)), big->digits) << where << "[" << i << "]";
      } else if (const auto* d = std::get_if<double>(&v.v)) {
        ExpectDoubleRepr(PyFloatRepr(*d), NdElementAsDouble(*nd, i), where);
      } else if (NdDtypeIsSigned(nd->dtype)) {
        EXPECT_EQ(NdElementAsInt64(*nd, i), Int(v)) << where << "[" << i << "]";
      } else {
        EXPECT_EQ(NdElementAsUInt64(*nd, i), static_cast<uint64_t>(Int(v))) << where << "[" << i << "]";
      }
    }
  } else {
    ASSERT_NE(reprs, nullptr) << where;
    const auto& list = Arr(*reprs);
    EXPECT_EQ(list.size(), nd->element_count()) << where;
    for (size_t i = 0; i < list.size() && i < nd->element_count(); ++i) {
      ExpectDoubleRepr(Str(list[i]), NdElementAsDouble(*nd, i), where + "[" + std::to_string(i) + "]");
    }
  }
}

void ExpectField(const ColumnEncoding& enc, const JsonValue& f, std::string_view stored,
                 const std::string& where) {
  EXPECT_EQ(Str(At(f, "encoding")), enc.name) << where;
  EXPECT_EQ(HexEncode(stored), Str(At(f, "raw_hex"))) << where;
  switch (enc.kind) {
    case EncodingKind::kInt: case EncodingKind::kInt8: case EncodingKind::kInt16:
    case EncodingKind::kInt32: case EncodingKind::kInt64: {
      auto v = DecodeInt64(enc, stored);
      ASSERT_TRUE(v.ok()) << v.status().ToString();
      EXPECT_EQ(*v, Int(At(f, "value"))) << where;
      break;
    }
    case EncodingKind::kUInt8: case EncodingKind::kUInt16:
    case EncodingKind::kUInt32: case EncodingKind::kUInt64: {
      auto v = DecodeUInt64(enc, stored);
      ASSERT_TRUE(v.ok()) << v.status().ToString();
      const JsonValue& e = At(f, "value");
      if (const auto* big = std::get_if<JsonValue::BigInt>(&e.v)) {
        EXPECT_EQ(std::to_string(*v), big->digits) << where;
      } else {
        EXPECT_EQ(*v, static_cast<uint64_t>(Int(e))) << where;
      }
      break;
    }
    case EncodingKind::kFloat16: case EncodingKind::kFloat32:
    case EncodingKind::kFloat64: case EncodingKind::kStrFloat: {
      auto v = DecodeDouble(enc, stored);
      ASSERT_TRUE(v.ok()) << v.status().ToString();
      ExpectDoubleRepr(Str(At(f, "value_repr")), *v, where);
      break;
    }
    case EncodingKind::kStr: {
      auto v = DecodeText(enc, stored);
      ASSERT_TRUE(v.ok()) << v.status().ToString();
      EXPECT_EQ(*v, Str(At(f, "value"))) << where;
      break;
    }
    case EncodingKind::kStrInt: case EncodingKind::kStrDecimal: {
      auto v = DecodeText(enc, stored);
      ASSERT_TRUE(v.ok()) << v.status().ToString();
      EXPECT_EQ(*v, Str(At(f, "value_str"))) << where;
      break;
    }
    case EncodingKind::kJson: {
      auto v = DecodeText(enc, stored);
      ASSERT_TRUE(v.ok()) << v.status().ToString();
      auto parsed = ParsePyJson(*v);
      ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
      EXPECT_EQ(SortedJson(*parsed), SortedJson(At(f, "value"))) << where;
      break;
    }
    case EncodingKind::kBytes: case EncodingKind::kPkl:
    case EncodingKind::kJpeg: case EncodingKind::kPng: {
      auto v = DecodeRawBytes(enc, stored);
      ASSERT_TRUE(v.ok()) << v.status().ToString();
      EXPECT_EQ(v->data(), stored.data()) << where << ": not zero-copy";
      EXPECT_EQ(v->size(), stored.size()) << where;
      break;
    }
    case EncodingKind::kPil:
      ExpectImage(At(f, "image"), stored, where);
      break;
    case EncodingKind::kJpegArray: case EncodingKind::kListJpeg:
    case EncodingKind::kListPil: case EncodingKind::kListPng: {
      auto items = DecodeList(enc, stored);
      ASSERT_TRUE(items.ok()) << items.status().ToString();
      const auto& expected = Arr(At(f, "items"));
      ASSERT_EQ(items->size(), expected.size()) << where;
      for (size_t i = 0; i < expected.size(); ++i) {
        const std::string w = where + " item " + std::to_string(i);
        EXPECT_EQ((*items)[i].offset, Int(At(expected[i], "offset"))) << w;
        EXPECT_EQ((*items)[i].length, Int(At(expected[i], "length"))) << w;
        EXPECT_EQ((*items)[i].bytes.data(), stored.data() + (*items)[i].offset) << w;
        if (enc.kind == EncodingKind::kListPil) ExpectImage(At(expected[i], "image"), (*items)[i].bytes, w);
      }
      break;
    }
    case EncodingKind::kNdarray:
      ExpectNdArray(enc, f, stored, where);
      break;
  }
}

// Reads every shard of `dataset` and checks every sample against
// expected.jsonl; returns the number of fields checked.
size_t CheckDataset(const std::string& dataset) {
  const auto expected = testing::LoadExpected(dataset);
  const auto shards = testing::LoadCompatShards(dataset);
  EXPECT_FALSE(shards.empty());
  size_t sample = 0, checked = 0;
  std::vector<std::string_view> fields;
  for (size_t s = 0; s < shards.size(); ++s) {
    const ShardEntry& e = shards[s].entry;
    auto bytes = testing::LoadShardBytes(dataset, e);
    EXPECT_TRUE(bytes.ok()) << bytes.status().ToString();
    if (!bytes.ok()) return checked;
    auto columns = MdsColumnsFromEntry(e, e.raw_data.basename);
    EXPECT_TRUE(columns.ok()) << columns.status().ToString();
    if (!columns.ok()) return checked;
    auto reader = MdsShardReader::Open(*bytes, e.raw_data.basename, *columns);
    EXPECT_TRUE(reader.ok()) << reader.status().ToString();
    if (!reader.ok()) return checked;
    EXPECT_EQ(reader->num_samples(), e.samples);
    for (uint32_t i = 0; i < reader->num_samples(); ++i, ++sample) {
      EXPECT_LT(sample, expected.size());
      if (sample >= expected.size()) return checked;
      const JsonValue& x = expected[sample];
      EXPECT_EQ(Int(At(x, "sample")), static_cast<int64_t>(sample));
      EXPECT_EQ(Int(At(x, "shard")), static_cast<int64_t>(s));
      EXPECT_EQ(Int(At(x, "index_in_shard")), static_cast<int64_t>(i));
      Status st = reader->ReadSample(i, &fields);
      EXPECT_TRUE(st.ok()) << st.ToString();
      if (!st.ok()) return checked;
      const JsonValue& xf = At(x, "fields");
      EXPECT_EQ(std::get<JsonValue::Object>(xf.v).size(), columns->size());
      for (size_t c = 0; c < columns->size(); ++c) {
        const ColumnEncoding& enc = (*columns)[c];
        const JsonValue* f = Get(xf, enc.column);
        EXPECT_NE(f, nullptr) << enc.column;
        if (f == nullptr) continue;
        ExpectField(enc, *f, fields[c],
                    dataset + " sample " + std::to_string(sample) + " column " + enc.column);
        ++checked;
      }
    }
  }
  EXPECT_EQ(sample, expected.size()) << dataset;
  return checked;
}

TEST(MdsCompatRead, AllEncodings) { EXPECT_EQ(CheckDataset("all_encodings"), 240u * 32); }
TEST(MdsCompatRead, HashedAllAlgos) { EXPECT_EQ(CheckDataset("hashed_all_algos"), 32u * 32); }
TEST(MdsCompatRead, SingleShardNoLimit) { EXPECT_EQ(CheckDataset("single_shard_no_limit"), 10u * 2); }
TEST(MdsCompatRead, FixedSizeOnly) { EXPECT_EQ(CheckDataset("fixed_size_only"), 100u * 4); }
TEST(MdsCompatRead, QuirkOversizedSamples) { EXPECT_EQ(CheckDataset("quirk_oversized_samples"), 5u * 1); }
TEST(MdsCompatRead, Merged) { EXPECT_EQ(CheckDataset("merged"), 106u * 3); }

TEST(MdsCompatRead, Compressed) {
  for (const char* d : {"compressed_zstd", "compressed_zstd_level19", "compressed_br",
                        "compressed_br_level5", "compressed_gz", "compressed_bz2",
                        "compressed_snappy", "compressed_zstd_hashed"}) {
    SCOPED_TRACE(d);
    EXPECT_EQ(CheckDataset(d), 32u * 32);
  }
}


}  // namespace
}  // namespace sluice
