// An elastic resume of packed rows (PackedIteration::BeginSegments), concat
// and bin, over a real StreamingDataset: a job consumes some rows on one
// world shape, checkpoints and goes on on another (1 rank -> 3, 3 -> 1,
// with 1 and 2 DataLoader workers, and 1 -> 3 -> 1), also after a worker
// ran out before the others (the epoch's tail): every token of the epoch
// comes out exactly once across the change, and the rows after it are the
// same every time.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/packing/packed_iteration.h"
#include "engine/packing/worker_rows.h"
#include "formats/mds/mds_writer.h"
#include "tests/common/temp_dir.h"

namespace sluice {
namespace {

constexpr int64_t kElasticDocs = 60;
constexpr int64_t kElasticBatch = 2;
constexpr uint64_t kElasticSeqLen = 8;

// Document i: 1 + (7 i mod 19) tokens, i * 100 + 1, + 2, ...: every token
// of the dataset is unique and none is 0 (eos and padding).
std::vector<int64_t> ElasticDoc(int64_t i) {
  std::vector<int64_t> d(static_cast<size_t>(1 + (7 * i) % 19));
  for (size_t j = 0; j < d.size(); ++j) d[j] = i * 100 + int64_t(j) + 1;
  return d;
}

class ElasticPackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ShardedWriterOptions options;
    options.size_limit = 300;  // several shards
    auto w = MdsWriter::Create(data_.path(), {{"tokens", "bytes"}}, options);
    ASSERT_TRUE(w.ok()) << w.status().message();
    for (int64_t i = 0; i < kElasticDocs; ++i) {
      const std::vector<int64_t> d = ElasticDoc(i);
      std::string le(d.size() * 8, '\0');
      for (size_t j = 0; j < d.size(); ++j) {
        for (int b = 0; b < 8; ++b) le[j * 8 + size_t(b)] = char((d[j] >> (8 * b)) & 0xff);
      }
      ASSERT_TRUE((*w)->WriteFields({le}).ok());
    }
    ASSERT_TRUE((*w)->Finish().ok());
  }

  // Rank `rank` of `ranks` (one node) over the dataset; `more`: further
  // options (`, "key": value`).
  std::unique_ptr<StreamingDataset> Open(int64_t rank, int64_t ranks,
                                         const std::string& more = "") {
    auto o = ParseDatasetOptions(R"({"local": ")" + data_.path() + R"(")" + more +
                                 R"(, "batch_size": )" +
                                 std::to_string(kElasticBatch) + R"(, "world": {"rank": )" +
                                 std::to_string(rank) + R"(, "world_size": )" +
                                 std::to_string(ranks) + R"(, "local_rank": )" +
                                 std::to_string(rank) + R"(, "local_world_size": )" +
                                 std::to_string(ranks) + "}}");
    EXPECT_TRUE(o.ok()) << o.status().message();
    auto ds = StreamingDataset::Open(std::move(o).value());
    EXPECT_TRUE(ds.ok()) << ds.status().message();
    return ds.ok() ? std::move(ds).value() : nullptr;
  }

  // Bin packs windows of 4 documents: a window is a few rows, so resumes
  // fall in every place of one.
  static PackSpec Spec(const std::string& method = "concat") {
    auto spec = ParsePackSpec(R"({"column": "tokens", "seq_len": 8, "eos_id": 0, "pad_id": 0,
                                  "drop_last": false, "bytes_dtype": "int64", "bin_window": 4,
                                  "method": ")" + method + R"("})");
    EXPECT_TRUE(spec.ok()) << spec.status().message();
    return *spec;
  }

  // Up to `max` rows (all: SIZE_MAX) of `it` after its Begin.
  static std::vector<std::vector<int64_t>> Take(PackedIteration& it, size_t max) {
    std::vector<std::vector<int64_t>> rows;
    std::vector<int64_t> row(kElasticSeqLen);
    while (rows.size() < max) {
      auto n = it.Next(1, row.data(), nullptr, nullptr);
      EXPECT_TRUE(n.ok()) << n.status().message();
      if (!n.ok() || *n == 0) break;
      rows.push_back(row);
    }
    return rows;
  }

  // The rows every role of the last of `segments` hands out (after the
  // rows it consumed there, RoleRows, unless `all`); one segment: from the
  // epoch's plan (Begin), else an elastic resume (BeginSegments).
  // `consumed` (when not empty) gives each role's rows there instead.
  std::vector<std::vector<int64_t>> RowsOf(const std::vector<PackSegment>& segments, bool all,
                                           const std::string& method = "concat",
                                           const std::vector<uint64_t>& consumed_by_role = {}) {
    const PackSegment& last = segments.back();
    const int64_t ranks = last.nodes * last.ranks_per_node;
    std::vector<std::vector<int64_t>> out;
    for (int64_t rank = 0; rank < ranks; ++rank) {
      auto ds = Open(rank, ranks);
      auto it = PackedIteration::Make(ds.get(), Spec(method));
      EXPECT_TRUE(it.ok()) << it.status().message();
      for (int64_t w = 0; w < last.workers; ++w) {
        const int64_t role = rank * last.workers + w;
        const size_t consumed = all                        ? SIZE_MAX
                                : consumed_by_role.empty() ? RoleRows(last, role)
                                                           : consumed_by_role[size_t(role)];
        Status st = segments.size() == 1
                        ? (*it)->Begin(0, w, last.workers, 0)
                        : (*it)->BeginSegments(0, segments, role, 0);
        EXPECT_TRUE(st.ok()) << st.message();
        for (auto& row : Take(**it, consumed)) out.push_back(std::move(row));
      }
    }
    return out;
  }

  // Every non-zero token of `rows`, sorted, against every token of the
  // dataset: each exactly once.
  static void ExpectEveryTokenOnce(const std::vector<std::vector<int64_t>>& rows) {
    std::vector<int64_t> got, want;
    for (const auto& r : rows) {
      for (int64_t t : r) {
        if (t != 0) got.push_back(t);
      }
    }
    for (int64_t i = 0; i < kElasticDocs; ++i) {
      for (int64_t t : ElasticDoc(i)) want.push_back(t);
    }
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, want);
  }

  testing::TempDir data_{"sluice_elastic_pack_test"};
};

struct Change {
  int64_t ranks, workers, new_ranks, new_workers;
};

std::string Named(const Change& c) {
  return std::to_string(c.ranks) + "x" + std::to_string(c.workers) + " -> " +
         std::to_string(c.new_ranks) + "x" + std::to_string(c.new_workers);
}

TEST_F(ElasticPackTest, EveryTokenComesOnceAcrossAChangeOfRanksAndWorkers) {
  for (const std::string method : {"concat", "bin"}) {
    for (const Change c : {Change{1, 1, 3, 1}, Change{3, 1, 1, 1}, Change{1, 1, 3, 2},
                           Change{3, 2, 1, 2}, Change{2, 2, 3, 1}}) {
      // Positions: batches each rank consumed, all while every worker has
      // rows (bin: before, inside and at the end of a window).
      for (uint64_t batches : {0, 1, 2, 3, 5, 6}) {
        SCOPED_TRACE(method + " " + Named(c) + " after " + std::to_string(batches) + " batches");
        const PackSegment before{1, c.ranks, c.workers, kElasticBatch,
                                 batches * kElasticBatch * uint64_t(c.ranks)};
        const PackSegment after{1, c.new_ranks, c.new_workers, kElasticBatch, 0};
        auto rows = RowsOf({before}, false, method);
        ASSERT_EQ(rows.size(), before.rows);  // the consumed rows exist: not the tail
        const auto rest = RowsOf({before, after}, true, method);
        EXPECT_EQ(RowsOf({before, after}, true, method), rest);  // deterministic
        rows.insert(rows.end(), rest.begin(), rest.end());
        ExpectEveryTokenOnce(rows);
      }
    }
  }
}

TEST_F(ElasticPackTest, TwoChangesAndASameShapeResumeAfterOne) {
  for (const std::string method : {"concat", "bin"}) {
    SCOPED_TRACE(method);
    const PackSegment one{1, 1, 1, kElasticBatch, 6};
    const PackSegment three{1, 3, 1, kElasticBatch, 12};  // 2 batches per rank
    const PackSegment back{1, 1, 1, kElasticBatch, 0};
    auto rows = RowsOf({one}, false, method);
    const auto mid = RowsOf({one, three}, false, method);
    ASSERT_EQ(mid.size(), 12u);
    rows.insert(rows.end(), mid.begin(), mid.end());
    const auto rest = RowsOf({one, three, back}, true, method);
    rows.insert(rows.end(), rest.begin(), rest.end());
    ExpectEveryTokenOnce(rows);
    // On the shape of the last change, skipping a role's rows continues it
    // row for row (a resume on the same shape after an elastic one).
    auto ds = Open(1, 3);
    auto it = PackedIteration::Make(ds.get(), Spec(method));
    ASSERT_TRUE(it.ok());
    ASSERT_TRUE((*it)->BeginSegments(0, {one, three}, 1, 0).ok());
    const auto whole = Take(**it, SIZE_MAX);
    ASSERT_GT(whole.size(), 7u);
    for (uint64_t k = 1; k <= 7; ++k) {
      ASSERT_TRUE((*it)->BeginSegments(0, {one, three}, 1, k).ok());
      EXPECT_EQ((*it)->rows(), k);
      EXPECT_EQ(Take(**it, SIZE_MAX),
                std::vector<std::vector<int64_t>>(whole.begin() + std::ptrdiff_t(k), whole.end()))
          << k;
    }
  }
}

TEST_F(ElasticPackTest, ASameShapeResumeAfterAnElasticOneIsExactInTheTail) {
  // 1 rank of 1 worker consumed 6 rows, then 1 rank of 2 or 3 workers: its
  // DataLoader deals the new roles' rows in rounds until all ran out. A
  // checkpoint there resumes on that shape with each worker continuing the
  // role whose turn it is (SegmentsResumePoint), row for row.
  bool tail = false;
  for (const std::string method : {"concat", "bin"}) {
    for (int64_t workers : {2, 3}) {
      const PackSegment one{1, 1, 1, kElasticBatch, 6};
      PackSegment now{1, 1, workers, kElasticBatch, 0};
      auto ds = Open(0, 1);
      auto it = PackedIteration::Make(ds.get(), Spec(method));
      ASSERT_TRUE(it.ok());
      std::vector<std::vector<std::vector<int64_t>>> whole;
      std::vector<uint64_t> totals;
      uint64_t sum = 0;
      for (int64_t w = 0; w < workers; ++w) {
        ASSERT_TRUE((*it)->BeginSegments(0, {one, now}, w, 0).ok());
        whole.push_back(Take(**it, SIZE_MAX));
        totals.push_back(whole.back().size());
        sum += totals.back();
      }
      for (uint64_t rows = sum - 12; rows < sum; rows += 3) {
        SCOPED_TRACE(method + " " + std::to_string(workers) + " workers, " +
                     std::to_string(rows) + " rows");
        for (int64_t w = 0; w < workers; ++w) {
          tail |= totals[size_t(w)] < WorkerRows(rows, kElasticBatch, uint64_t(w), uint64_t(workers));
        }
        now.rows = rows;
        for (int64_t j = 0; j < workers; ++j) {
          auto at = (*it)->SegmentsResumePoint(0, {one, now}, 0, j);
          ASSERT_TRUE(at.ok()) << at.status().message();
          const PackResumePoint want = TailResumePoint(totals, rows, kElasticBatch, uint64_t(j));
          EXPECT_EQ(at->role, want.role);
          EXPECT_EQ(at->rows, want.rows);
          ASSERT_TRUE((*it)->BeginSegments(0, {one, now}, int64_t(at->role), at->rows).ok());
          const auto& role_rows = whole[at->role];
          EXPECT_EQ(Take(**it, SIZE_MAX),
                    std::vector<std::vector<int64_t>>(
                        role_rows.begin() + std::ptrdiff_t(std::min<uint64_t>(at->rows, role_rows.size())),
                        role_rows.end()));
        }
      }
    }
  }
  EXPECT_TRUE(tail);  // some checkpoint had a worker run out
  auto ds = Open(0, 1);
  auto it = PackedIteration::Make(ds.get(), Spec());
  ASSERT_TRUE(it.ok());
  EXPECT_EQ((*it)->SegmentsResumePoint(0, {PackSegment{1, 1, 1, kElasticBatch, 2},
                                           PackSegment{1, 3, 2, kElasticBatch, 4}},
                                       3, 0)
                .status()
                .message(),
            "token packing: rank 3 worker 0 is not in the last segment's 3 ranks of 2 workers");
}

TEST_F(ElasticPackTest, EveryTokenComesOnceAfterAWorkerRanOutBeforeTheOthers) {
  // Checkpoints in the epoch's tail: each rank's DataLoader dealt rounds of
  // batches to its workers until one ran out, then to the others only
  // (worker_rows.h DealtRows); the state records only the job's rows.
  for (const std::string method : {"concat", "bin"}) {
    for (const Change c : {Change{1, 2, 3, 1}, Change{1, 3, 1, 2}, Change{3, 2, 1, 1},
                           Change{2, 2, 3, 2}}) {
      // Each role's rows on the old shape.
      const PackSegment whole{1, c.ranks, c.workers, kElasticBatch, 0};
      std::vector<uint64_t> totals;
      uint64_t fewest = UINT64_MAX;  // the rank with the fewest rows
      for (int64_t rank = 0; rank < c.ranks; ++rank) {
        auto ds = Open(rank, c.ranks);
        auto it = PackedIteration::Make(ds.get(), Spec(method));
        ASSERT_TRUE(it.ok());
        uint64_t sum = 0;
        for (int64_t w = 0; w < c.workers; ++w) {
          ASSERT_TRUE((*it)->Begin(0, w, c.workers, 0).ok());
          totals.push_back(Take(**it, SIZE_MAX).size());
          sum += totals.back();
        }
        fewest = std::min(fewest, sum);
      }
      bool tail = false;
      for (uint64_t rank_rows = fewest - 9; rank_rows <= fewest; rank_rows += 3) {
        SCOPED_TRACE(method + " " + Named(c) + " after " + std::to_string(rank_rows) +
                     " rows per rank");
        std::vector<uint64_t> consumed;
        for (int64_t rank = 0; rank < c.ranks; ++rank) {
          const std::vector<uint64_t> mine(totals.begin() + rank * c.workers,
                                           totals.begin() + (rank + 1) * c.workers);
          for (int64_t w = 0; w < c.workers; ++w) {
            tail |= mine[size_t(w)] <
                    WorkerRows(rank_rows, kElasticBatch, uint64_t(w), uint64_t(c.workers));
          }
          const auto dealt = DealtRows(mine, rank_rows, kElasticBatch, nullptr);
          consumed.insert(consumed.end(), dealt.begin(), dealt.end());
        }
        PackSegment before = whole;
        before.rows = rank_rows * uint64_t(c.ranks);
        const PackSegment after{1, c.new_ranks, c.new_workers, kElasticBatch, 0};
        auto rows = RowsOf({before}, false, method, consumed);
        ASSERT_EQ(rows.size(), before.rows);
        const auto rest = RowsOf({before, after}, true, method);
        EXPECT_EQ(RowsOf({before, after}, true, method), rest);  // deterministic
        rows.insert(rows.end(), rest.begin(), rest.end());
        ExpectEveryTokenOnce(rows);
      }
      EXPECT_TRUE(tail) << method << " " << Named(c);  // a worker ran out at some checkpoint
    }
  }
}

// Each of `ds`'s `workers` workers reads (epoch 0, from its start) the
// planned ids of role first_role + worker; returns the ids they read.
size_t ExpectWorkersRead(const StreamingDataset& ds,
                         const std::vector<std::vector<int64_t>>& planned, size_t first_role,
                         int64_t workers) {
  size_t held = 0;
  for (int64_t w = 0; w < workers; ++w) {
    auto ids = ds.WorkerIds(0, 0, w, workers);
    EXPECT_TRUE(ids.ok()) << ids.status().message();
    if (!ids.ok()) continue;
    EXPECT_EQ(planned[first_role + size_t(w)], *ids) << first_role << " " << w;
    held += ids->size();
  }
  return held;
}

// Another shape's plan is what its ranks read. Under replication a shape
// is its planning world: replicas 2r and 2r + 1 of 4 ranks read what rank
// r of 2 unreplicated ranks reads, and a replicated dataset plans a shape
// the same way (its replication not applied again).
TEST_F(ElasticPackTest, AnotherShapesPlanIsWhatItsRanksRead) {
  auto one = Open(0, 1);
  for (const int64_t replication : {1, 2}) {
    const int64_t groups = 3 - replication + 1, ranks = groups * replication;  // 3 or 2 x 2
    auto planned = one->ShapeWorkerIds(0, 1, groups, 2, kElasticBatch);
    ASSERT_TRUE(planned.ok()) << planned.status().message();
    ASSERT_EQ(planned->size(), size_t(groups * 2));
    const std::string more = R"(, "replication": )" + std::to_string(replication);
    for (int64_t rank = 0; rank < ranks; ++rank) {
      auto ds = Open(rank, ranks, more);
      ExpectWorkersRead(*ds, *planned, size_t(rank / replication * 2), 2);
      EXPECT_EQ(ds->ShapeWorkerIds(0, 1, groups, 2, kElasticBatch).value(), *planned);
    }
  }
  EXPECT_EQ(one->ShapeWorkerIds(0, 0, 1, 1, kElasticBatch).status().message(),
            "a world shape needs at least one node, rank per node, worker and sample per "
            "batch, and an epoch >= 0");
}

// Skipped steps (positions of the epoch) leave a shape's plan as they
// leave each of its ranks' iteration: steps of that shape's batch x ranks.
TEST_F(ElasticPackTest, AShapesPlanLeavesOutTheSkippedSteps) {
  const ResumeState start{0, 0, 1, 9176, 1, std::nullopt};
  const ResumeOptions skip{{}, {{3, 5}}, {}, {}};  // steps of 3 ranks x 2: positions 18..30
  auto one = Open(0, 1);
  ASSERT_TRUE(one->LoadState(start, skip).ok());  // one rank: positions 6..10
  auto planned = one->ShapeWorkerIds(0, 1, 3, 2, kElasticBatch);
  EXPECT_EQ(planned.status().message(),
            "planning another world shape: skipping steps: the skipped samples [6, 10) of epoch 0 "
            "are not a whole step (a multiple of the global batch 6 = batch_size 2 x 3 ranks)");
  for (int64_t rank = 0; rank < 3; ++rank) {
    auto ds = Open(rank, 3);
    ASSERT_TRUE(ds->LoadState(start, skip).ok());
    planned = ds->ShapeWorkerIds(0, 1, 3, 2, kElasticBatch);
    ASSERT_TRUE(planned.ok()) << planned.status().message();
    // 60 samples over 3 ranks, 2 steps of 2 skipped.
    EXPECT_EQ(ExpectWorkersRead(*ds, *planned, size_t(rank * 2), 2), 20u - 4u);
  }
}

TEST_F(ElasticPackTest, ARoleOutOfTheShapeIsRefused) {
  auto ds = Open(0, 1);
  const PackSegment one{1, 1, 1, kElasticBatch, 2};
  const PackSegment three{1, 3, 1, kElasticBatch, 0};
  auto it = PackedIteration::Make(ds.get(), Spec());
  ASSERT_TRUE(it.ok());
  EXPECT_EQ((*it)->BeginSegments(0, {one, three}, 3, 0).message(),
            "token packing: role 3 is not one of the last segment's 3");
}

}  // namespace
}  // namespace sluice
