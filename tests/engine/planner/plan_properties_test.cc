// Properties over many random configurations (random batching):
// - elastic determinism: for a fixed number of canonical nodes the global
//   sample sequence is the same for every world that divides it;
// - every sample appears exactly as often per epoch as its weight says;
// - resuming at sample_in_epoch yields exactly the tail of the uninterrupted
//   sequence;
// - one worker's plan equals its slice of the whole array.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "engine/planner/plan.h"
#include "tests/engine/planner/orig_sequence.h"

namespace sluice::planner {
namespace {

std::vector<int64_t> Divisors(int64_t c) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d <= c; ++d)
    if (c % d == 0) out.push_back(d);
  return out;
}

class Random {
 public:
  explicit Random(uint64_t seed) : gen_(seed) {}
  int64_t Int(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(gen_); }
  template <typename T>
  const T& Pick(const std::vector<T>& v) { return v[size_t(Int(0, int64_t(v.size()) - 1))]; }

 private:
  std::mt19937_64 gen_;
};

const std::vector<ShuffleAlgo> kAlgos{ShuffleAlgo::kNaive, ShuffleAlgo::kPy1b, ShuffleAlgo::kPy1br,
                                      ShuffleAlgo::kPy1e,  ShuffleAlgo::kPy1s, ShuffleAlgo::kPy2s};

PlanRequest RandomRequest(Random& rnd, int64_t C) {
  PlanRequest q;
  const int64_t streams = rnd.Int(1, 3);
  for (int64_t s = 0; s < streams; ++s) {
    StreamSpec spec;
    const int64_t shards = rnd.Int(1, 6);
    for (int64_t i = 0; i < shards; ++i) spec.shard_sizes.push_back(rnd.Int(i == 0 ? 1 : 0, 40));
    q.streams.push_back(spec);
  }
  // Make sure the epoch has at least C samples (py1e needs every node fed).
  int64_t n = 0;
  for (auto& s : q.streams)
    for (int64_t z : s.shard_sizes) n += z;
  if (n < C) q.streams[0].shard_sizes[0] += C - n;
  q.config.num_canonical_nodes = C;
  q.config.batch_size = rnd.Int(1, 5);
  q.config.shuffle = rnd.Int(0, 4) != 0;
  q.config.shuffle_algo = rnd.Pick(kAlgos);
  q.config.shuffle_seed = uint64_t(rnd.Int(0, 1 << 20));
  q.config.shuffle_block_size = rnd.Int(2, 100);
  q.config.partition_algo = rnd.Int(0, 1) ? PartitionAlgo::kOrig : PartitionAlgo::kRelaxed;
  q.epoch = rnd.Int(0, 3);
  return q;
}

int64_t EpochSize(const PlanRequest& q) {
  auto d = DerivePlan(q);
  return d.ok() ? d->weighting.epoch_size : -1;
}

TEST(PlanPropertiesTest, ElasticDeterminism) {
  Random rnd(1);
  for (int iter = 0; iter < 150; ++iter) {
    const int64_t C = rnd.Int(1, 12);
    PlanRequest q = RandomRequest(rnd, C);
    const int64_t E = EpochSize(q);
    ASSERT_GT(E, 0);
    const int64_t len = (E + C - 1) / C * C;  // C rows of ceil(E/C)
    std::vector<int64_t> reference;
    for (int world = 0; world < 4; ++world) {
      q.world.num_nodes = rnd.Pick(Divisors(C));
      q.world.ranks_per_node = rnd.Int(1, 4);
      q.world.workers_per_rank = rnd.Int(1, 3);
      q.config.batch_size = rnd.Int(1, 5);
      auto work = PlanEpoch(q);
      ASSERT_TRUE(work.ok()) << work.status().ToString();
      auto seq = testing::OrigGlobalSequence(*work, len);
      if (world == 0) {
        reference = seq;
      } else {
        ASSERT_EQ(seq, reference) << "iter " << iter << " C=" << C << " P=" << q.world.num_nodes
                                  << " R=" << q.world.ranks_per_node << " W=" << q.world.workers_per_rank;
      }
    }
  }
}

TEST(PlanPropertiesTest, SamplesAppearAsOftenAsWeighted) {
  Random rnd(2);
  for (int iter = 0; iter < 150; ++iter) {
    const int64_t C = rnd.Int(1, 8);
    PlanRequest q = RandomRequest(rnd, C);
    q.world.num_nodes = rnd.Pick(Divisors(C));
    q.world.ranks_per_node = rnd.Int(1, 4);
    q.world.workers_per_rank = rnd.Int(1, 3);
    // Choose per stream so the epoch is C*R*m: no short rows, no rank padding,
    // so every drawn sample appears exactly once in the plan.
    const int64_t E = C * q.world.ranks_per_node * rnd.Int(1, 30);
    int64_t left = E;
    for (size_t s = 0; s < q.streams.size(); ++s) {
      int64_t n = 0;
      for (int64_t z : q.streams[s].shard_sizes) n += z;
      if (n == 0) q.streams[s].shard_sizes.push_back(n = 3);
      const int64_t c = s + 1 == q.streams.size() ? left : rnd.Int(0, left);
      q.streams[s].weight.choose = c;
      left -= c;
    }
    q.config.sampling_granularity = rnd.Int(1, 4);
    auto d = DerivePlan(q);
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    ASSERT_EQ(d->weighting.epoch_size, E);
    auto work = PlanEpoch(q);
    ASSERT_TRUE(work.ok()) << work.status().ToString();
    std::map<int64_t, int64_t> count;
    int64_t real = 0;
    for (int64_t id : work->ids)
      if (id != -1) ++count[id], ++real;
    ASSERT_EQ(real, E) << "iter " << iter;
    for (size_t s = 0; s < q.streams.size(); ++s) {
      const int64_t first = d->stream_first_id[s];
      int64_t n = 0;
      for (int64_t z : q.streams[s].shard_sizes) n += z;
      const int64_t c = *q.streams[s].weight.choose;
      int64_t total = 0;
      for (int64_t id = first; id < first + n; ++id) {
        const int64_t k = count.count(id) ? count[id] : 0;
        // Whole repeats for everyone, plus at most one more.
        EXPECT_GE(k, c / n) << "iter " << iter << " id " << id;
        EXPECT_LE(k, c / n + 1) << "iter " << iter << " id " << id;
        total += k;
      }
      EXPECT_EQ(total, c) << "iter " << iter << " stream " << s;
    }
  }
}

TEST(PlanPropertiesTest, ResumeYieldsTheTail) {
  Random rnd(3);
  for (int iter = 0; iter < 150; ++iter) {
    const int64_t C = rnd.Int(1, 8);
    PlanRequest q = RandomRequest(rnd, C);
    q.world.num_nodes = rnd.Pick(Divisors(C));
    q.world.ranks_per_node = rnd.Int(1, 3);
    q.world.workers_per_rank = rnd.Int(1, 3);
    const int64_t E = EpochSize(q);
    const int64_t len = (E + C - 1) / C * C;
    auto full = PlanEpoch(q);
    ASSERT_TRUE(full.ok()) << full.status().ToString();
    const auto whole = testing::OrigGlobalSequence(*full, len);
    for (int r = 0; r < 3; ++r) {
      q.sample_in_epoch = rnd.Int(0, E);
      const int64_t drop = q.sample_in_epoch - q.sample_in_epoch % q.world.num_nodes;
      auto resumed = PlanEpoch(q);
      ASSERT_TRUE(resumed.ok()) << resumed.status().ToString();
      EXPECT_EQ(testing::OrigGlobalSequence(*resumed, len - drop),
                std::vector<int64_t>(whole.begin() + drop, whole.end()))
          << "iter " << iter << " resume " << q.sample_in_epoch;
    }
    q.sample_in_epoch = 0;
  }
}

TEST(PlanPropertiesTest, WorkerPlanIsItsSlice) {
  Random rnd(4);
  for (int iter = 0; iter < 100; ++iter) {
    const int64_t C = rnd.Int(1, 8);
    PlanRequest q = RandomRequest(rnd, C);
    q.world.num_nodes = rnd.Pick(Divisors(C));
    q.world.ranks_per_node = rnd.Int(1, 3);
    q.world.workers_per_rank = rnd.Int(1, 3);
    q.sample_in_epoch = rnd.Int(0, 10);
    auto full = PlanEpoch(q);
    ASSERT_TRUE(full.ok()) << full.status().ToString();
    for (int64_t p = 0; p < q.world.num_nodes; ++p)
      for (int64_t r = 0; r < q.world.ranks_per_node; ++r)
        for (int64_t w = 0; w < q.world.workers_per_rank; ++w) {
          auto mine = PlanWorker(q, p, r, w);
          ASSERT_TRUE(mine.ok()) << mine.status().ToString();
          const int64_t* begin = full->ids.data() + full->Offset(p, r, w, 0, 0);
          std::vector<int64_t> expect(begin, begin + full->batches() * full->batch_size());
          std::erase(expect, -1);
          ASSERT_EQ(*mine, expect) << "iter " << iter;
        }
  }
}

}  // namespace
}  // namespace sluice::planner
