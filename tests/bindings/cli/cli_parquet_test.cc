// sluice inspect, cat, verify and convert on Parquet files and folders
// (tests/data/parquet), as a user runs them: exact output where it is
// stable, every bad fixture's error naming the file (and, for a damaged
// page, the row group, column and page offset its expected.json records),
// and a convert round trip whose MDS values equal pyarrow's.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "formats/json/py_json.h"
#include "tests/bindings/cli/cli_runner.h"
#include "tests/common/temp_dir.h"

namespace sluice {
namespace {

using testing::CliRun;
using testing::Sluice;
using testing::Slurp;

const std::string kDir = std::string(SLUICE_TEST_DATA_DIR) + "/parquet";

JsonValue Json(const std::string& text) {
  Result<JsonValue> v = ParsePyJson(text);
  EXPECT_TRUE(v.ok()) << text.substr(0, 300);
  return v.ok() ? *v : JsonValue{};
}

std::string Dump(const JsonValue* v) {
  if (v == nullptr) return "<missing>";
  Result<std::string> s = DumpPyJson(*v, true);
  return s.ok() ? *s : "<" + s.status().ToString() + ">";
}

const JsonValue::Array& Values(const JsonValue& expected, size_t column) {
  const auto& columns = std::get<JsonValue::Array>(JsonMember(expected, "columns")->v);
  return std::get<JsonValue::Array>(JsonMember(columns[column], "values")->v);
}

// Sizes and statistics as pyarrow 26's metadata reports them for this file.
TEST(CliParquet, InspectFile) {
  const std::string file = kDir + "/pa26_codec_snappy.parquet";
  CliRun r = Sluice("inspect " + file);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out,
      "dataset:     " + file + "\n"
      "samples:     60\n"
      "shards:      1 (row groups)\n"
      "format:      parquet (1 files)\n"
      "bytes:       4863 stored\n"
      "columns:\n"
      "  id                       int64                    INT64                            optional\n"
      "  label                    str                      BYTE_ARRAY STRING                optional\n"
      "  score                    float64                  DOUBLE                           optional\n"
      "  text                     str                      BYTE_ARRAY STRING                optional\n"
      "  tokens                   list<int32>              INT32                            optional\n"
      "files:\n"
      "  pa26_codec_snappy.parquet: 4863 bytes, 60 rows, 1 row groups, created by parquet-cpp-arrow version 26.0.1\n"
      "    row group 0: 60 rows, 3626 bytes (7184 uncompressed)\n"
      "      id                           SNAPPY   PLAIN,RLE,RLE_DICTIONARY                      390 bytes (615 uncompressed)  nulls 0  min 0  max 59\n"
      "      label                        SNAPPY   PLAIN,RLE,RLE_DICTIONARY                      101 bytes (97 uncompressed)  nulls 18  min \"bird\"  max \"dog\"\n"
      "      score                        SNAPPY   PLAIN,RLE,RLE_DICTIONARY                      466 bytes (579 uncompressed)  nulls 5  min -961.75  max 966.775390625\n"
      "      text                         SNAPPY   PLAIN,RLE,RLE_DICTIONARY                     1034 bytes (4268 uncompressed)  nulls 0  min \"  tab\\tsep beta \\u03b4\\u03ad\\u03bb\\u03c4\\u03b1 tab\\tsep\"  max \"\\u6570\\u636e \\u03b4\\u03ad\\u03bb\\u03c4\\u03b1 gamma\"\n"
      "      tokens.list.element          SNAPPY   PLAIN,RLE,RLE_DICTIONARY                     1635 bytes (1625 uncompressed)  nulls 8  min 109  max 49705\n");
}

TEST(CliParquet, InspectSparkFolder) {
  CliRun r = Sluice("inspect " + kDir + "/spark_out");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("format:      parquet (3 files)\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("created by parquet-mr"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("_SUCCESS"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(".crc"), std::string::npos) << r.out;
}

// The same shape as for MDS: per column its encoding, raw_hex and value.
TEST(CliParquet, CatPrintsTheRow) {
  CliRun r = Sluice("cat " + kDir + "/pa26_lists_v1.parquet 1");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out,
      "{\"fields\": {\"embedding\": {\"encoding\": \"list<float32>\", \"raw_hex\": \"0080dbbf0000"
      "3cbf0000b93f0080923f0000793f0080c73f0000143e0080dbbf\", \"value_repr\": [\"-1.71484375\", "
      "\"-0.734375\", \"1.4453125\", \"1.14453125\", \"0.97265625\", \"1.55859375\", \"0.14453125"
      "\", \"-1.71484375\"]}, \"id\": {\"encoding\": \"int32\", \"raw_hex\": \"01000000\", \"valu"
      "e\": 1}, \"int_list\": {\"encoding\": \"list<int32>\", \"raw_hex\": \"\", \"value\": []}, "
      "\"large_int64_list\": {\"encoding\": \"list<int64>\", \"raw_hex\": \"0000000000010000\", \""
      "value\": [1099511627776]}, \"nested_int_list\": {\"encoding\": \"list<list<int32>>\", \"ra"
      "w_hex\": \"5b5b39392c2033342c2031365d2c205b36362c2037335d2c205b5d5d\", \"value\": [[99, 34"
      ", 16], [66, 73], []]}, \"required_elements\": {\"encoding\": \"list<float64>\", \"raw_hex\""
      ": \"000000000000f03f\", \"value_repr\": [\"1.0\"]}, \"string_list\": {\"encoding\": \"list"
      "<str>\", \"raw_hex\": \"5b2278787878787878787878787878787878787878787878787878787878787878"
      "787878787878787878222c2022225d\", \"value\": [\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\""
      ", \"\"]}}, \"index_in_shard\": 1, \"sample\": 1, \"shard\": 0}\n");
  // Row 0's int_list is [None] (pyarrow's reading): its mask beside the
  // packed value, null where the element is null.
  r = Sluice("cat " + kDir + "/pa26_lists_v1.parquet 0");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out,
      "{\"fields\": {\"embedding\": {\"encoding\": \"list<float32>\", \"raw_hex\": \"0080c6bf00"
      "80a2bf0080a9bf0000633f000026bf0000ee3e0000403c00009cbe\", \"value_repr\": [\"-1.55078125"
      "\", \"-1.26953125\", \"-1.32421875\", \"0.88671875\", \"-0.6484375\", \"0.46484375\", \""
      "0.01171875\", \"-0.3046875\"]}, \"id\": {\"encoding\": \"int32\", \"raw_hex\": \"0000000"
      "0\", \"value\": 0}, \"int_list\": {\"element_validity_hex\": \"00\", \"encoding\": \"lis"
      "t<int32>\", \"raw_hex\": \"00000000\", \"value\": [null]}, \"large_int64_list\": {\"enco"
      "ding\": \"list<int64>\", \"raw_hex\": \"\", \"value\": null}, \"nested_int_list\": {\"en"
      "coding\": \"list<list<int32>>\", \"raw_hex\": \"5b5d\", \"value\": []}, \"required_eleme"
      "nts\": {\"encoding\": \"list<float64>\", \"raw_hex\": \"\", \"value_repr\": []}, \"strin"
      "g_list\": {\"encoding\": \"list<str>\", \"raw_hex\": \"5b6e756c6c2c202220787878787878787"
      "87878787878787878787878787878787878787878787878787878787878787878222c2022225d\", \"value"
      "\": [null, \" xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\", \"\"]}}, \"index_in_shard\": 0"
      ", \"sample\": 0, \"shard\": 0}\n");
}

// Null elements of every packed kind: cat's values equal pyarrow's, null
// where the element is null, with the mask beside the bytes.
TEST(CliParquet, CatShowsNullElements) {
  const JsonValue expected = Json(Slurp(kDir + "/pa26_null_elements_v1.expected.json"));
  const auto& columns = std::get<JsonValue::Array>(JsonMember(expected, "columns")->v);
  for (int row : {0, 2, 6, 19, 20, 35}) {
    CliRun r = Sluice("cat " + kDir + "/pa26_null_elements_v1.parquet " + std::to_string(row));
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const JsonValue got = Json(r.out);
    const JsonValue* fields = JsonMember(got, "fields");
    for (const JsonValue& c : columns) {
      const std::string name = std::get<std::string>(JsonMember(c, "name")->v);
      const JsonValue* field = JsonMember(*fields, name);
      ASSERT_NE(field, nullptr) << name;
      const JsonValue* value = JsonMember(*field, "value");
      if (value == nullptr) value = JsonMember(*field, "value_repr");
      ASSERT_NE(value, nullptr) << name;
      const JsonValue& want = std::get<JsonValue::Array>(JsonMember(c, "values")->v)[row];
      EXPECT_EQ(Dump(value), Dump(&want)) << name << " row " << row;
    }
  }
  CliRun r = Sluice("cat " + kDir + "/pa26_null_elements_v1.parquet 2");
  const JsonValue line = Json(r.out);
  const JsonValue* ints = JsonMember(*JsonMember(line, "fields"), "int32_list");
  EXPECT_EQ(Dump(ints),
            "{\"element_validity_hex\": \"0100010001\", \"encoding\": \"list<int32>\", \"raw_hex\": "
            "\"8f0be29100000000264aadec00000000a90d9d72\", \"value\": [-1847456881, null, "
            "-324187610, null, 1922895273]}");
}

// Every column's value in cat's line equals pyarrow's (expected.json).
TEST(CliParquet, CatValuesArePyarrows) {
  const JsonValue expected = Json(Slurp(kDir + "/pa26_types_v1_snappy.expected.json"));
  const auto& columns = std::get<JsonValue::Array>(JsonMember(expected, "columns")->v);
  for (int row : {0, 7, 29, 30, 47}) {
    CliRun r = Sluice("cat " + kDir + "/pa26_types_v1_snappy.parquet " + std::to_string(row));
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const JsonValue got = Json(r.out);
    const JsonValue* fields = JsonMember(got, "fields");
    for (size_t c = 0; c < columns.size(); ++c) {
      const std::string name = JsonStringMember(columns[c], "name");
      const JsonValue* field = JsonMember(*fields, name);
      ASSERT_NE(field, nullptr) << name;
      const JsonValue& want = Values(expected, c)[static_cast<size_t>(row)];
      const JsonValue* value = JsonMember(*field, "value");
      if (value == nullptr) value = JsonMember(*field, "value_repr");
      if (value == nullptr) value = JsonMember(*field, "value_str");
      if (value == nullptr) {  // bytes: raw_hex is the value
        EXPECT_EQ(Dump(&want), "{\"hex\": " + Dump(JsonMember(*field, "raw_hex")) + "}") << name;
        continue;
      }
      EXPECT_EQ(Dump(value), Dump(&want)) << name << " row " << row;
    }
  }
}

TEST(CliParquet, VerifyGoodFilesAndFolders) {
  CliRun r = Sluice("verify " + kDir + "/pa26_page_crc_v1.parquet");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("ok: 60 rows in 3 row groups, every page decoded (CRCs checked where stored)\n"),
            std::string::npos) << r.out;
  r = Sluice("verify " + kDir + "/spark_out");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("ok: 45 rows in 3 row groups"), std::string::npos) << r.out;
}

// Every good fixture, file or Spark folder: every page decodes, and the rows
// and row groups are those its expected.json (pyarrow's) records.
TEST(CliParquet, VerifyEveryFixture) {
  size_t files = 0, folders = 0;
  for (const auto& e : std::filesystem::directory_iterator(kDir)) {
    const std::string name = e.path().filename().string();
    SCOPED_TRACE(name);
    if (e.is_directory()) {
      if (name.rfind("spark_", 0) != 0) continue;  // gen/: the writers' scripts
      CliRun r = Sluice("verify " + e.path().string());
      EXPECT_EQ(r.exit_code, 0) << r.out;
      EXPECT_NE(r.out.find("ok: "), std::string::npos) << r.out;
      ++folders;
      continue;
    }
    if (e.path().extension() != ".parquet" || name.rfind("bad_", 0) == 0) continue;
    const std::string stem = e.path().stem().string();
    const JsonValue expected = Json(Slurp(kDir + "/" + stem + ".expected.json"));
    // Older expected.json files record only the values: their rows then.
    const auto count = [&](const char* key) -> int64_t {
      const JsonValue* v = JsonMember(expected, key);
      return v != nullptr && std::holds_alternative<int64_t>(v->v) ? std::get<int64_t>(v->v) : -1;
    };
    const int64_t rows = count("num_rows") >= 0 ? count("num_rows")
                                                : static_cast<int64_t>(Values(expected, 0).size());
    const int64_t groups = count("row_groups");
    CliRun r = Sluice("verify " + e.path().string());
    EXPECT_EQ(r.exit_code, 0) << r.out;
    const std::string ok = "ok: " + std::to_string(rows) + " rows in " +
                           (groups >= 0 ? std::to_string(groups) + " row group" : std::string());
    EXPECT_NE(r.out.find(ok), std::string::npos) << r.out;
    ++files;
  }
  EXPECT_EQ(files, 51u);
  EXPECT_EQ(folders, 4u);
}

// Each bad fixture: exit 1 and the error naming the file; a damaged page's
// error names the row group, column and page offset its expected.json gives.
TEST(CliParquet, VerifyBadFiles) {
  for (const char* name : {"bad_encrypted_footer_magic", "bad_footer_length", "bad_magic_head",
                           "bad_magic_tail", "bad_page_compressed_size", "bad_page_crc_mismatch_v1",
                           "bad_page_crc_mismatch_v2", "bad_page_gzip_corrupt",
                           "bad_page_uncompressed_size", "bad_truncated_file",
                           "bad_truncated_footer"}) {
    SCOPED_TRACE(name);
    const std::string file = std::string(name) + ".parquet";
    CliRun r = Sluice("verify " + kDir + "/" + file);
    EXPECT_EQ(r.exit_code, 1) << r.out;
    const JsonValue e = Json(Slurp(kDir + "/" + name + ".expected.json"));
    const JsonValue* column = JsonMember(e, "column");
    if (column == nullptr || std::holds_alternative<std::nullptr_t>(column->v)) {
      EXPECT_EQ(r.out.rfind("sluice verify: ", 0), 0u) << r.out;
      EXPECT_NE(r.out.find(": " + file + ": "), std::string::npos) << r.out;
      continue;
    }
    const std::string where =
        file + ": row group " + std::to_string(std::get<int64_t>(JsonMember(e, "row_group")->v)) +
        " column \"" + std::get<std::string>(column->v) + "\": page at offset " +
        std::to_string(std::get<int64_t>(JsonMember(e, "page_offset")->v)) + ": ";
    EXPECT_NE(r.out.find("FAIL shard 0 (" + file + "): corrupt: " + where), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("FAILED: 1 of "), std::string::npos) << r.out;
  }
  CliRun r = Sluice("verify " + kDir + "/bad_page_crc_mismatch_v1.parquet");
  EXPECT_NE(r.out.find("CRC-32 of the page's 30 bytes is 74c083d8, the header says 9f62bd13"),
            std::string::npos) << r.out;
}

// Parquet to MDS: the MDS dataset's values (through `sluice cat`) are
// pyarrow's: str as str, binary as bytes, list<int32> as ndarray:int32.
TEST(CliParquet, ConvertRoundTrip) {
  testing::TempDir tmp("sluice_cli_parquet");
  for (const char* name : {"hf_text", "hf_image"}) {
    SCOPED_TRACE(name);
    const std::string out = tmp.path() + "/" + name;
    CliRun r = Sluice("convert " + kDir + "/" + name + ".parquet " + out);
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const JsonValue expected = Json(Slurp(kDir + "/" + name + ".expected.json"));
    const auto& columns = std::get<JsonValue::Array>(JsonMember(expected, "columns")->v);
    const size_t rows = Values(expected, 0).size();
    EXPECT_EQ(r.out, "wrote " + std::to_string(rows) + " samples in 1 shards to " + out + "\n");
    for (size_t row : {size_t{0}, size_t{1}, rows - 1}) {
      const JsonValue got = Json(Sluice("cat " + out + " " + std::to_string(row)).out);
      for (size_t c = 0; c < columns.size(); ++c) {
        const std::string column = JsonStringMember(columns[c], "name");
        const JsonValue* field = JsonMember(*JsonMember(got, "fields"), column);
        ASSERT_NE(field, nullptr) << column;
        const JsonValue& want = Values(expected, c)[row];
        const std::string encoding = JsonStringMember(*field, "encoding");
        if (encoding == "bytes") {
          EXPECT_EQ(Dump(&want), "{\"hex\": " + Dump(JsonMember(*field, "raw_hex")) + "}");
        } else if (encoding == "ndarray:int32") {
          EXPECT_EQ(Dump(JsonMember(*field, "values")), Dump(&want)) << column << " " << row;
        } else {
          EXPECT_EQ(encoding, "str");
          EXPECT_EQ(Dump(JsonMember(*field, "value")), Dump(&want)) << column << " " << row;
        }
      }
    }
  }
}

TEST(CliParquet, ConvertRefusesWhatMdsCannotHold) {
  testing::TempDir tmp("sluice_cli_parquet");
  CliRun r = Sluice("convert " + kDir + "/pa26_nulls_v1.parquet " + tmp.path() + "/o");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out,
            "sluice convert: invalid argument: pa26_nulls_v1.parquet: row group 0 row 0 (sample 0) "
            "column 'all_null_int32' is null, which MDS's int32 cannot hold (keep nulls with "
            "--columns all_null_int32:json)\n");
  r = Sluice("convert " + kDir + "/hf_text.parquet " + tmp.path() + "/p --columns text:bytes");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out,
            "sluice convert: unimplemented: --columns: a Parquet column converts to its own MDS "
            "encoding ('text' is str, stored as str; or json, which keeps nulls)\n");
  r = Sluice("convert " + kDir + "/hf_image.parquet " + tmp.path() + "/q --columns image:json");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out,
            "sluice convert: unimplemented: --columns: a Parquet column converts to its own MDS "
            "encoding ('image' is bytes, stored as bytes)\n");
  // A packed list's null element: MDS's ndarray has no null, and the row
  // and element are named: columns are written in name order, row 0's
  // bool_list is [] and its date_list ends in a null.
  r = Sluice("convert " + kDir + "/pa26_null_elements_v1.parquet " + tmp.path() + "/e");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out,
            "sluice convert: invalid argument: pa26_null_elements_v1.parquet: row group 0 row 0 "
            "(sample 0) column 'date_list' holds a null element (element 5), which MDS's "
            "ndarray:int32 cannot hold (keep nulls with --columns date_list:json)\n");
}

// --columns NAME:json keeps what MDS's own mappings cannot: null values and
// null elements of packed lists, as the values pyarrow reads (floats as
// numbers; expected.json holds their repr as text).
TEST(CliParquet, ConvertKeepsNullsInJsonColumns) {
  testing::TempDir tmp("sluice_cli_parquet");
  const std::string out = tmp.path() + "/o";
  const std::vector<std::string> lists = {"int32_list",     "int64_list", "uint8_list",
                                          "float32_list",   "float64_list", "bool_list",
                                          "ts_us_utc_list", "date_list",  "embedding"};
  std::string spec;
  for (const std::string& c : lists) spec += (spec.empty() ? "" : ",") + c + ":json";
  CliRun r = Sluice("convert " + kDir + "/pa26_null_elements_v1.parquet " + out + " --columns " + spec);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const JsonValue expected = Json(Slurp(kDir + "/pa26_null_elements_v1.expected.json"));
  const auto& columns = std::get<JsonValue::Array>(JsonMember(expected, "columns")->v);
  size_t checked = 0;
  for (int row : {0, 1, 2, 6, 19, 35}) {
    const JsonValue got = Json(Sluice("cat " + out + " " + std::to_string(row)).out);
    for (size_t c = 0; c < columns.size(); ++c) {
      const std::string name = std::get<std::string>(JsonMember(columns[c], "name")->v);
      if (std::find(lists.begin(), lists.end(), name) == lists.end()) continue;
      const JsonValue* field = JsonMember(*JsonMember(got, "fields"), name);
      ASSERT_NE(field, nullptr) << name;
      EXPECT_EQ(JsonStringMember(*field, "encoding"), "json") << name;
      std::string want = Dump(&Values(expected, c)[row]);
      if (name.starts_with("float") || name == "embedding") {
        std::erase(want, '"');  // the repr text is the number Python writes
      }
      EXPECT_EQ(Dump(JsonMember(*field, "value")), want) << name << " row " << row;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 6 * lists.size());
}

}  // namespace
}  // namespace sluice
