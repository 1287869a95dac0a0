// Parquet files through the C ABI, as a C caller reads them: every fixture
// in tests/data/parquet opened with sluice_dataset_open (a file; Spark's
// folder), its columns and encodings, and every field of every row equal to
// its expected.json, scalars decoded with sluice_decode_int64 / _uint64 /
// _double; nulls as NULL data, empty values as non-NULL; errors as text.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "base/file.h"
#include "formats/json/py_json.h"
#include "sluice.h"
#include "tests/common/temp_dir.h"
#include "tests/formats/dataset/parquet_fixture_values.h"

namespace sluice {
namespace {

const std::string kDir = std::string(SLUICE_TEST_DATA_DIR) + "/parquet";

JsonValue ReadJson(const std::string& path) {
  Result<std::string> text = ReadFile(path);
  Result<JsonValue> v = ParsePyJson(text.ok() ? *text : "null");
  return v.ok() ? *v : JsonValue{};
}

const JsonValue::Array& ArrayMember(const JsonValue& v, std::string_view key) {
  return std::get<JsonValue::Array>(JsonMember(v, key)->v);
}

std::string_view View(sluice_bytes b) {
  return {reinterpret_cast<const char*>(b.data), static_cast<size_t>(b.size)};
}

bool Among(const std::string& e, std::initializer_list<const char*> names) {
  for (const char* n : names) {
    if (e == n) return true;
  }
  return false;
}

// A field as the fixtures spell it: MDS-named scalars through the C ABI's
// decoders, the rest by the encoding table (parquet_fixture_values.h).
std::string FieldText(const std::string& e, sluice_bytes field) {
  if (field.data == nullptr) return "null";
  if (Among(e, {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32"})) {
    int64_t v = 0;
    if (sluice_decode_int64(e.c_str(), field, &v) != SLUICE_OK) return sluice_last_error();
    return std::to_string(v);
  }
  if (e == "uint64") {
    uint64_t v = 0;
    if (sluice_decode_uint64(e.c_str(), field, &v) != SLUICE_OK) return sluice_last_error();
    return std::to_string(v);
  }
  if (Among(e, {"float16", "float32", "float64"})) {
    double v = 0;
    if (sluice_decode_double(e.c_str(), field, &v) != SLUICE_OK) return sluice_last_error();
    return testing::DumpForTest(JsonValue{PyFloatRepr(v)});
  }
  Result<JsonValue> v = testing::ParquetFieldAsExpected(e, View(field));
  return v.ok() ? testing::DumpForTest(*v) : v.status().ToString();
}

// A packed list's text with its mask (validity: 0 = null): null where
// masked (its value bytes must be zeros there), as the fixtures spell it.
std::string MaskedFieldText(const std::string& e, sluice_bytes field, sluice_bytes validity) {
  Result<JsonValue> v = testing::ParquetFieldAsExpected(
      e, std::string_view(reinterpret_cast<const char*>(field.data), field.size));
  if (!v.ok()) return v.status().ToString();
  auto* items = std::get_if<JsonValue::Array>(&v->v);
  if (items == nullptr || items->size() != validity.size) return "<mask does not fit>";
  const size_t width = field.size / validity.size;
  for (size_t i = 0; i < items->size(); ++i) {
    if (validity.data[i] != 0) continue;
    for (size_t b = 0; b < width; ++b) {
      if (field.data[i * width + b] != 0) return "<nonzero bytes under a null>";
    }
    (*items)[i] = JsonValue{};
  }
  return testing::DumpForTest(*v);
}

// The masks of the last get: column -> validity.
template <typename Handle, typename Masked>
std::vector<sluice_bytes> MasksOfLastGet(Handle* h, uint32_t count, uint32_t n, Masked masked) {
  std::vector<sluice_bytes> out(n, sluice_bytes{nullptr, 0});
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t column = UINT32_MAX;
    sluice_bytes validity{nullptr, 0};
    EXPECT_EQ(masked(h, i, &column, &validity), SLUICE_OK) << sluice_last_error();
    if (column < n) out[column] = validity;
  }
  return out;
}

// Every field of every row of fixture `rel` with sluice_dataset_get_masked,
// or (pieces) sluice_dataset_get_pieces, a field in pieces copied with
// sluice_dataset_copy_pieced.
void CheckEveryField(const std::string& rel, bool pieces) {
  const JsonValue e = ReadJson(kDir + "/" + rel);
  const std::string file = JsonStringMember(e, "file");
  sluice_dataset* ds = nullptr;
  ASSERT_EQ(sluice_dataset_open((kDir + "/" + file).c_str(), 0, &ds), SLUICE_OK) << sluice_last_error();
  EXPECT_STREQ(sluice_dataset_format(ds), "parquet");
  const auto& columns = ArrayMember(e, "columns");
  const uint32_t n = sluice_dataset_num_columns(ds);
  ASSERT_EQ(n, columns.size());
  std::vector<std::string> encodings;
  for (uint32_t c = 0; c < n; ++c) {
    EXPECT_EQ(sluice_dataset_column_name(ds, c), JsonStringMember(columns[c], "name"));
    encodings.push_back(sluice_dataset_column_encoding(ds, c));
    EXPECT_EQ(encodings.back(), testing::EncodingOfArrowType(JsonStringMember(columns[c], "arrow_type")));
  }
  const uint64_t rows = sluice_dataset_num_samples(ds);
  ASSERT_EQ(rows, static_cast<uint64_t>(std::get<int64_t>(JsonMember(e, "num_rows")->v)));
  std::vector<sluice_bytes> fields(n);
  std::vector<std::string> copies(n);
  int mismatches = 0;
  uint64_t in_pieces = 0;
  for (uint64_t row = 0; row < rows && mismatches < 5; ++row) {
    uint32_t num_masked = UINT32_MAX, num_pieced = UINT32_MAX;
    if (!pieces) {
      ASSERT_EQ(sluice_dataset_get_masked(ds, row, fields.data(), n, &num_masked), SLUICE_OK)
          << sluice_last_error();
    } else {
      std::vector<uint32_t> pieced_columns(n, UINT32_MAX);
      ASSERT_EQ(sluice_dataset_get_pieces(ds, row, fields.data(), n, &num_masked, &num_pieced,
                                          pieced_columns.data()),
                SLUICE_OK)
          << sluice_last_error();
      for (uint32_t i = 0; i < num_pieced; ++i) {
        // Its column first, then its size is the field's (whose data must
        // not be read).
        uint32_t column = UINT32_MAX, again = UINT32_MAX;
        ASSERT_EQ(sluice_dataset_copy_pieced(ds, i, &column, nullptr, 0), SLUICE_OK)
            << sluice_last_error();
        ASSERT_LT(column, n);
        ASSERT_NE(fields[column].data, nullptr);
        copies[column].assign(fields[column].size, '\0');
        ASSERT_EQ(sluice_dataset_copy_pieced(ds, i, &again, copies[column].data(),
                                             copies[column].size()),
                  SLUICE_OK)
            << sluice_last_error();
        EXPECT_EQ(again, column);
        EXPECT_EQ(pieced_columns[i], column);
        fields[column].data = reinterpret_cast<const uint8_t*>(copies[column].data());
        ++in_pieces;
      }
    }
    const std::vector<sluice_bytes> masks = MasksOfLastGet(
        ds, num_masked, n,
        [](sluice_dataset* h, uint32_t i, uint32_t* column, sluice_bytes* validity) {
          return sluice_dataset_masked(h, i, column, validity);
        });
    for (uint32_t c = 0; c < n; ++c) {
      const std::string got = masks[c].data != nullptr
                                  ? MaskedFieldText(encodings[c], fields[c], masks[c])
                                  : FieldText(encodings[c], fields[c]);
      const std::string want = testing::DumpForTest(ArrayMember(columns[c], "values")[row]);
      if (got != want) {
        ++mismatches;
        ADD_FAILURE() << file << " column " << encodings[c] << " " << c << " row " << row << ": got "
                      << got.substr(0, 300) << ", expected " << want.substr(0, 300);
      }
    }
  }
  // hf_image's JPEGs straddle snappy literals.
  if (pieces && rel.starts_with("hf_image")) {
    EXPECT_GT(in_pieces, 0u);
  }
  sluice_dataset_close(ds);
}

class CApiParquet : public ::testing::TestWithParam<std::string> {};

TEST_P(CApiParquet, EveryFieldOfEveryRow) { CheckEveryField(GetParam(), false); }

TEST_P(CApiParquet, EveryFieldOfEveryRowInPieces) { CheckEveryField(GetParam(), true); }

INSTANTIATE_TEST_SUITE_P(Parquet, CApiParquet, ::testing::ValuesIn(testing::ParquetFixtureNames()),
                         [](const ::testing::TestParamInfo<std::string>& i) {
                           return testing::ParquetFixtureTestName(i.param);
                         });

// The same rows streamed (sluice_stream_open) from a folder remote holding
// the file alone: each row group fetched as a piece into the cache and
// decoded from it (ShardEntry::piece), every field as expected.
class CApiParquetStream : public ::testing::TestWithParam<std::string> {};

TEST_P(CApiParquetStream, EveryFieldOfEveryRowThroughTheCache) {
  const JsonValue e = ReadJson(kDir + "/" + GetParam());
  const std::string file = JsonStringMember(e, "file");
  testing::TempDir remote, cache;
  const std::filesystem::path from = std::filesystem::path(kDir) / file;
  std::filesystem::copy_file(from, std::filesystem::path(remote.path()) / from.filename());
  const std::string config = "{\"remote\": \"" + remote.path() + "\", \"local\": \"" +
                             cache.path() + "\", \"download_retry\": 0}";
  sluice_stream* ds = nullptr;
  ASSERT_EQ(sluice_stream_open(config.c_str(), &ds), SLUICE_OK) << sluice_last_error();
  ASSERT_EQ(sluice_stream_read_masks(ds, 1), SLUICE_OK);
  EXPECT_STREQ(sluice_stream_stream_format(ds, 0), "parquet");
  const auto& columns = ArrayMember(e, "columns");
  const uint32_t n = sluice_stream_num_columns(ds);
  ASSERT_EQ(n, columns.size());
  std::vector<std::string> encodings;
  for (uint32_t c = 0; c < n; ++c) encodings.push_back(sluice_stream_column_encoding(ds, c));
  const uint64_t rows = sluice_stream_num_samples(ds);
  ASSERT_EQ(rows, static_cast<uint64_t>(std::get<int64_t>(JsonMember(e, "num_rows")->v)));
  std::vector<sluice_bytes> fields(n);
  int mismatches = 0;
  for (uint64_t row = 0; row < rows && mismatches < 5; ++row) {
    ASSERT_EQ(sluice_stream_get(ds, row, fields.data(), n), SLUICE_OK) << sluice_last_error();
    const std::vector<sluice_bytes> masks = MasksOfLastGet(
        ds, sluice_stream_num_masked(ds), n,
        [](sluice_stream* h, uint32_t i, uint32_t* column, sluice_bytes* validity) {
          uint32_t sample = UINT32_MAX;
          const sluice_status st = sluice_stream_masked(h, i, &sample, column, validity);
          EXPECT_EQ(sample, 0u);  // a get's one sample
          return st;
        });
    for (uint32_t c = 0; c < n; ++c) {
      const std::string got = masks[c].data != nullptr
                                  ? MaskedFieldText(encodings[c], fields[c], masks[c])
                                  : FieldText(encodings[c], fields[c]);
      const std::string want = testing::DumpForTest(ArrayMember(columns[c], "values")[row]);
      if (got != want) {
        ++mismatches;
        ADD_FAILURE() << file << " column " << c << " row " << row << ": got "
                      << got.substr(0, 300) << ", expected " << want.substr(0, 300);
      }
    }
  }
  sluice_stream_close(ds);
  EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(cache.path()) / ".parquet_row_groups"));
}

INSTANTIATE_TEST_SUITE_P(Parquet, CApiParquetStream, ::testing::ValuesIn(testing::ParquetFixtureNames()),
                         [](const ::testing::TestParamInfo<std::string>& i) {
                           return testing::ParquetFixtureTestName(i.param);
                         });

// pa26_nulls_v1: nulls are NULL data; empty strings are not.
TEST(CApiParquetTest, NullIsNullDataEmptyIsNot) {
  const JsonValue e = ReadJson(kDir + "/pa26_nulls_v1.expected.json");
  sluice_dataset* ds = nullptr;
  ASSERT_EQ(sluice_dataset_open((kDir + "/pa26_nulls_v1.parquet").c_str(), 0, &ds), SLUICE_OK)
      << sluice_last_error();
  const auto& columns = ArrayMember(e, "columns");
  const uint32_t n = sluice_dataset_num_columns(ds);
  std::vector<sluice_bytes> fields(n);
  size_t nulls = 0, empties = 0;
  for (uint64_t row = 0; row < sluice_dataset_num_samples(ds); ++row) {
    ASSERT_EQ(sluice_dataset_get(ds, row, fields.data(), n), SLUICE_OK) << sluice_last_error();
    for (uint32_t c = 0; c < n; ++c) {
      const JsonValue& want = ArrayMember(columns[c], "values")[row];
      const bool is_null = std::holds_alternative<std::nullptr_t>(want.v);
      EXPECT_EQ(fields[c].data == nullptr, is_null) << c << " " << row;
      if (is_null) {
        EXPECT_EQ(fields[c].size, 0u);
        ++nulls;
      }
      const auto* text = std::get_if<std::string>(&want.v);
      if (text != nullptr && text->empty()) {
        EXPECT_NE(fields[c].data, nullptr);
        EXPECT_EQ(fields[c].size, 0u);
        ++empties;
      }
    }
  }
  EXPECT_GT(nulls, 0u);
  sluice_bytes raw{};
  ASSERT_EQ(sluice_dataset_get_raw(ds, 0, &raw), SLUICE_OK);
  EXPECT_EQ(raw.size, 0u);
  sluice_dataset_close(ds);
}

// sluice_dataset_get_pieces on hf_image: a JPEG that straddles snappy
// literals is copied by sluice_dataset_copy_pieced alone, to the bytes
// sluice_dataset_get gives; a short buffer, an index past the pieced
// fields, another handle and a NULL count are refused with their errors;
// any sluice_dataset_get* call ends the pieces.
TEST(CApiParquetTest, PiecedFieldsAreCopiedByTheCallerAlone) {
  sluice_dataset* ds = nullptr;
  sluice_dataset* other = nullptr;
  ASSERT_EQ(sluice_dataset_open((kDir + "/hf_image.parquet").c_str(), 0, &ds), SLUICE_OK);
  ASSERT_EQ(sluice_dataset_open((kDir + "/hf_image.parquet").c_str(), 0, &other), SLUICE_OK);
  const uint32_t n = sluice_dataset_num_columns(ds);
  std::vector<sluice_bytes> fields(n), lasting(n);
  uint32_t num_pieced = 0, column = UINT32_MAX;
  uint64_t row = 0;
  for (; row < sluice_dataset_num_samples(ds); ++row) {
    ASSERT_EQ(sluice_dataset_get_pieces(ds, row, fields.data(), n, nullptr, &num_pieced, nullptr), SLUICE_OK)
        << sluice_last_error();
    if (num_pieced > 0) break;
  }
  ASSERT_EQ(num_pieced, 1u);
  uint32_t image = 0;
  while (image < n && std::string(sluice_dataset_column_name(ds, image)) != "image") ++image;
  ASSERT_LT(image, n);
  std::string copy(fields[image].size, '\0');
  EXPECT_EQ(sluice_dataset_copy_pieced(ds, 0, &column, copy.data(), copy.size() - 1), SLUICE_EINVAL);
  EXPECT_EQ(std::string(sluice_last_error()),
            "invalid argument: sluice_dataset_copy_pieced: capacity " +
                std::to_string(copy.size() - 1) +
                " is smaller than the value (" + std::to_string(copy.size()) + " bytes)");
  EXPECT_EQ(sluice_dataset_copy_pieced(ds, 1, &column, copy.data(), copy.size()), SLUICE_ERANGE);
  EXPECT_EQ(std::string(sluice_last_error()),
            "out of range: sluice_dataset_copy_pieced: 1 is past the last sample's 1 fields in "
            "pieces");
  EXPECT_EQ(sluice_dataset_copy_pieced(other, 0, &column, copy.data(), copy.size()), SLUICE_EINVAL);
  EXPECT_EQ(std::string(sluice_last_error()),
            "invalid argument: sluice_dataset_copy_pieced: ds is not the handle this thread's "
            "last sluice_dataset_get* read");
  EXPECT_EQ(column, UINT32_MAX);
  EXPECT_EQ(sluice_dataset_copy_pieced(ds, 0, &column, nullptr, 1), SLUICE_EINVAL);
  EXPECT_EQ(sluice_dataset_copy_pieced(ds, 0, &column, nullptr, copy.size()), SLUICE_EINVAL);
  EXPECT_EQ(column, UINT32_MAX);
  ASSERT_EQ(sluice_dataset_copy_pieced(ds, 0, &column, copy.data(), copy.size()), SLUICE_OK)
      << sluice_last_error();
  EXPECT_EQ(column, image);
  EXPECT_EQ(sluice_dataset_get_pieces(ds, row, fields.data(), n, nullptr, nullptr, nullptr), SLUICE_EINVAL);
  // The other handle's lasting read: the same bytes, copied into its memory.
  ASSERT_EQ(sluice_dataset_get(other, row, lasting.data(), n), SLUICE_OK);
  EXPECT_EQ(copy, std::string(View(lasting[image])));
  EXPECT_EQ(sluice_dataset_copy_pieced(ds, 0, &column, copy.data(), copy.size()), SLUICE_EINVAL);
  // Once this handle's lasting read copied it into place: no pieces.
  ASSERT_EQ(sluice_dataset_get(ds, row, lasting.data(), n), SLUICE_OK);
  EXPECT_EQ(sluice_dataset_copy_pieced(ds, 0, &column, copy.data(), copy.size()), SLUICE_ERANGE);
  ASSERT_EQ(sluice_dataset_get_pieces(ds, row, fields.data(), n, nullptr, &num_pieced, nullptr), SLUICE_OK);
  EXPECT_EQ(num_pieced, 0u);
  EXPECT_EQ(View(fields[image]), copy);
  sluice_dataset_close(other);
  sluice_dataset_close(ds);
}

// A stream batch over hf_image with read_pieces on: the JPEGs that straddle
// snappy literals are listed by sluice_stream_num_pieced / copy_pieced
// (batch sample, column) and copied by it, and by sluice_stream_batch_column,
// to the exact bytes of the lasting read (sluice_dataset_get); off, none is
// listed and batch_column gives the same bytes. A short buffer and an index
// past them are refused with their errors; release ends the pieces.
TEST(CApiParquetTest, StreamBatchPiecesAreCopiedOnceToTheExactBytes) {
  sluice_dataset* lasting = nullptr;
  ASSERT_EQ(sluice_dataset_open((kDir + "/hf_image.parquet").c_str(), 0, &lasting), SLUICE_OK);
  const uint32_t n = sluice_dataset_num_columns(lasting);
  std::vector<std::vector<std::string>> want(sluice_dataset_num_samples(lasting));
  std::vector<sluice_bytes> one(n);
  for (uint64_t row = 0; row < want.size(); ++row) {
    ASSERT_EQ(sluice_dataset_get(lasting, row, one.data(), n), SLUICE_OK) << sluice_last_error();
    for (uint32_t c = 0; c < n; ++c) want[row].emplace_back(View(one[c]));
  }
  sluice_dataset_close(lasting);
  testing::TempDir folder;
  std::filesystem::copy_file(kDir + "/hf_image.parquet",
                             std::filesystem::path(folder.path()) / "hf_image.parquet");
  const std::string config = "{\"local\": \"" + folder.path() + "\", \"shuffle\": false}";
  sluice_stream* s = nullptr;
  ASSERT_EQ(sluice_stream_open(config.c_str(), &s), SLUICE_OK) << sluice_last_error();
  ASSERT_EQ(sluice_stream_num_columns(s), n);
  EXPECT_EQ(sluice_stream_read_pieces(s, 2), SLUICE_EINVAL);
  EXPECT_EQ(std::string(sluice_last_error()),
            "invalid argument: sluice_stream_read_pieces: on is 2, not 0 or 1");
  const uint32_t kMax = 3;
  std::vector<int64_t> ids(kMax);
  std::vector<sluice_bytes> fields(kMax * n);
  std::vector<uint64_t> offsets(kMax + 1);
  for (const int pieces : {1, 0}) {
    ASSERT_EQ(sluice_stream_read_pieces(s, pieces), SLUICE_OK);
    ASSERT_EQ(sluice_stream_iter_begin(s, 0, 0, 0, 1), SLUICE_OK) << sluice_last_error();
    size_t rows = 0, pieced = 0;
    bool refused = false;
    while (true) {
      uint32_t count = 0;
      ASSERT_EQ(sluice_stream_next_batch(s, kMax, ids.data(), fields.data(), &count), SLUICE_OK)
          << sluice_last_error();
      if (count == 0) break;
      const uint32_t num = sluice_stream_num_pieced(s);
      if (!pieces) {
        EXPECT_EQ(num, 0u);
      }
      for (uint32_t i = 0; i < num; ++i) {
        uint32_t k = UINT32_MAX, c = UINT32_MAX;
        ASSERT_EQ(sluice_stream_copy_pieced(s, i, &k, &c, nullptr, 0), SLUICE_OK);
        ASSERT_LT(k, count);
        ASSERT_LT(c, n);
        EXPECT_STREQ(sluice_stream_column_name(s, c), "image");
        std::string copy(fields[k * n + c].size, '\0');
        if (!refused) {
          refused = true;
          EXPECT_EQ(sluice_stream_copy_pieced(s, i, &k, &c, copy.data(), copy.size() - 1),
                    SLUICE_EINVAL);
          EXPECT_EQ(std::string(sluice_last_error()),
                    "invalid argument: sluice_stream_copy_pieced: capacity " +
                        std::to_string(copy.size() - 1) + " is smaller than the value of column " +
                        std::to_string(c) + " of batch sample " + std::to_string(k) + " (" +
                        std::to_string(copy.size()) + " bytes)");
          EXPECT_EQ(sluice_stream_copy_pieced(s, num, &k, &c, copy.data(), copy.size()),
                    SLUICE_ERANGE);
          EXPECT_EQ(std::string(sluice_last_error()),
                    "out of range: sluice_stream_copy_pieced: " + std::to_string(num) +
                        " is past the last batch's " + std::to_string(num) + " fields in pieces");
        }
        ASSERT_EQ(sluice_stream_copy_pieced(s, i, &k, &c, copy.data(), copy.size()), SLUICE_OK)
            << sluice_last_error();
        EXPECT_EQ(copy, want[static_cast<size_t>(ids[k])][c]) << "row " << ids[k];
        ++pieced;
      }
      for (uint32_t c = 0; c < n; ++c) {
        uint64_t needed = 0;
        const sluice_status sized = sluice_stream_batch_column(s, c, 0, nullptr, 0, offsets.data(), &needed);
        ASSERT_EQ(sized, needed == 0 ? SLUICE_OK : SLUICE_ERANGE);
        std::string column(needed, '\0');
        ASSERT_EQ(sluice_stream_batch_column(s, c, 0, reinterpret_cast<uint8_t*>(column.data()),
                                             column.size(), offsets.data(), &needed),
                  SLUICE_OK)
            << sluice_last_error();
        for (uint32_t k = 0; k < count; ++k) {
          EXPECT_EQ(column.substr(offsets[k], offsets[k + 1] - offsets[k]),
                    want[static_cast<size_t>(ids[k])][c])
              << "row " << ids[k] << " column " << c << " pieces " << pieces;
        }
      }
      rows += count;
    }
    EXPECT_EQ(rows, want.size());
    if (pieces) {
      EXPECT_GT(pieced, 0u);
    }
  }
  // The pieces end with the batch's views.
  ASSERT_EQ(sluice_stream_read_pieces(s, 1), SLUICE_OK);
  ASSERT_EQ(sluice_stream_iter_begin(s, 0, 0, 0, 1), SLUICE_OK);
  uint32_t count = 0;
  do {
    ASSERT_EQ(sluice_stream_next_batch(s, kMax, ids.data(), fields.data(), &count), SLUICE_OK);
  } while (count > 0 && sluice_stream_num_pieced(s) == 0);
  ASSERT_GT(sluice_stream_num_pieced(s), 0u);
  sluice_stream_release(s);
  EXPECT_EQ(sluice_stream_num_pieced(s), 0u);
  uint32_t k = 0, c = 0;
  EXPECT_EQ(sluice_stream_copy_pieced(s, 0, &k, &c, nullptr, 0), SLUICE_ERANGE);
  sluice_stream_close(s);
}

TEST(CApiParquetTest, FormatInfo) {
  int form = -1, has_meta = -1;
  ASSERT_EQ(sluice_format_info("parquet", &form, &has_meta), SLUICE_OK) << sluice_last_error();
  EXPECT_EQ(form, SLUICE_FIELD_PARQUET_VALUE);
  EXPECT_EQ(has_meta, 0);
}

TEST(CApiParquetTest, SparkFolderAndErrors) {
  sluice_dataset* ds = nullptr;
  ASSERT_EQ(sluice_dataset_open((kDir + "/spark_out").c_str(), 0, &ds), SLUICE_OK) << sluice_last_error();
  EXPECT_STREQ(sluice_dataset_format(ds), "parquet");
  EXPECT_EQ(sluice_dataset_num_shards(ds), 3u);
  sluice_dataset_close(ds);

  ds = nullptr;
  EXPECT_EQ(sluice_dataset_open((kDir + "/bad_magic_tail.parquet").c_str(), 0, &ds), SLUICE_ECORRUPT);
  EXPECT_EQ(ds, nullptr);
  EXPECT_NE(std::string(sluice_last_error()).find("bad_magic_tail.parquet: not a Parquet file: it ends in "
                                                  "\"50415230\" (hex), not \"PAR1\""),
            std::string::npos)
      << sluice_last_error();

  ASSERT_EQ(sluice_dataset_open((kDir + "/bad_page_gzip_corrupt.parquet").c_str(), 0, &ds), SLUICE_OK);
  std::vector<sluice_bytes> fields(sluice_dataset_num_columns(ds));
  EXPECT_EQ(sluice_dataset_get(ds, 0, fields.data(), static_cast<uint32_t>(fields.size())), SLUICE_ECORRUPT);
  EXPECT_NE(std::string(sluice_last_error()).find("bad_page_gzip_corrupt.parquet: row group 0 column "
                                                  "\"text\": page at offset 1501: gz data is corrupt"),
            std::string::npos)
      << sluice_last_error();
  sluice_dataset_close(ds);
}

// sluice_dataset_get refuses a row holding a null element, word for word;
// sluice_dataset_get_masked reads it, its masks beside it, and counts none
// for a row without one; out-of-range masks are SLUICE_ERANGE.
TEST(CApiParquetTest, NullElementsAreRefusedUnlessMasksAreAskedFor) {
  sluice_dataset* ds = nullptr;
  ASSERT_EQ(sluice_dataset_open((kDir + "/pa26_null_elements_v1.parquet").c_str(), 0, &ds),
            SLUICE_OK)
      << sluice_last_error();
  const uint32_t n = sluice_dataset_num_columns(ds);
  std::vector<sluice_bytes> fields(n);
  ASSERT_EQ(sluice_dataset_get(ds, 2, fields.data(), n), SLUICE_EUNIMPLEMENTED);
  EXPECT_EQ(std::string(sluice_last_error()),
            "unimplemented: pa26_null_elements_v1.parquet: row group 0 column \"int32_list\" row 2: "
            "the list holds a null element, which list<int32> (packed values) cannot hold");
  uint32_t num_masked = 0;
  ASSERT_EQ(sluice_dataset_get_masked(ds, 2, fields.data(), n, &num_masked), SLUICE_OK)
      << sluice_last_error();
  // Row 2: these columns' lists hold a null element (pyarrow's reading).
  std::vector<std::string> columns;
  for (uint32_t i = 0; i < num_masked; ++i) {
    uint32_t column = 0;
    sluice_bytes validity{nullptr, 0};
    ASSERT_EQ(sluice_dataset_masked(ds, i, &column, &validity), SLUICE_OK);
    columns.push_back(sluice_dataset_column_name(ds, column));
    if (columns.back() == "int32_list") {
      EXPECT_EQ(std::string(reinterpret_cast<const char*>(validity.data), validity.size),
                std::string("\x01\x00\x01\x00\x01", 5));
    }
  }
  EXPECT_EQ(columns, (std::vector<std::string>{"int32_list", "int64_list", "float64_list",
                                               "bool_list", "ts_us_utc_list", "embedding"}));
  uint32_t column = 0;
  sluice_bytes validity{nullptr, 0};
  EXPECT_EQ(sluice_dataset_masked(ds, num_masked, &column, &validity), SLUICE_ERANGE);
  EXPECT_EQ(sluice_dataset_get_masked(ds, 2, fields.data(), n, nullptr), SLUICE_EINVAL);
  sluice_dataset_close(ds);
  // A row without a null element has no mask.
  sluice_dataset* text = nullptr;
  ASSERT_EQ(sluice_dataset_open((kDir + "/hf_text.parquet").c_str(), 0, &text), SLUICE_OK);
  std::vector<sluice_bytes> text_fields(sluice_dataset_num_columns(text));
  num_masked = UINT32_MAX;
  ASSERT_EQ(sluice_dataset_get_masked(text, 0, text_fields.data(), text_fields.size(), &num_masked),
            SLUICE_OK);
  EXPECT_EQ(num_masked, 0u);
  EXPECT_EQ(sluice_dataset_masked(text, 0, &column, &validity), SLUICE_ERANGE);
  sluice_dataset_close(text);
}

// A stream's iteration with masks on: each batch's masked fields name the
// sample within the batch and the column whose list holds a null element
// (pyarrow's reading), with one validity byte per element; off, the first
// such batch is refused.
TEST(CApiParquetTest, StreamBatchesCarryTheirMasks) {
  const JsonValue e = ReadJson(kDir + "/pa26_null_elements_v2_small_pages.expected.json");
  const auto& columns = ArrayMember(e, "columns");
  testing::TempDir remote, cache;
  std::filesystem::copy_file(kDir + "/pa26_null_elements_v2_small_pages.parquet",
                             std::filesystem::path(remote.path()) / "part-0.parquet");
  const std::string config = "{\"remote\": \"" + remote.path() + "\", \"local\": \"" +
                             cache.path() + "\", \"download_retry\": 0, \"shuffle\": false}";
  sluice_stream* s = nullptr;
  ASSERT_EQ(sluice_stream_open(config.c_str(), &s), SLUICE_OK) << sluice_last_error();
  const uint32_t n = sluice_stream_num_columns(s);
  const uint32_t kMax = 7;
  std::vector<int64_t> ids(kMax);
  std::vector<sluice_bytes> fields(kMax * n);
  uint32_t count = 0;
  ASSERT_EQ(sluice_stream_iter_begin(s, 0, 0, 0, 1), SLUICE_OK) << sluice_last_error();
  EXPECT_EQ(sluice_stream_next_batch(s, kMax, ids.data(), fields.data(), &count),
            SLUICE_EUNIMPLEMENTED);
  EXPECT_NE(std::string(sluice_last_error()).find("the list holds a null element"),
            std::string::npos);
  ASSERT_EQ(sluice_stream_read_masks(s, 1), SLUICE_OK);
  EXPECT_EQ(sluice_stream_read_masks(s, 3), SLUICE_EINVAL);
  ASSERT_EQ(sluice_stream_iter_begin(s, 0, 0, 0, 1), SLUICE_OK) << sluice_last_error();
  size_t rows = 0, masked_fields = 0;
  while (true) {
    ASSERT_EQ(sluice_stream_next_batch(s, kMax, ids.data(), fields.data(), &count), SLUICE_OK)
        << sluice_last_error();
    if (count == 0) break;
    // The fields of the batch that should carry a mask: (k, column).
    std::vector<std::pair<uint32_t, uint32_t>> want, got;
    for (uint32_t k = 0; k < count; ++k) {
      for (uint32_t c = 0; c < n; ++c) {
        const std::string enc = sluice_stream_column_encoding(s, c);
        if (enc.find("list<list<") == 0 || enc.find("list<") != 0) continue;
        const JsonValue& v = ArrayMember(columns[c], "values")[static_cast<size_t>(ids[k])];
        const auto* items = std::get_if<JsonValue::Array>(&v.v);
        if (items != nullptr &&
            std::any_of(items->begin(), items->end(), [](const JsonValue& x) {
              return std::holds_alternative<std::nullptr_t>(x.v);
            })) {
          want.emplace_back(k, c);
        }
      }
    }
    ASSERT_EQ(sluice_stream_num_masked(s), want.size());
    for (uint32_t i = 0; i < sluice_stream_num_masked(s); ++i) {
      uint32_t k = 0, c = 0;
      sluice_bytes validity{nullptr, 0};
      ASSERT_EQ(sluice_stream_masked(s, i, &k, &c, &validity), SLUICE_OK);
      got.emplace_back(k, c);
      const std::string enc = sluice_stream_column_encoding(s, c);
      EXPECT_EQ(MaskedFieldText(enc, fields[k * n + c], validity),
                testing::DumpForTest(
                    ArrayMember(columns[c], "values")[static_cast<size_t>(ids[k])]));
    }
    EXPECT_EQ(got, want);
    masked_fields += got.size();
    rows += count;
    uint32_t k = 0, c = 0;
    sluice_bytes validity{nullptr, 0};
    EXPECT_EQ(sluice_stream_masked(s, sluice_stream_num_masked(s), &k, &c, &validity),
              SLUICE_ERANGE);
  }
  EXPECT_EQ(rows, 36u);
  EXPECT_GT(masked_fields, 100u);
  sluice_stream_release(s);
  EXPECT_EQ(sluice_stream_num_masked(s), 0u);  // the views ended
  sluice_stream_close(s);
}

}  // namespace
}  // namespace sluice
