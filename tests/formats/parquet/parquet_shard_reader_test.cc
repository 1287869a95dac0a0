// ParquetShardReader's packed lists ("list<int32>" ...) against every
// fixture of tests/data/parquet: each row of each row group, value by
// value, with the element masks of rows whose list holds a null element
// (field_encoding.h). The values are read here from the encoding table
// (little-endian, the element's width), not by the reader's own code.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "base/file.h"
#include "formats/json/py_json.h"
#include "formats/parquet/column_chunk_decoder.h"
#include "formats/parquet/parquet_shard_reader.h"

namespace sluice::parquet {
namespace {

const std::string kMaskFixturesDir = std::string(SLUICE_TEST_DATA_DIR) + "/parquet";

std::vector<std::string> MaskFixtureNames() {
  std::vector<std::string> names;
  const std::string suffix = ".expected.json";
  for (const auto& e : std::filesystem::recursive_directory_iterator(kMaskFixturesDir)) {
    const std::string rel = std::filesystem::relative(e.path(), kMaskFixturesDir).string();
    if (rel.ends_with(suffix) && !rel.starts_with("bad_")) names.push_back(rel);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string MaskFixtureTestName(const std::string& rel) {
  std::string n = rel.substr(0, rel.size() - std::string(".expected.json").size());
  for (char& c : n) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return n;
}

std::string MaskDump(const JsonValue& v) {
  Result<std::string> s = DumpPyJson(v, false);
  return s.ok() ? *s : "<" + s.status().ToString() + ">";
}

// Element `i` of a packed list of element encoding `element`, as the
// fixtures spell it (floats as repr strings, times as their counts).
JsonValue PackedElement(std::string_view element, const char* p) {
  if (element == "bool") return JsonValue{*p != 0};
  if (element == "float32") {
    float f;
    std::memcpy(&f, p, 4);
    return JsonValue{PyFloatRepr(f)};
  }
  if (element == "float64") {
    double d;
    std::memcpy(&d, p, 8);
    return JsonValue{PyFloatRepr(d)};
  }
  if (element == "uint8") return JsonValue{int64_t{static_cast<uint8_t>(*p)}};
  if (element == "uint16") return JsonValue{int64_t{LoadLE<uint16_t>(p)}};
  if (element == "uint32") return JsonValue{int64_t{LoadLE<uint32_t>(p)}};
  if (element == "uint64") {
    const uint64_t v = LoadLE<uint64_t>(p);
    if (v > static_cast<uint64_t>(INT64_MAX)) return JsonValue{JsonValue::BigInt{std::to_string(v)}};
    return JsonValue{static_cast<int64_t>(v)};
  }
  if (element == "int8") return JsonValue{int64_t{static_cast<int8_t>(*p)}};
  if (element == "int16") return JsonValue{int64_t{static_cast<int16_t>(LoadLE<uint16_t>(p))}};
  if (element == "int32" || element == "date32" || element == "time32[ms]") {
    return JsonValue{int64_t{static_cast<int32_t>(LoadLE<uint32_t>(p))}};
  }
  return JsonValue{static_cast<int64_t>(LoadLE<uint64_t>(p))};  // int64, times, timestamps
}

size_t PackedWidth(std::string_view element) {
  if (element == "bool" || element == "int8" || element == "uint8") return 1;
  if (element == "int16" || element == "uint16" || element == "float16") return 2;
  if (element == "int32" || element == "uint32" || element == "float32" || element == "date32" ||
      element == "time32[ms]") {
    return 4;
  }
  return 8;
}

bool HoldsNull(const JsonValue& list) {
  const auto* a = std::get_if<JsonValue::Array>(&list.v);
  if (a == nullptr) return false;
  return std::any_of(a->begin(), a->end(),
                     [](const JsonValue& x) { return std::holds_alternative<std::nullptr_t>(x.v); });
}

class MaskFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(MaskFixture, PackedListsWithNullElementsReadWithTheirMasks) {
  Result<std::string> text = ReadFile((std::filesystem::path(kMaskFixturesDir) / GetParam()).string());
  ASSERT_TRUE(text.ok());
  Result<JsonValue> expected = ParsePyJson(*text);
  ASSERT_TRUE(expected.ok()) << expected.status().ToString();
  const std::string name = std::get<std::string>(JsonMember(*expected, "file")->v);
  Result<std::string> bytes = ReadFile(kMaskFixturesDir + "/" + name);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  const auto& columns = std::get<JsonValue::Array>(JsonMember(*expected, "columns")->v);
  const auto& groups = std::get<JsonValue::Array>(JsonMember(*expected, "row_groups")->v);
  size_t first_row = 0;
  size_t masked_rows = 0;
  for (size_t rg = 0; rg < groups.size(); ++rg) {
    const auto rows = static_cast<uint64_t>(std::get<int64_t>(JsonMember(groups[rg], "num_rows")->v));
    if (rows == 0) continue;
    Result<ParquetShardReader> reader = ParquetShardReader::Open(*bytes, name, rg, rows);
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    std::vector<std::string_view> fields, plain;
    std::vector<MaskedField> masked;
    bool group_has_mask = false;
    for (uint32_t row = 0; row < rows; ++row) {
      ASSERT_TRUE(reader->ReadRow(row, &fields, &masked).ok());
      ASSERT_EQ(fields.size(), columns.size());
      const Status without_masks = reader->ReadRow(row, &plain);
      size_t found = 0;
      std::string first_masked_column;
      for (size_t c = 0; c < columns.size(); ++c) {
        const std::string& enc = reader->encodings()[c].name;
        if (reader->encodings()[c].bytes != FieldBytes::kPackedList) continue;
        const std::string_view element = std::string_view(enc).substr(5, enc.size() - 6);
        const size_t width = PackedWidth(element);
        const JsonValue& want = std::get<JsonValue::Array>(JsonMember(columns[c], "values")->v)
            [first_row + row];
        auto m = std::find_if(masked.begin(), masked.end(), [&](const MaskedField& x) {
          return x.field.data() == fields[c].data();
        });
        // A mask exactly where the expected list holds a null element.
        ASSERT_EQ(m != masked.end(), HoldsNull(want))
            << name << " column " << c << " row " << first_row + row;
        if (m != masked.end() && first_masked_column.empty()) {
          first_masked_column = reader->column_names()[c];
        }
        found += m != masked.end();
        std::string_view v = fields[c];
        JsonValue got;
        if (v.data() != nullptr) {
          ASSERT_EQ(v.size() % width, 0u);
          JsonValue::Array items;
          for (size_t i = 0; i < v.size() / width; ++i) {
            const bool is_null = m != masked.end() && m->validity[i] == 0;
            if (is_null) {
              // Zero bytes where the element is null.
              EXPECT_EQ(v.substr(i * width, width), std::string(width, '\0'));
              items.emplace_back();
            } else {
              items.push_back(PackedElement(element, v.data() + i * width));
            }
          }
          if (m != masked.end()) {
            ASSERT_EQ(m->validity.size(), v.size() / width);
            for (char flag : m->validity) EXPECT_TRUE(flag == 0 || flag == 1);
          }
          got = JsonValue{std::move(items)};
        }
        EXPECT_EQ(MaskDump(got), MaskDump(want))
            << name << " column " << reader->column_names()[c] << " row " << first_row + row;
        // A row without a null element: the same bytes (the same view)
        // whether or not masks are asked for.
        if (m == masked.end() && without_masks.ok()) {
          EXPECT_EQ(plain[c].data(), fields[c].data());
          EXPECT_EQ(plain[c].size(), fields[c].size());
        }
      }
      EXPECT_EQ(found, masked.size());
      masked_rows += found > 0;
      group_has_mask = group_has_mask || found > 0;
      if (found == 0) {
        EXPECT_TRUE(without_masks.ok()) << without_masks.ToString();
      } else {
        EXPECT_EQ(without_masks.ToString(),
                  "unimplemented: " + name + ": row group " + std::to_string(rg) + " column \"" +
                      first_masked_column + "\" row " + std::to_string(row) +
                      ": the list holds a null element, which " +
                      reader->encodings()[std::find(reader->column_names().begin(),
                                                    reader->column_names().end(),
                                                    first_masked_column) -
                                          reader->column_names().begin()]
                          .name +
                      " (packed values) cannot hold");
      }
    }
    EXPECT_EQ(reader->has_masked_rows(), group_has_mask);
    first_row += rows;
  }
  if (GetParam().find("null_elements") != std::string::npos) {
    EXPECT_GT(masked_rows, 10u);
  }
}

INSTANTIATE_TEST_SUITE_P(Parquet, MaskFixture, ::testing::ValuesIn(MaskFixtureNames()),
                         [](const ::testing::TestParamInfo<std::string>& i) {
                           return MaskFixtureTestName(i.param);
                         });

// The null-elements fixture, a few rows spelled out (pyarrow 26 wrote
// them; pyarrow and DuckDB read them back alike): the field's bytes and
// mask exactly.
TEST(ParquetShardReaderMasks, NullElementsFixtureRowsByteForByte) {
  const std::string name = "pa26_null_elements_v1.parquet";
  Result<std::string> bytes = ReadFile(kMaskFixturesDir + "/" + name);
  ASSERT_TRUE(bytes.ok());
  Result<ParquetShardReader> reader = ParquetShardReader::Open(*bytes, name, 0, 20);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  ASSERT_EQ(reader->column_names()[1], "int32_list");
  EXPECT_EQ(reader->encodings()[1].name, "list<int32>");
  ASSERT_EQ(reader->column_names()[6], "bool_list");
  std::vector<std::string_view> fields;
  std::vector<MaskedField> masked;
  // Row 0: int32_list [None] (1 element, null); bool_list [] (empty).
  ASSERT_TRUE(reader->ReadRow(0, &fields, &masked).ok());
  EXPECT_EQ(fields[1], std::string(4, '\0'));
  EXPECT_NE(fields[6].data(), nullptr);
  EXPECT_EQ(fields[6].size(), 0u);
  auto mask_of = [&](size_t c) -> std::string {
    for (const MaskedField& m : masked) {
      if (m.field.data() == fields[c].data()) return std::string(m.validity);
    }
    return "<none>";
  };
  EXPECT_EQ(mask_of(1), std::string(1, '\0'));
  EXPECT_EQ(mask_of(6), "<none>");
  // Row 2: int32_list [-1847456881, None, -324187610, None, 1922895273].
  ASSERT_TRUE(reader->ReadRow(2, &fields, &masked).ok());
  const int32_t want[] = {-1847456881, 0, -324187610, 0, 1922895273};
  EXPECT_EQ(fields[1], std::string_view(reinterpret_cast<const char*>(want), sizeof(want)));
  EXPECT_EQ(mask_of(1), std::string("\x01\x00\x01\x00\x01", 5));
  // Row 4: int32_list null (a null list: no pointer, no mask).
  ASSERT_TRUE(reader->ReadRow(4, &fields, &masked).ok());
  EXPECT_EQ(fields[1].data(), nullptr);
  EXPECT_EQ(mask_of(1), "<none>");
  // Row 2's bool_list [False, False, True, False, False, None].
  ASSERT_TRUE(reader->ReadRow(2, &fields, &masked).ok());
  EXPECT_EQ(fields[6], std::string("\x00\x00\x01\x00\x00\x00", 6));
  EXPECT_EQ(mask_of(6), std::string("\x01\x01\x01\x01\x01\x00", 6));
}

}  // namespace
}  // namespace sluice::parquet

namespace sluice::parquet {
namespace {

// The reader's budget for its row group counts its decoded buffers (not the
// file's bytes it views) and names the column that passes it.
TEST(ParquetShardReaderBudget, NamesTheColumnThatPassesIt) {
  const std::string name = "pa26_codec_snappy.parquet";
  Result<std::string> bytes = ReadFile(kMaskFixturesDir + "/" + name);
  ASSERT_TRUE(bytes.ok());
  RangeReader read = [&](uint64_t offset, uint64_t size, std::string* out) {
    out->assign(*bytes, offset, size);
    return Status::Ok();
  };
  Result<FileFooter> footer = ReadFooter(bytes->size(), read, name);
  ASSERT_TRUE(footer.ok());
  ASSERT_EQ(footer->schema.fields[0].name, "id");
  ASSERT_EQ(footer->schema.fields[3].name, "text");
  const auto held_by = [&](size_t field) -> uint64_t {
    const ByteRange r = footer->chunk_ranges[0][footer->schema.fields[field].first_leaf];
    Result<ColumnBuffer> b =
        DecodeColumnChunk(*footer, 0, field, std::string_view(*bytes).substr(r.offset, r.size), name);
    EXPECT_TRUE(b.ok());
    return b.ok() ? b->HeldBytes() : 0;
  };
  const uint64_t id = held_by(0), text = held_by(3);
  const uint64_t rows = static_cast<uint64_t>(footer->meta.row_groups[0].num_rows);
  const auto error = [&](const std::string& column, uint64_t held, const std::string& with, uint64_t budget) {
    return "out of range: pa26_codec_snappy.parquet: row group 0 column \"" + column +
           "\": the row group holds " + std::to_string(held) + " bytes with " + with +
           ", more than the reader's budget of " + std::to_string(budget) + " bytes (max_row_group_bytes)";
  };
  ColumnDecodeOptions o;
  // The columns are decoded first, then their rows laid out.
  o.max_row_group_bytes = id - 1;
  EXPECT_EQ(ParquetShardReader::Open(*bytes, name, 0, rows, o, {"id", "text"}).status().ToString(),
            error("id", id, "this column decoded", id - 1));
  o.max_row_group_bytes = id + text - 1;
  EXPECT_EQ(ParquetShardReader::Open(*bytes, name, 0, rows, o, {"id", "text"}).status().ToString(),
            error("text", id + text, "this column decoded", id + text - 1));
  // id's rows: a view each (text's are read in place: none).
  const uint64_t all = id + text + rows * sizeof(std::string_view);
  o.max_row_group_bytes = all - 1;
  EXPECT_EQ(ParquetShardReader::Open(*bytes, name, 0, rows, o, {"id", "text"}).status().ToString(),
            error("id", all, "this column's rows", all - 1));
  o.max_row_group_bytes = all;
  EXPECT_TRUE(ParquetShardReader::Open(*bytes, name, 0, rows, o, {"id", "text"}).ok());
}

}  // namespace
}  // namespace sluice::parquet
