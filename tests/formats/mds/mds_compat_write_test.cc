// Writing the compat datasets' samples again with the same settings gives
// Mosaic's files: uncompressed shards and index.json byte for byte;
// compressed shards decompress to Mosaic's raw bytes with its raw hashes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "base/bytes.h"
#include "base/file.h"
#include "formats/codec/compression.h"
#include "formats/codec/hashes.h"
#include "formats/mds/column_encoder.h"
#include "formats/mds/float16.h"
#include "formats/mds/mds_writer.h"
#include "tests/formats/mds/compat_util.h"
#include "tests/formats/mds/shard_bytes.h"
#include "tests/common/temp_dir.h"

namespace sluice {
namespace {

using testing::Arr;
using testing::At;
using testing::Get;
using testing::Int;
using testing::Str;

std::string Unhex(const std::string& hex) {
  std::string out;
  EXPECT_TRUE(HexDecode(hex, &out));
  return out;
}

// The samples of a dataset as each column's stored bytes (raw_hex), in
// global order.
std::vector<std::vector<std::string>> RawSamples(const std::vector<JsonValue>& expected,
                                                 const std::vector<std::string>& columns) {
  std::vector<std::vector<std::string>> out;
  for (const JsonValue& x : expected) {
    std::vector<std::string> fields;
    for (const std::string& c : columns) fields.push_back(Unhex(Str(At(At(At(x, "fields"), c), "raw_hex"))));
    out.push_back(std::move(fields));
  }
  return out;
}

ShardedWriterOptions OptionsOf(const ShardEntry& e) {
  ShardedWriterOptions o;
  o.compression = e.compression;
  o.hashes = e.hashes;
  o.size_limit = e.size_limit;
  return o;
}

std::vector<std::pair<std::string, std::string>> ColumnsOf(const ShardEntry& e) {
  std::vector<std::pair<std::string, std::string>> cols;
  // Reversed, so the writer's own sorting is exercised.
  for (size_t i = e.column_names.size(); i-- > 0;) cols.emplace_back(e.column_names[i], e.column_encodings[i]);
  return cols;
}

std::string ReadOrEmpty(const std::string& path) {
  auto r = ReadFile(path);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : "";
}

// Files in `dir` (names only, sorted).
std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.is_regular_file()) names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Compares what was written in `out` with the compat folder `dataset`.
void ExpectSameDataset(const std::string& dataset, const std::string& out) {
  const std::string ref = testing::MdsDataDir(dataset);
  const auto ref_shards = testing::LoadCompatShards(dataset);
  ASSERT_FALSE(ref_shards.empty());
  std::vector<std::string> ref_files = ListDir(ref);
  ref_files.erase(std::remove(ref_files.begin(), ref_files.end(), "expected.jsonl"), ref_files.end());
  EXPECT_EQ(ListDir(out), ref_files);
  const bool compressed = ref_shards[0].entry.compression.has_value();
  if (!compressed) {
    for (const std::string& f : ref_files) {
      EXPECT_TRUE(ReadOrEmpty(JoinPath(out, f)) == ReadOrEmpty(JoinPath(ref, f)))
          << dataset << ": " << f << " differs";
    }
    return;
  }
  // Compressed bytes depend on the library version: compare what they hold.
  auto index = ParseIndex(ReadOrEmpty(JoinPath(out, "index.json")), "index.json");
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  ASSERT_EQ(index->shards.size(), ref_shards.size());
  for (size_t s = 0; s < ref_shards.size(); ++s) {
    const ShardEntry& mine = index->shards[s];
    const ShardEntry& theirs = ref_shards[s].entry;
    EXPECT_EQ(mine.samples, theirs.samples);
    EXPECT_EQ(mine.compression, theirs.compression);
    EXPECT_EQ(mine.hashes, theirs.hashes);
    EXPECT_EQ(mine.raw_data.basename, theirs.raw_data.basename);
    EXPECT_EQ(mine.raw_data.bytes, theirs.raw_data.bytes);
    EXPECT_EQ(mine.raw_data.hashes, theirs.raw_data.hashes);
    ASSERT_TRUE(mine.zip_data.has_value());
    EXPECT_EQ(mine.zip_data->basename, theirs.zip_data->basename);
    const std::string packed = ReadOrEmpty(JoinPath(out, mine.zip_data->basename));
    EXPECT_EQ(packed.size(), mine.zip_data->bytes);
    for (const auto& [algo, hex] : mine.zip_data->hashes) {
      EXPECT_EQ(HashHex(algo, packed).value(), hex) << algo;
    }
    EXPECT_EQ(mine.zip_data->hashes.size(), theirs.zip_data->hashes.size());
    auto c = ParseCompression(*mine.compression);
    ASSERT_TRUE(c.ok());
    auto raw = Decompress(*c, packed, mine.raw_data.bytes, mine.zip_data->basename);
    ASSERT_TRUE(raw.ok()) << raw.status().ToString();
    auto ref_raw = testing::LoadShardBytes(dataset, theirs);
    ASSERT_TRUE(ref_raw.ok()) << ref_raw.status().ToString();
    EXPECT_TRUE(*raw == *ref_raw) << dataset << " shard " << s << " decompresses differently";
  }
}

// Writes `samples` (raw field bytes, bytes-passthrough path) with the
// settings of `dataset`'s index and compares.
void RewriteRaw(const std::string& dataset, const std::vector<std::vector<std::string>>& samples) {
  const auto shards = testing::LoadCompatShards(dataset);
  ASSERT_FALSE(shards.empty());
  const ShardEntry& e = shards[0].entry;
  testing::TempDir tmp;
  ASSERT_FALSE(tmp.path().empty());
  auto w = MdsWriter::Create(tmp.path(), ColumnsOf(e), OptionsOf(e));
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  std::vector<MdsValue> values;
  for (const auto& fields : samples) {
    values.clear();
    for (const std::string& f : fields) values.push_back(MdsBytes{f});
    Status st = (*w)->Write(values);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
  Status st = (*w)->Finish();
  ASSERT_TRUE(st.ok()) << st.ToString();
  ExpectSameDataset(dataset, tmp.path());
}

void RewriteRaw(const std::string& dataset) {
  const auto shards = testing::LoadCompatShards(dataset);
  ASSERT_FALSE(shards.empty());
  RewriteRaw(dataset, RawSamples(testing::LoadExpected(dataset), shards[0].entry.column_names));
}

TEST(MdsCompatWrite, AllEncodingsRaw) { RewriteRaw("all_encodings"); }
TEST(MdsCompatWrite, HashedAllAlgosRaw) { RewriteRaw("hashed_all_algos"); }
TEST(MdsCompatWrite, SingleShardNoLimitRaw) { RewriteRaw("single_shard_no_limit"); }
TEST(MdsCompatWrite, FixedSizeOnlyRaw) { RewriteRaw("fixed_size_only"); }
TEST(MdsCompatWrite, QuirkOversizedSamplesRaw) { RewriteRaw("quirk_oversized_samples"); }

TEST(MdsCompatWrite, CompressedRaw) {
  for (const char* d : {"compressed_zstd", "compressed_zstd_level19", "compressed_br",
                        "compressed_br_level5", "compressed_gz", "compressed_bz2",
                        "compressed_snappy", "compressed_zstd_hashed"}) {
    SCOPED_TRACE(d);
    RewriteRaw(d);
  }
}

// Each partition of merged/ was written by its own MDSWriter.
TEST(MdsCompatWrite, MergedPartitionsRaw) {
  const auto expected = testing::LoadExpected("merged");
  size_t next = 0;
  for (const char* part : {"merged/part0", "merged/part2", "merged/part3"}) {
    SCOPED_TRACE(part);
    const auto shards = testing::LoadCompatShards(part);
    ASSERT_FALSE(shards.empty());
    uint64_t n = 0;
    for (const auto& s : shards) n += s.entry.samples;
    ASSERT_LE(next + n, expected.size());
    std::vector<JsonValue> mine(expected.begin() + static_cast<long>(next),
                                expected.begin() + static_cast<long>(next + n));
    next += n;
    RewriteRaw(part, RawSamples(mine, shards[0].entry.column_names));
  }
  EXPECT_EQ(next, expected.size());
}

// ---- Typed values: the encoders reproduce every raw_hex they can express.

double ReprToDouble(const std::string& repr) { return std::strtod(repr.c_str(), nullptr); }

// The typed value of one expected field, or MdsBytes of its raw bytes when
// the field has no typed form here (json: expected.jsonl re-sorts keys).
// `keep` owns any bytes the value points to.
MdsValue TypedValue(const ColumnEncoding& enc, const JsonValue& f, std::vector<std::string>* keep) {
  keep->push_back(Unhex(Str(At(f, "raw_hex"))));
  const std::string& raw = keep->back();
  switch (enc.kind) {
    case EncodingKind::kInt: case EncodingKind::kInt8: case EncodingKind::kInt16:
    case EncodingKind::kInt32: case EncodingKind::kInt64:
      return Int(At(f, "value"));
    case EncodingKind::kUInt8: case EncodingKind::kUInt16: case EncodingKind::kUInt32:
    case EncodingKind::kUInt64: {
      const JsonValue& v = At(f, "value");
      if (const auto* big = std::get_if<JsonValue::BigInt>(&v.v)) {
        return static_cast<uint64_t>(std::strtoull(big->digits.c_str(), nullptr, 10));
      }
      return static_cast<uint64_t>(Int(v));
    }
    case EncodingKind::kFloat16: case EncodingKind::kFloat32: case EncodingKind::kFloat64:
    case EncodingKind::kStrFloat:
      return ReprToDouble(Str(At(f, "value_repr")));
    case EncodingKind::kStr:
      keep->push_back(Str(At(f, "value")));
      return MdsText{keep->back()};
    case EncodingKind::kStrInt: case EncodingKind::kStrDecimal:
      keep->push_back(Str(At(f, "value_str")));
      return MdsText{keep->back()};
    case EncodingKind::kPil: {
      const JsonValue& img = At(f, "image");
      keep->push_back(Str(At(img, "mode")));
      const std::string& mode = keep->back();
      keep->push_back(Unhex(Str(At(img, "pixels_hex"))));
      return MdsPilImage{static_cast<uint32_t>(Int(At(img, "width"))),
                         static_cast<uint32_t>(Int(At(img, "height"))), mode, keep->back()};
    }
    case EncodingKind::kListPil: {
      MdsImageList list;
      for (const JsonValue& item : Arr(At(f, "items"))) {
        const JsonValue& img = At(item, "image");
        auto one = EncodePilImage(static_cast<uint32_t>(Int(At(img, "width"))),
                                  static_cast<uint32_t>(Int(At(img, "height"))),
                                  Str(At(img, "mode")), Unhex(Str(At(img, "pixels_hex"))));
        EXPECT_TRUE(one.ok()) << one.status().ToString();
        keep->push_back(one.ok() ? *one : "");
        list.items.push_back(keep->back());
      }
      return list;
    }
    case EncodingKind::kListJpeg: case EncodingKind::kListPng: case EncodingKind::kJpegArray: {
      MdsImageList list;
      for (const JsonValue& item : Arr(At(f, "items"))) {
        list.items.push_back(std::string_view(raw).substr(static_cast<size_t>(Int(At(item, "offset"))),
                                                          static_cast<size_t>(Int(At(item, "length")))));
      }
      return list;
    }
    case EncodingKind::kNdarray: {
      MdsNdArray nd;
      nd.dtype = *NdDtypeFromName(Str(At(f, "dtype")));
      for (const auto& d : Arr(At(f, "shape"))) nd.shape.push_back(static_cast<uint64_t>(Int(d)));
      uint64_t count = 1;
      for (uint64_t d : nd.shape) count *= d;
      const uint64_t bytes = count * NdDtypeItemSize(nd.dtype);
      if (Get(f, "values_head") != nullptr) {
        // Only the head is listed: the data is the tail of raw_hex.
        nd.data = std::string_view(raw).substr(raw.size() - bytes);
        return nd;
      }
      std::string data;
      if (const JsonValue* reprs = Get(f, "values_repr")) {
        for (const auto& r : Arr(*reprs)) {
          const double d = ReprToDouble(Str(r));
          switch (nd.dtype) {
            case NdDtype::kFloat16: AppendLE<uint16_t>(data, DoubleToHalf(d)); break;
            case NdDtype::kFloat32: AppendLE<float>(data, static_cast<float>(d)); break;
            default: AppendLE<double>(data, d); break;
          }
        }
      } else {
        for (const auto& v : Arr(At(f, "values"))) {
          uint64_t bits;
          if (const auto* big = std::get_if<JsonValue::BigInt>(&v.v)) {
            bits = std::strtoull(big->digits.c_str(), nullptr, 10);
          } else {
            bits = static_cast<uint64_t>(Int(v));
          }
          std::string le;
          AppendLE<uint64_t>(le, bits);
          data.append(le, 0, NdDtypeItemSize(nd.dtype));
        }
      }
      keep->push_back(std::move(data));
      nd.data = keep->back();
      return nd;
    }
    default:  // bytes, pkl, jpeg, png: stored as given; json: see above
      return MdsBytes{raw};
  }
}

// Typed encodes of every field equal raw_hex, and writing the typed
// samples gives the same files as Mosaic.
void RewriteTyped(const std::string& dataset) {
  const auto shards = testing::LoadCompatShards(dataset);
  ASSERT_FALSE(shards.empty());
  const ShardEntry& e = shards[0].entry;
  testing::TempDir tmp;
  auto w = MdsWriter::Create(tmp.path(), ColumnsOf(e), OptionsOf(e));
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  size_t typed = 0;
  for (const JsonValue& x : testing::LoadExpected(dataset)) {
    std::vector<std::string> keep;
    keep.reserve(4096);  // views into `keep` must not move
    std::vector<MdsValue> values;
    for (const ColumnEncoding& enc : (*w)->columns()) {
      const JsonValue& f = At(At(x, "fields"), enc.column);
      values.push_back(TypedValue(enc, f, &keep));
      if (!std::holds_alternative<MdsBytes>(values.back())) {
        ++typed;
        auto bytes = EncodeMdsValue(enc, values.back());
        ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
        EXPECT_EQ(HexEncode(*bytes), Str(At(f, "raw_hex")))
            << dataset << " sample " << Int(At(x, "sample")) << " column " << enc.column;
      }
    }
    ASSERT_LT(keep.size(), 4096u);
    Status st = (*w)->Write(values);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
  EXPECT_GT(typed, 0u);
  ASSERT_TRUE((*w)->Finish().ok());
  ExpectSameDataset(dataset, tmp.path());
}

TEST(MdsCompatWrite, AllEncodingsTyped) { RewriteTyped("all_encodings"); }
TEST(MdsCompatWrite, FixedSizeOnlyTyped) { RewriteTyped("fixed_size_only"); }
TEST(MdsCompatWrite, SingleShardNoLimitTyped) { RewriteTyped("single_shard_no_limit"); }
TEST(MdsCompatWrite, CompressedZstdHashedTyped) { RewriteTyped("compressed_zstd_hashed"); }

}  // namespace
}  // namespace sluice
