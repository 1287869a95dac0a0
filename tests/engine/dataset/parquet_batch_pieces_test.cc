// The engine's batches of Parquet rows with their large values as pieces
// (SampleFields::wants_pieces on NextBatch's slots): every fixture of
// tests/data/parquet streamed from a folder holding it alone, each row's
// values exactly those of the lasting path (DatasetReader::Read) and of the
// scratch path (NextBatch's until_next_read without pieces), nulls included.
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/file.h"
#include "engine/dataset/streaming_dataset.h"
#include "formats/dataset/dataset_reader.h"
#include "formats/json/py_json.h"
#include "tests/common/temp_dir.h"
#include "tests/formats/dataset/parquet_fixture_values.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;

const std::string kDir = std::string(SLUICE_TEST_DATA_DIR) + "/parquet";

// One row's values, null-ness included, a value in pieces laid end to end.
struct Row {
  std::vector<std::string> values;
  std::vector<bool> nulls;
  bool operator==(const Row&) const = default;
};

Row RowOf(const SampleFields& f, size_t* pieced) {
  Row r;
  for (std::string_view field : f.fields) {
    std::string value(field);
    if (const parquet::PiecedField* p = PiecedOf(f, field)) {
      value.assign(field.size(), '\0');
      CopyPiecedValue(*p, value.data());
      ++*pieced;
    }
    r.values.push_back(std::move(value));
    r.nulls.push_back(field.data() == nullptr);
  }
  return r;
}

// Every row through NextBatch (batches of 5), by global id.
std::vector<Row> StreamRows(const std::string& folder, bool pieces, size_t* pieced) {
  DatasetOptions o;
  StreamOptions s;
  s.local = folder;
  o.streams.push_back(s);
  o.prefetch_next_epoch = false;
  o.peek_first_sample = false;
  auto ds = StreamingDataset::Open(o);
  EXPECT_TRUE(ds.ok()) << ds.status().ToString();
  if (!ds.ok()) return {};
  std::vector<Row> rows((*ds)->num_samples());
  EXPECT_TRUE((*ds)->IterBegin(0, 0, 0, 1).ok());
  std::vector<SampleFields> batch(5);
  std::vector<int64_t> ids(batch.size());
  size_t seen = 0;
  while (true) {
    for (SampleFields& f : batch) {
      f.wants_masks = true;  // a list holding a null element is read, zeros where null
      f.wants_pieces = pieces;
    }
    Result<size_t> n = (*ds)->NextBatch(batch.size(), ids.data(), &batch);
    EXPECT_TRUE(n.ok()) << n.status().ToString();
    if (!n.ok() || *n == 0) break;
    for (size_t k = 0; k < *n; ++k) {
      if (!pieces) {
        EXPECT_TRUE(batch[k].pieced.empty());
      }
      rows.at(static_cast<size_t>(ids[k])) = RowOf(batch[k], pieced);
      ++seen;
    }
  }
  EXPECT_EQ(seen, rows.size());
  return rows;
}

class ParquetBatchPieces : public ::testing::TestWithParam<std::string> {};

TEST_P(ParquetBatchPieces, EveryValueAsTheLastingAndScratchPaths) {
  Result<std::string> text = ReadFile(kDir + "/" + GetParam());
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  Result<JsonValue> e = ParsePyJson(*text);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  const std::string file = JsonStringMember(*e, "file");
  testing::TempDir folder;
  const fs::path from = fs::path(kDir) / file;
  fs::copy_file(from, fs::path(folder.path()) / from.filename());

  auto reader = DatasetReader::Open(from.string());
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  std::vector<Row> lasting;
  SampleFields f;
  f.wants_masks = true;
  size_t none = 0;
  for (uint64_t row = 0; row < (*reader)->num_samples(); ++row) {
    Status st = (*reader)->Read(row, &f);
    ASSERT_TRUE(st.ok()) << st.ToString();
    lasting.push_back(RowOf(f, &none));
  }
  ASSERT_EQ(none, 0u);

  size_t pieced = 0, scratch_pieced = 0;
  const std::vector<Row> in_pieces = StreamRows(folder.path(), true, &pieced);
  const std::vector<Row> scratch = StreamRows(folder.path(), false, &scratch_pieced);
  ASSERT_EQ(in_pieces.size(), lasting.size());
  ASSERT_EQ(scratch.size(), lasting.size());
  EXPECT_EQ(scratch_pieced, 0u);
  int mismatches = 0;
  for (size_t row = 0; row < lasting.size() && mismatches < 5; ++row) {
    if (in_pieces[row] != lasting[row] || scratch[row] != lasting[row]) {
      ++mismatches;
      ADD_FAILURE() << file << " row " << row << " differs (pieces: "
                    << (in_pieces[row] == lasting[row] ? "same" : "differs")
                    << ", scratch: " << (scratch[row] == lasting[row] ? "same" : "differs") << ")";
    }
  }
  // hf_image's ~110 KB JPEGs straddle snappy literals: they come in pieces.
  if (GetParam().starts_with("hf_image")) {
    EXPECT_GT(pieced, 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(Parquet, ParquetBatchPieces,
                         ::testing::ValuesIn(testing::ParquetFixtureNames()),
                         [](const ::testing::TestParamInfo<std::string>& i) {
                           return testing::ParquetFixtureTestName(i.param);
                         });

}  // namespace
}  // namespace sluice
