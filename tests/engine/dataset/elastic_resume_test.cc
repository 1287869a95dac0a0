// Resumption on a different number of physical nodes, as Mosaic permits: a
// run on 4 nodes (4 canonical nodes) is interrupted at several positions and
// resumed from its state on 2, 1 and 3 nodes. Each simulated node is its own
// StreamingDataset in this process (explicit world), reading one local
// dataset in place.
#include <algorithm>
#include <map>

#include <gtest/gtest.h>

#include "engine/dataset/resume_state.h"
#include "engine/dataset/streaming_dataset.h"
#include "tests/engine/dataset/dataset_test_util.h"

namespace sluice {
namespace {

using testing::ScratchDir;

// 960 = C(4) x P(4) x W(2) x B(4) x 15: no short canonical row, no padding.
constexpr int64_t kSamples = 960;
constexpr int64_t kCanonical = 4, kBatch = 4;

DatasetOptions NodeOptions(const std::string& dir, int64_t node, int64_t nodes) {
  DatasetOptions o;
  StreamOptions s;
  s.local = dir;
  o.streams.push_back(s);
  o.plan.shuffle = true;
  o.plan.shuffle_seed = 31;
  o.plan.batch_size = kBatch;
  o.plan.num_canonical_nodes = kCanonical;
  o.world.rank = node;  // one rank per node
  o.world.world_size = nodes;
  o.world.local_rank = 0;
  o.world.local_world_size = 1;
  o.wait_timeout = std::chrono::seconds(20);
  return o;
}

// Reads the rest of one worker's epoch in batches of 5.
std::vector<int64_t> ReadRest(StreamingDataset& ds) {
  std::vector<int64_t> all, ids(5);
  std::vector<SampleFields> fields;
  for (;;) {
    auto n = ds.NextBatch(5, ids.data(), &fields);
    EXPECT_TRUE(n.ok()) << n.status().message();
    if (!n.ok() || *n == 0) return all;
    all.insert(all.end(), ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(*n));
  }
}

// Mosaic's global order of a run with one rank per node: sample k went to
// node k % P, whose q-th sample (q = k / P) went to worker (q / B) % W at
// position (q / (W B)) B + q % B. `ids[node][worker]`; stops at `count`.
std::vector<int64_t> GlobalOrder(const std::vector<std::vector<std::vector<int64_t>>>& ids,
                                 int64_t workers, int64_t count) {
  const int64_t nodes = static_cast<int64_t>(ids.size());
  std::vector<int64_t> global;
  for (int64_t k = 0; k < count; ++k) {
    int64_t q = k / nodes;
    int64_t w = (q / kBatch) % workers, pos = (q / (workers * kBatch)) * kBatch + q % kBatch;
    const auto& list = ids[static_cast<size_t>(k % nodes)][static_cast<size_t>(w)];
    EXPECT_LT(static_cast<size_t>(pos), list.size()) << "sample " << k;
    if (static_cast<size_t>(pos) >= list.size()) break;
    global.push_back(list[static_cast<size_t>(pos)]);
  }
  return global;
}

std::map<int64_t, int> Counts(const std::vector<int64_t>& ids) {
  std::map<int64_t, int> c;
  for (int64_t id : ids) ++c[id];
  return c;
}

TEST(StreamingDatasetElasticResume, ResumedOnFewerOrOtherNodesYieldsTheTail) {
  ScratchDir dir;
  testing::WriteSyntheticMds(dir.path(), static_cast<int>(kSamples), 3000);
  constexpr int64_t kEpoch = 1;

  // The uninterrupted run on 4 nodes, one worker each.
  std::vector<std::unique_ptr<StreamingDataset>> four;
  std::vector<std::vector<std::vector<int64_t>>> full_ids(4);
  for (int64_t n = 0; n < 4; ++n) {
    auto ds = StreamingDataset::Open(NodeOptions(dir.path(), n, 4));
    ASSERT_TRUE(ds.ok()) << ds.status().message();
    ASSERT_TRUE((*ds)->IterBegin(kEpoch, 0, 0, 1).ok());
    full_ids[n].push_back(ReadRest(**ds));
    four.push_back(std::move(*ds));
  }
  const std::vector<int64_t> order = GlobalOrder(full_ids, 1, kSamples);
  ASSERT_EQ(order.size(), static_cast<size_t>(kSamples));
  ASSERT_EQ(Counts(order).size(), static_cast<size_t>(kSamples)) << "each sample once";
  {
    // The same epoch read by one process is the same global order.
    auto one = StreamingDataset::Open(NodeOptions(dir.path(), 0, 1));
    ASSERT_TRUE(one.ok());
    ASSERT_TRUE((*one)->IterBegin(kEpoch, 0, 0, 1).ok());
    EXPECT_EQ(ReadRest(**one), order);
  }

  for (int64_t per_rank : {0, 12, 37, 150, 239}) {
    // Interrupt: every rank of the 4-node run consumed `per_rank` samples.
    std::vector<int64_t> consumed;
    for (int64_t n = 0; n < 4; ++n) {
      ASSERT_TRUE(four[n]->IterBegin(kEpoch, 0, 0, 1).ok());
      std::vector<int64_t> ids(static_cast<size_t>(per_rank) + 1);
      std::vector<SampleFields> fields;
      int64_t got = 0;
      while (got < per_rank) {
        auto k = four[n]->NextBatch(static_cast<size_t>(std::min<int64_t>(7, per_rank - got)),
                                    ids.data(), &fields);
        ASSERT_TRUE(k.ok());
        ASSERT_GT(*k, 0u);
        consumed.insert(consumed.end(), ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(*k));
        got += static_cast<int64_t>(*k);
      }
    }
    auto state = ResumeStateFromJson(ResumeStateToJson(four[0]->State(static_cast<uint64_t>(per_rank))));
    ASSERT_TRUE(state.ok());
    ASSERT_EQ(state->sample_in_epoch, 4 * per_rank);
    ASSERT_EQ(state->initial_physical_nodes, 4);
    ASSERT_EQ(state->num_canonical_nodes, kCanonical);
    // What was consumed is the head of the global order.
    EXPECT_EQ(Counts(consumed),
              Counts(std::vector<int64_t>(order.begin(), order.begin() + 4 * per_rank)));

    // 2 and 1 nodes divide the 4 canonical nodes: Mosaic's orig partition,
    // sample_in_epoch rounded down to a multiple of the new node count, and
    // the resumed run's global order is exactly the rest of the order. 3
    // nodes do not: the relaxed partition re-deals orig(initial_P = 4)'s
    // global batches (B 4 -> 3 per node), sample_in_epoch rounded down to a
    // multiple of 4, so the union is the rest of the order.
    for (int64_t nodes : {2, 1, 3}) {
      constexpr int64_t kWorkers = 2;
      std::vector<std::vector<std::vector<int64_t>>> ids(static_cast<size_t>(nodes));
      std::vector<int64_t> all;
      for (int64_t n = 0; n < nodes; ++n) {
        DatasetOptions o = NodeOptions(dir.path(), n, nodes);
        o.plan.num_canonical_nodes.reset();  // the state's values win
        o.plan.shuffle_seed = 5;
        auto ds = StreamingDataset::Open(o);
        ASSERT_TRUE(ds.ok()) << ds.status().message();
        // Another world: Mosaic's elastic resume, asked for.
        Status loaded = (*ds)->LoadState(*state, ResumeOptions{{"world"}, {}, {}, {}});
        ASSERT_TRUE(loaded.ok()) << loaded.message();
        for (int64_t w = 0; w < kWorkers; ++w) {
          Status begun = (*ds)->IterBegin(state->epoch, state->sample_in_epoch, w, kWorkers);
          ASSERT_TRUE(begun.ok()) << begun.message();
          ids[n].push_back(ReadRest(**ds));
          all.insert(all.end(), ids[n].back().begin(), ids[n].back().end());
        }
      }
      const int64_t round_to = nodes == 3 ? 4 : nodes;
      const int64_t drop = state->sample_in_epoch - state->sample_in_epoch % round_to;
      std::vector<int64_t> tail(order.begin() + drop, order.end());
      SCOPED_TRACE("interrupted after " + std::to_string(per_rank) + " samples per rank, resumed on " +
                   std::to_string(nodes) + " nodes");
      EXPECT_EQ(Counts(all), Counts(tail));
      if (nodes != 3) {
        EXPECT_EQ(GlobalOrder(ids, kWorkers, kSamples - drop), tail);
      }
    }
  }
}

}  // namespace
}  // namespace sluice
