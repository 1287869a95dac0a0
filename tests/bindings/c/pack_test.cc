// sluice_pack_*: token packing through libsluice.so, as a C caller uses it:
// rows against the stream's own samples packed by hand, resumption at every
// row, the resume rule and the refusals.
#include "sluice.h"
#include "tests/common/temp_dir.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <utility>
#include <string>
#include <vector>

namespace {

const std::string kPackMds = std::string(SLUICE_TEST_DATA_DIR) + "/mosaic/mds/";

class PackCApi : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string config = R"({"remote": ")" + kPackMds +
                               R"(compressed_zstd_hashed", "local": ")" + cache_dir_.path() +
                               R"(", "allow_unsafe_types": true, )"
                               R"("world": {"rank": 0, "world_size": 1}})";
    ASSERT_EQ(sluice_stream_open(config.c_str(), &s_), SLUICE_OK) << sluice_last_error();
  }
  void TearDown() override { sluice_stream_close(s_); }

  // Worker `worker` of `workers`' documents (column h_nd_int16, an int16
  // ndarray of any shape) in the stream's planned order, each followed by
  // eos 0, joined.
  std::vector<int64_t> PackJoinedDocuments(uint32_t worker, uint32_t workers) {
    EXPECT_EQ(sluice_stream_iter_begin(s_, 0, 0, worker, workers), SLUICE_OK);
    const uint32_t columns = sluice_stream_num_columns(s_);
    uint32_t column = 0;
    while (std::string(sluice_stream_column_name(s_, column)) != "h_nd_int16") ++column;
    std::vector<int64_t> out, ids(8);
    std::vector<sluice_bytes> fields(8 * columns);
    uint32_t n = 0;
    while (sluice_stream_next_batch(s_, 8, ids.data(), fields.data(), &n) == SLUICE_OK && n > 0) {
      for (uint32_t k = 0; k < n; ++k) {
        sluice_ndarray nd{};
        EXPECT_EQ(sluice_decode_ndarray("ndarray:int16", fields[k * columns + column], &nd),
                  SLUICE_OK);
        for (uint64_t i = 0; i < nd.data.size / 2; ++i) {
          int16_t v;
          std::memcpy(&v, nd.data.data + 2 * i, 2);
          out.push_back(v);
        }
        out.push_back(0);
      }
    }
    sluice_stream_release(s_);
    return out;
  }

  std::vector<int64_t> PackRows(sluice_pack* p, uint32_t worker, uint32_t workers, uint64_t skip) {
    EXPECT_EQ(sluice_pack_begin(p, 0, worker, workers, skip), SLUICE_OK) << sluice_last_error();
    const uint64_t len = sluice_pack_seq_len(p);
    std::vector<int64_t> out, rows(3 * len);
    uint32_t n = 0;
    while (true) {
      EXPECT_EQ(sluice_pack_next(p, 3, rows.data(), nullptr, nullptr, &n), SLUICE_OK)
          << sluice_last_error();
      if (n == 0) break;
      out.insert(out.end(), rows.begin(), rows.begin() + n * len);
    }
    return out;
  }

  sluice::testing::TempDir cache_dir_{"sluice_c_pack_test"};
  sluice_stream* s_ = nullptr;
};

TEST_F(PackCApi, ConcatRowsAreTheJoinedDocumentsAndResumeAtEveryRow) {
  sluice_pack* p = nullptr;
  ASSERT_EQ(sluice_pack_open(s_, R"({"column": "h_nd_int16", "seq_len": 5, "eos_id": 0})", &p),
            SLUICE_OK)
      << sluice_last_error();
  for (uint32_t workers : {1u, 2u}) {
    for (uint32_t w = 0; w < workers; ++w) {
      std::vector<int64_t> joined = PackJoinedDocuments(w, workers);
      joined.resize(joined.size() / 5 * 5);  // drop_last
      const std::vector<int64_t> rows = PackRows(p, w, workers, 0);
      ASSERT_EQ(rows, joined) << w << " of " << workers;
      uint64_t count = 0, tokens_in = 0;
      ASSERT_EQ(sluice_pack_position(p, &count, nullptr, nullptr, &tokens_in, nullptr), SLUICE_OK);
      EXPECT_EQ(count, rows.size() / 5);
      EXPECT_EQ(tokens_in, PackJoinedDocuments(w, workers).size());
      for (uint64_t k = 0; k <= count; ++k) {
        const std::vector<int64_t> rest = PackRows(p, w, workers, k);
        EXPECT_EQ(rest, std::vector<int64_t>(rows.begin() + k * 5, rows.end())) << k;
      }
    }
  }
  sluice_pack_close(p);
}

// A resume passes over the skipped rows' documents by counting their ids:
// it reaches the position the run reached, row by row, mid-document too,
// with or without eos and with the last row padded.
TEST_F(PackCApi, ResumeReachesTheRunsPositionAtEveryRow) {
  for (const char* spec : {R"({"column": "h_nd_int16", "seq_len": 3, "eos_id": 0})",
                           R"({"column": "h_nd_int16", "seq_len": 4, "eos_id": null,
                               "drop_last": false, "pad_id": 7})"}) {
    sluice_pack* p = nullptr;
    ASSERT_EQ(sluice_pack_open(s_, spec, &p), SLUICE_OK) << sluice_last_error();
    const uint64_t len = sluice_pack_seq_len(p);
    ASSERT_EQ(sluice_pack_begin(p, 0, 0, 1, 0), SLUICE_OK);
    std::vector<std::vector<int64_t>> rows;
    std::vector<std::pair<uint64_t, uint64_t>> at;  // (document, offset) of each row
    std::vector<int64_t> row(len);
    uint32_t n = 0;
    while (sluice_pack_next(p, 1, row.data(), nullptr, nullptr, &n) == SLUICE_OK && n == 1) {
      rows.push_back(row);
      uint64_t doc = 0, off = 0;
      ASSERT_EQ(sluice_pack_position(p, nullptr, &doc, &off, nullptr, nullptr), SLUICE_OK);
      at.emplace_back(doc, off);
    }
    ASSERT_GT(rows.size(), 10u);
    for (uint64_t k = 1; k <= rows.size(); ++k) {
      ASSERT_EQ(sluice_pack_begin(p, 0, 0, 1, k), SLUICE_OK) << sluice_last_error();
      uint64_t count = 0, doc = 0, off = 0;
      ASSERT_EQ(sluice_pack_position(p, &count, &doc, &off, nullptr, nullptr), SLUICE_OK);
      EXPECT_EQ(count, k);
      EXPECT_EQ(std::make_pair(doc, off), at[k - 1]) << k;
      std::vector<std::vector<int64_t>> rest;
      while (sluice_pack_next(p, 1, row.data(), nullptr, nullptr, &n) == SLUICE_OK && n == 1) {
        rest.push_back(row);
      }
      EXPECT_EQ(rest, std::vector<std::vector<int64_t>>(rows.begin() + k, rows.end())) << k;
    }
    sluice_pack_close(p);
  }
}

TEST_F(PackCApi, ResumePointAndRefusals) {
  uint32_t role = 9;
  uint64_t rows = 9;
  ASSERT_EQ(sluice_pack_resume_point(10, 4, 1, 2, &role, &rows), SLUICE_OK);
  EXPECT_EQ(role, 1u);  // two batches done: worker 0's turn again, so worker 1 is worker 1
  EXPECT_EQ(rows, 4u);
  EXPECT_EQ(sluice_pack_resume_point(10, 0, 0, 2, &role, &rows), SLUICE_EINVAL);
  EXPECT_STREQ(sluice_last_error(),
               "invalid argument: sluice_pack_resume_point: batch_size must be > 0");
  sluice_pack* p = nullptr;
  EXPECT_EQ(sluice_pack_open(s_, R"({"column": "c_float32", "seq_len": 5})", &p), SLUICE_EINVAL);
  EXPECT_STREQ(sluice_last_error(),
               "invalid argument: token packing: column 'c_float32' (float32) of format mds is "
               "no MDS ndarray of integers nor bytes (stream 0)");
  EXPECT_EQ(p, nullptr);
  EXPECT_EQ(sluice_pack_open(s_, R"({"column": "h_nd_int16"})", &p), SLUICE_EINVAL);
  EXPECT_STREQ(sluice_last_error(), "invalid argument: pack spec: 'seq_len' is required");
}

// The tail's resume point and the elastic resume through the ABI: while no
// worker ran out the resume point is sluice_pack_resume_point's; after the
// whole epoch each worker skips all its rows; a job that consumed 4 rows
// on one worker goes on on two, and every token comes out once.
TEST_F(PackCApi, ResumePointInAndAnElasticResume) {
  sluice_pack* p = nullptr;
  // eos and padding outside int16: told apart from the data's tokens.
  ASSERT_EQ(sluice_pack_open(s_, R"({"column": "h_nd_int16", "seq_len": 5, "eos_id": 77777,
                                     "pad_id": 99999, "drop_last": false})", &p),
            SLUICE_OK)
      << sluice_last_error();
  const std::vector<uint64_t> totals{PackRows(p, 0, 2, 0).size() / 5,
                                     PackRows(p, 1, 2, 0).size() / 5};
  uint32_t role = 9, plain_role = 9;
  uint64_t rows = 9, plain_rows = 9;
  for (uint32_t w = 0; w < 2; ++w) {
    ASSERT_EQ(sluice_pack_resume_point_in(p, 0, 6, 2, w, 2, &role, &rows), SLUICE_OK)
        << sluice_last_error();
    ASSERT_EQ(sluice_pack_resume_point(6, 2, w, 2, &plain_role, &plain_rows), SLUICE_OK);
    EXPECT_EQ(std::make_pair(role, rows), std::make_pair(plain_role, plain_rows)) << w;
    ASSERT_EQ(sluice_pack_resume_point_in(p, 0, totals[0] + totals[1], 2, w, 2, &role, &rows),
              SLUICE_OK);
    EXPECT_EQ(rows, totals[role]) << w;
  }
  EXPECT_EQ(sluice_pack_resume_point_in(p, 0, 6, 0, 0, 2, &role, &rows), SLUICE_EINVAL);
  EXPECT_STREQ(sluice_last_error(),
               "invalid argument: token packing: a resume point needs batch_size > 0 and worker 0 "
               "< 2");

  std::vector<int64_t> out = PackRows(p, 0, 1, 0);
  std::vector<int64_t> want;
  for (int64_t t : out) {
    if (t != 99999) want.push_back(t);
  }
  out.resize(4 * 5);  // the 4 rows consumed on one worker
  const char* segments = R"([{"nodes": 1, "ranks_per_node": 1, "workers": 1, "batch_size": 2,
                              "rows": 4},
                             {"nodes": 1, "ranks_per_node": 1, "workers": 2, "batch_size": 2,
                              "rows": 0}])";
  const uint64_t len = 5;
  std::vector<int64_t> buf(3 * len);
  for (uint32_t r = 0; r < 2; ++r) {
    ASSERT_EQ(sluice_pack_begin_segments(p, 0, segments, r, 0), SLUICE_OK) << sluice_last_error();
    uint32_t n = 0;
    while (sluice_pack_next(p, 3, buf.data(), nullptr, nullptr, &n) == SLUICE_OK && n > 0) {
      out.insert(out.end(), buf.begin(), buf.begin() + n * len);
    }
  }
  std::erase(out, 99999);
  std::sort(out.begin(), out.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(out, want);
  EXPECT_EQ(sluice_pack_begin_segments(p, 0, "[]", 0, 0), SLUICE_EINVAL);
  EXPECT_STREQ(sluice_last_error(), "invalid argument: pack segments: must be a non-empty JSON list");

  // On the last shape after 4 more rows (batches to workers 0 and 1): each
  // worker continues the role whose turn it is, after that role's rows.
  const char* later = R"([{"nodes": 1, "ranks_per_node": 1, "workers": 1, "batch_size": 2,
                           "rows": 4},
                          {"nodes": 1, "ranks_per_node": 1, "workers": 2, "batch_size": 2,
                           "rows": 4}])";
  for (uint32_t w = 0; w < 2; ++w) {
    ASSERT_EQ(sluice_pack_resume_point_segments(p, 0, later, 0, w, &role, &rows), SLUICE_OK)
        << sluice_last_error();
    EXPECT_EQ(std::make_pair(role, rows), std::make_pair(w, uint64_t{2})) << w;
  }
  EXPECT_EQ(sluice_pack_resume_point_segments(p, 0, later, 0, 2, &role, &rows), SLUICE_EINVAL);
  EXPECT_STREQ(sluice_last_error(),
               "invalid argument: token packing: rank 0 worker 2 is not in the last segment's 1 "
               "ranks of 2 workers");
  EXPECT_EQ(sluice_pack_resume_point_segments(p, 0, nullptr, 0, 0, &role, &rows), SLUICE_EINVAL);
  EXPECT_EQ(sluice_pack_resume_point_segments(p, 0, later, 0, 0, nullptr, &rows), SLUICE_EINVAL);
  sluice_pack_close(p);
}

}  // namespace

namespace {

// sluice_pack_bounds over every bin row of a worker: each row's cu_seqlens
// delimit its pieces exactly as its segment_ids and position_ids do
// (piece k + 1 from bounds[k] to bounds[k + 1], positions 0, 1, ..),
// padding after the last end, that end repeated to seq_len + 1.
TEST_F(PackCApi, BoundsDelimitTheSegmentsOfEveryBinRow) {
  sluice_pack* p = nullptr;
  ASSERT_EQ(sluice_pack_open(s_, R"({"column": "h_nd_int16", "seq_len": 16, "eos_id": 0,
                                     "method": "bin", "pad_id": 40000, "bin_window": 4})",
                             &p),
            SLUICE_OK)
      << sluice_last_error();
  ASSERT_EQ(sluice_pack_begin(p, 0, 0, 1, 0), SLUICE_OK) << sluice_last_error();
  const size_t len = 16;
  std::vector<int64_t> tokens(4 * len);
  std::vector<int32_t> seg(4 * len), pos(4 * len), bounds(4 * (len + 1)), docs(4);
  uint32_t n = 0;
  size_t rows = 0, multi = 0;
  while (sluice_pack_next(p, 4, tokens.data(), seg.data(), pos.data(), &n) == SLUICE_OK && n > 0) {
    ASSERT_EQ(sluice_pack_bounds(p, n, seg.data(), bounds.data(), docs.data()), SLUICE_OK);
    for (uint32_t r = 0; r < n; ++r, ++rows) {
      const int32_t* b = bounds.data() + r * (len + 1);
      const int32_t d = docs[r];
      ASSERT_GE(d, 1);
      multi += d > 1;
      EXPECT_EQ(b[0], 0);
      for (int32_t k = 0; k < d; ++k) {
        ASSERT_LT(b[k], b[k + 1]);
        for (int32_t i = b[k]; i < b[k + 1]; ++i) {
          EXPECT_EQ(seg[r * len + i], k + 1) << "row " << rows << " token " << i;
          EXPECT_EQ(pos[r * len + i], i - b[k]) << "row " << rows << " token " << i;
        }
      }
      for (size_t i = b[d]; i < len; ++i) {
        EXPECT_EQ(seg[r * len + i], 0);
        EXPECT_EQ(tokens[r * len + i], 40000);  // no int16
      }
      for (size_t k = d; k <= len; ++k) EXPECT_EQ(b[k], b[d]);
    }
  }
  EXPECT_GT(rows, 0u);
  EXPECT_GT(multi, 0u);  // rows that hold several documents were checked
  EXPECT_EQ(sluice_pack_bounds(p, 1, nullptr, bounds.data(), nullptr), SLUICE_EINVAL);
  EXPECT_EQ(sluice_pack_bounds(p, 0, nullptr, nullptr, nullptr), SLUICE_OK);
  sluice_pack_close(p);
}

}  // namespace
