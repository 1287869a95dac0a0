// PackedIteration over a real StreamingDataset (the recorded Mosaic dataset
// of tests/data): its rows are RowPacker's over the worker's samples in
// their planned order, bin resumes at every row, and the refusals name the
// column and stream.
#include "engine/packing/packed_iteration.h"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/common/temp_dir.h"

namespace sluice {
namespace {

const std::string kPackedIterationData =
    std::string(SLUICE_TEST_DATA_DIR) + "/mosaic/mds/compressed_zstd_hashed";

class PackedIterationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto o = ParseDatasetOptions(R"({"remote": ")" + kPackedIterationData + R"(", "local": ")" +
                                 cache_.path() + R"(", "allow_unsafe_types": true})");
    ASSERT_TRUE(o.ok()) << o.status().message();
    auto ds = StreamingDataset::Open(std::move(o).value());
    ASSERT_TRUE(ds.ok()) << ds.status().message();
    ds_ = std::move(ds).value();
  }

  // The rows RowPacker makes of worker `worker`'s samples, read and decoded
  // here (the column h_nd_int16: an int16 ndarray of any shape).
  std::vector<std::vector<int64_t>> ExpectedPackedRows(const PackSpec& spec, int64_t worker,
                                                       int64_t workers) {
    const auto& names = ds_->column_names();
    const size_t column = static_cast<size_t>(
        std::find(names.begin(), names.end(), "h_nd_int16") - names.begin());
    EXPECT_LT(column, names.size());
    auto decoder = TokenDecoder::For("mds", "ndarray:int16", "h_nd_int16", "int64");
    EXPECT_TRUE(decoder.ok());
    RowPacker packer(spec);
    EXPECT_TRUE(ds_->IterBegin(0, 0, worker, workers).ok());
    std::vector<int64_t> ids(16);
    std::vector<SampleFields> fields;
    while (true) {
      auto n = ds_->NextBatch(16, ids.data(), &fields);
      EXPECT_TRUE(n.ok());
      if (!n.ok() || *n == 0) break;
      for (size_t k = 0; k < *n; ++k) {
        std::vector<int64_t> doc;
        const std::string_view f = fields[k].fields[column];
        EXPECT_TRUE(decoder->Append(f.data(), f.size(), &doc).ok());
        packer.Add(doc);
      }
    }
    ds_->Release();
    packer.Finish();
    std::vector<std::vector<int64_t>> rows;
    std::vector<int64_t> row(spec.seq_len);
    while (packer.Pop(row.data(), nullptr, nullptr, nullptr)) rows.push_back(row);
    return rows;
  }

  static std::vector<std::vector<int64_t>> PackedRowsFrom(PackedIteration& it, int64_t worker,
                                                          int64_t workers, uint64_t skip) {
    EXPECT_TRUE(it.Begin(0, worker, workers, skip).ok());
    const size_t len = it.spec().seq_len;
    std::vector<std::vector<int64_t>> rows;
    std::vector<int64_t> buf(2 * len);
    while (true) {
      auto n = it.Next(2, buf.data(), nullptr, nullptr);
      EXPECT_TRUE(n.ok()) << n.status().message();
      if (!n.ok() || *n == 0) break;
      for (size_t k = 0; k < *n; ++k) {
        rows.emplace_back(buf.begin() + static_cast<std::ptrdiff_t>(k * len),
                          buf.begin() + static_cast<std::ptrdiff_t>((k + 1) * len));
      }
    }
    return rows;
  }

  testing::TempDir cache_{"sluice_packed_iteration_test"};
  std::unique_ptr<StreamingDataset> ds_;
};

TEST_F(PackedIterationTest, BinRowsAreThePackersAndResumeAtEveryRow) {
  auto spec = ParsePackSpec(R"({"column": "h_nd_int16", "seq_len": 6, "eos_id": 0,
                                "method": "bin", "bin_window": 5, "pad_id": 99})");
  ASSERT_TRUE(spec.ok());
  auto it = PackedIteration::Make(ds_.get(), *spec);
  ASSERT_TRUE(it.ok()) << it.status().message();
  for (int64_t workers : {1, 2}) {
    for (int64_t w = 0; w < workers; ++w) {
      const auto expected = ExpectedPackedRows(*spec, w, workers);
      ASSERT_GT(expected.size(), 4u);
      const auto rows = PackedRowsFrom(**it, w, workers, 0);
      ASSERT_EQ(rows, expected) << w << " of " << workers;
      EXPECT_EQ((*it)->rows(), rows.size());
      for (uint64_t k = 1; k <= rows.size(); ++k) {
        EXPECT_EQ(PackedRowsFrom(**it, w, workers, k),
                  std::vector<std::vector<int64_t>>(rows.begin() + static_cast<std::ptrdiff_t>(k),
                                                    rows.end()))
            << k;
      }
    }
  }
}

TEST_F(PackedIterationTest, RefusesAMissingOrNonTokenColumn) {
  PackSpec spec;
  spec.seq_len = 4;
  spec.column = "tokens";
  auto missing = PackedIteration::Make(ds_.get(), spec);
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(missing.status().message().starts_with(
      "token packing: the dataset has no column 'tokens' (its columns: a_bytes, a_int, "))
      << missing.status().message();
  spec.column = "h_nd_f32_2x3";
  auto floats = PackedIteration::Make(ds_.get(), spec);
  EXPECT_EQ(floats.status().message(),
            "token packing: column 'h_nd_f32_2x3' (ndarray:float32:2,3) of format mds holds "
            "floats, not token ids (stream 0)");
}

}  // namespace
}  // namespace sluice
