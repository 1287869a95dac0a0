// A resume that proves itself: the order record a state carries refuses a
// state saved over other data, options or world (naming what changed), and
// skipped steps never come while every other step keeps its samples.
#include <gtest/gtest.h>

#include "engine/dataset/order_record.h"
#include "engine/dataset/resume_state.h"
#include "engine/dataset/stream_index.h"
#include "engine/dataset/streaming_dataset.h"
#include "tests/engine/dataset/dataset_test_util.h"

namespace sluice {
namespace {

using testing::ReadEpoch;
using testing::ScratchDir;
using testing::WriteSyntheticMds;

constexpr int64_t kBatch = 4;

DatasetOptions CheckOptions(const std::string& dir, int64_t rank = 0, int64_t ranks = 1) {
  DatasetOptions o;
  StreamOptions s;
  s.local = dir;
  o.streams.push_back(s);
  o.plan.shuffle = true;
  o.plan.shuffle_seed = 77;
  o.plan.batch_size = kBatch;
  o.world.rank = rank;  // one rank per node
  o.world.world_size = ranks;
  o.world.local_rank = 0;
  o.world.local_world_size = 1;
  o.prefetch_next_epoch = false;
  o.wait_timeout = std::chrono::seconds(20);
  return o;
}

std::unique_ptr<StreamingDataset> Open(const DatasetOptions& o) {
  auto ds = StreamingDataset::Open(o);
  EXPECT_TRUE(ds.ok()) << ds.status().message();
  return ds.ok() ? std::move(*ds) : nullptr;
}

// The state a run saves after `rank_samples` of epoch 0 (what a checkpoint
// holds), read back as a resume reads it.
ResumeState Saved(StreamingDataset& ds, uint64_t rank_samples) {
  auto state = ResumeStateFromJson(ResumeStateToJson(ds.State(rank_samples)));
  EXPECT_TRUE(state.ok()) << state.status().message();
  return *state;
}

std::vector<int64_t> Slice(const std::vector<int64_t>& v, size_t from, size_t to) {
  return std::vector<int64_t>(v.begin() + static_cast<std::ptrdiff_t>(from),
                              v.begin() + static_cast<std::ptrdiff_t>(std::min(to, v.size())));
}

TEST(ResumeCheck, OtherOptionsAreRefusedNamingWhatChangedAndNothingIsLoaded) {
  ScratchDir dir;
  WriteSyntheticMds(dir.path(), 200, 3000);
  auto ds = Open(CheckOptions(dir.path()));
  ASSERT_TRUE(ds->IterBegin(0, 0, 0, 1).ok());
  ResumeState state = Saved(*ds, 40);
  ASSERT_TRUE(state.order.has_value());

  DatasetOptions other = CheckOptions(dir.path());
  other.plan.batch_size = 8;
  other.plan.shuffle_algo = planner::ShuffleAlgo::kPy1s;
  auto resumed = Open(other);
  Status st = resumed->LoadState(state);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(),
            "resume state does not match this dataset: sampling shuffle_algo changed: saved "
            "\"py1e\", now \"py1s\"; sampling batch_size changed: saved 4, now 8 (to resume "
            "anyway, adapt \"sampling\")");
  // Refused: the dataset is as it was (its own seed, no resume offset).
  EXPECT_EQ(resumed->State(0).shuffle_seed, 77u);
  EXPECT_EQ(resumed->State(0).sample_in_epoch, 0);

  // The state's seed is adopted, as Mosaic's: another configured seed is no change.
  DatasetOptions seed = CheckOptions(dir.path());
  seed.plan.shuffle_seed = 5;
  EXPECT_TRUE(Open(seed)->LoadState(state).ok());

  // Told to adapt: loads, and the states it saves record the new options.
  ASSERT_TRUE(resumed->LoadState(state, ResumeOptions{{"sampling"}, {}, {}, {}}).ok());
  EXPECT_EQ(resumed->State(0).sample_in_epoch, 40);
  const JsonValue sampling{Saved(*resumed, 0).order->sampling};
  const JsonValue* batch = JsonMember(sampling, "batch_size");
  ASSERT_NE(batch, nullptr);
  EXPECT_EQ(std::get<int64_t>(batch->v), 8);
}

TEST(ResumeCheck, OtherDataIsRefusedNamingTheStreamAndItsFingerprints) {
  ScratchDir dir, grown;
  WriteSyntheticMds(dir.path(), 200, 3000);
  WriteSyntheticMds(grown.path(), 201, 3000);
  auto ds = Open(CheckOptions(dir.path()));
  ResumeState state = Saved(*ds, 8);
  auto other = Open(CheckOptions(grown.path()));
  const std::string was = IndexFingerprint(ds->stream_index(0));
  const std::string now = IndexFingerprint(other->stream_index(0));
  ASSERT_NE(was, now);
  const std::string name = "stream 0 (" + StreamRoot(CheckOptions(grown.path()).streams[0]) + ")";
  std::string expected = "resume state does not match this dataset: ";
  if (ds->num_shards() != other->num_shards()) {
    expected += name + " shards changed: saved " + std::to_string(ds->num_shards()) + ", now " +
                std::to_string(other->num_shards()) + "; ";
  }
  expected += name + " samples changed: saved 200, now 201; " + name + " index changed: saved \"" +
              was + "\", now \"" + now + "\" (to resume anyway, adapt \"streams\")";
  EXPECT_EQ(other->LoadState(state).message(), expected);
  EXPECT_TRUE(other->LoadState(state, ResumeOptions{{"streams"}, {}, {}, {}}).ok());

  // The same data in another folder is the same stream.
  ScratchDir copy;
  WriteSyntheticMds(copy.path(), 200, 3000);
  EXPECT_TRUE(Open(CheckOptions(copy.path()))->LoadState(state).ok());
}

TEST(ResumeCheck, AnotherWorldIsRefusedUnlessAdaptedThenRecorded) {
  ScratchDir dir;
  WriteSyntheticMds(dir.path(), 200, 3000);
  auto two = Open(CheckOptions(dir.path(), 0, 2));
  ResumeState state = Saved(*two, 4);
  EXPECT_EQ(state.order->worlds, (std::vector<WorldShape>{{2, 1}}));
  auto one = Open(CheckOptions(dir.path()));
  EXPECT_EQ(one->LoadState(state).message(),
            "resume state does not match this dataset: world changed: saved 2 nodes x 1 ranks "
            "per node, now 1 nodes x 1 ranks per node (to resume anyway, adapt \"world\")");
  ASSERT_TRUE(one->LoadState(state, ResumeOptions{{"world"}, {}, {}, {}}).ok());
  EXPECT_EQ(Saved(*one, 0).order->worlds, (std::vector<WorldShape>{{2, 1}, {1, 1}}));
  EXPECT_EQ(one->LoadState(state, ResumeOptions{{"everything"}, {}, {}, {}}).message(),
            "adapt: unknown part 'everything' (the parts are 'world', 'streams', 'sampling', 'schedule')");
}

TEST(ResumeCheck, AStateWithoutTheRecordLoadsAsMosaics) {
  ScratchDir dir;
  WriteSyntheticMds(dir.path(), 200, 3000);
  DatasetOptions o = CheckOptions(dir.path());
  o.plan.batch_size = 7;
  auto ds = Open(o);
  auto mosaic = ResumeStateFromJson(
      "{\"epoch\": 0, \"sample_in_epoch\": 12, \"num_canonical_nodes\": 3, \"shuffle_seed\": 4, "
      "\"initial_physical_nodes\": 3}");
  ASSERT_TRUE(mosaic.ok());
  ASSERT_TRUE(ds->LoadState(*mosaic).ok());
  ResumeState saved = Saved(*ds, 0);
  EXPECT_EQ(saved.sample_in_epoch, 12);
  EXPECT_EQ(saved.shuffle_seed, 4u);
  EXPECT_EQ(saved.num_canonical_nodes, 3);
  EXPECT_EQ(saved.order->worlds, (std::vector<WorldShape>{{1, 1}}));
}

TEST(ResumeCheck, SkippedStepsNeverComeAndTheOthersKeepTheirOrder) {
  ScratchDir dir;
  WriteSyntheticMds(dir.path(), 203, 3000);
  auto ds = Open(CheckOptions(dir.path()));
  const std::vector<int64_t> full = ReadEpoch(*ds, 0, 0, 0, 1, 5, nullptr);
  ASSERT_EQ(full.size(), 203u);
  ResumeState at8 = Saved(*ds, 0);
  at8.sample_in_epoch = 8;  // step 2 of global batch 4 (one rank)
  // Steps 3, 4 and 7, and the last step (50: samples 200..202).
  const ResumeOptions skip{{}, {{3, 5}, {7, 8}, {50, 60}}, {}, {}};
  std::vector<int64_t> expected = Slice(full, 8, 12);
  for (int64_t id : Slice(full, 20, 28)) expected.push_back(id);
  for (int64_t id : Slice(full, 32, 200)) expected.push_back(id);

  auto resumed = Open(CheckOptions(dir.path()));
  ASSERT_TRUE(resumed->LoadState(at8, skip).ok());
  EXPECT_EQ(ReadEpoch(*resumed, 0, 8, 0, 1, 3, nullptr), expected);
  // Two workers share the kept batches in turn, as a DataLoader takes them.
  std::vector<int64_t> w0 = ReadEpoch(*resumed, 0, 8, 0, 2, 3, nullptr);
  std::vector<int64_t> w1 = ReadEpoch(*resumed, 0, 8, 1, 2, 3, nullptr);
  std::vector<int64_t> dealt;
  for (size_t b = 0; b * kBatch < w0.size() + w1.size(); ++b) {
    const auto& w = b % 2 ? w1 : w0;
    for (int64_t id : Slice(w, (b / 2) * kBatch, (b / 2 + 1) * kBatch)) dealt.push_back(id);
  }
  EXPECT_EQ(dealt, expected);

  // The positions a state saves pass over the skipped steps, and a state
  // saved before a skipped range still skips it.
  ASSERT_TRUE(resumed->IterBegin(0, 8, 0, 1).ok());
  EXPECT_EQ(resumed->State(3).sample_in_epoch, 11);
  EXPECT_EQ(resumed->State(4).sample_in_epoch, 20);
  EXPECT_EQ(resumed->State(12).sample_in_epoch, 32);
  ResumeState before = Saved(*resumed, 0);  // position 8, the ranges in its record
  EXPECT_EQ(before.order->skips,
            (std::vector<SkipRange>{{0, 12, 20}, {0, 28, 32}, {0, 200, 240}}));
  auto again = Open(CheckOptions(dir.path()));
  ASSERT_TRUE(again->LoadState(before).ok());
  EXPECT_EQ(ReadEpoch(*again, 0, before.sample_in_epoch, 0, 1, 4, nullptr), expected);

  // skip_samples says the same in positions; halves of a step are refused.
  auto by_samples = Open(CheckOptions(dir.path()));
  ASSERT_TRUE(
      by_samples->LoadState(at8, ResumeOptions{{}, {}, {{12, 20}, {28, 32}, {200, 240}}, {}}).ok());
  EXPECT_EQ(ReadEpoch(*by_samples, 0, 8, 0, 1, 3, nullptr), expected);
  EXPECT_EQ(by_samples->LoadState(at8, ResumeOptions{{}, {}, {{12, 14}}, {}}).message(),
            "skip_samples: [12, 14) is not whole steps: its bounds must be multiples of the "
            "global batch 4");
  ResumeState at9 = at8;
  at9.sample_in_epoch = 9;
  EXPECT_EQ(by_samples->LoadState(at9, skip).message(),
            "skipping steps: the resume position 9 of epoch 0 is not a whole step (a multiple "
            "of the global batch 4 = batch_size 4 x 1 ranks)");
}

TEST(ResumeCheck, EveryRankSkipsTheSameSteps) {
  ScratchDir dir;
  WriteSyntheticMds(dir.path(), 160, 3000);
  // Two ranks (one per node), global batch 8: each rank's uninterrupted
  // order, then resumed at step 1 with steps 2, 3 and 9 skipped.
  std::vector<std::vector<int64_t>> full(2), resumed(2);
  ResumeState state;
  for (int64_t r = 0; r < 2; ++r) {
    auto ds = Open(CheckOptions(dir.path(), r, 2));
    full[r] = ReadEpoch(*ds, 0, 0, 0, 1, 5, nullptr);
    ASSERT_EQ(full[r].size(), 80u);
    if (r == 0) {
      ASSERT_TRUE(ds->IterBegin(0, 0, 0, 1).ok());
      state = Saved(*ds, kBatch);  // one step: position 8
      ASSERT_EQ(state.sample_in_epoch, 8);
    }
  }
  for (int64_t r = 0; r < 2; ++r) {
    auto ds = Open(CheckOptions(dir.path(), r, 2));
    ASSERT_TRUE(ds->LoadState(state, ResumeOptions{{}, {{2, 4}, {9, 10}}, {}, {}}).ok());
    resumed[r] = ReadEpoch(*ds, 0, state.sample_in_epoch, 0, 1, 3, nullptr);
    // Rank r's batch k is step k: steps 1, 4..8, 10.. kept.
    std::vector<int64_t> expected = Slice(full[r], 4, 8);
    for (int64_t id : Slice(full[r], 16, 36)) expected.push_back(id);
    for (int64_t id : Slice(full[r], 40, 80)) expected.push_back(id);
    EXPECT_EQ(resumed[r], expected) << "rank " << r;
    // The same steps named by samples they hold, each on one rank only:
    // rank 1's step 2, rank 0's step 3, rank 1's step 9.
    auto by_ids = Open(CheckOptions(dir.path(), r, 2));
    ResumeOptions ids;
    ids.skip_sample_ids = {full[1][9], full[0][15], full[1][36]};
    ASSERT_TRUE(by_ids->LoadState(state, ids).ok());
    EXPECT_EQ(ReadEpoch(*by_ids, 0, state.sample_in_epoch, 0, 1, 3, nullptr), expected)
        << "rank " << r;
  }
  EXPECT_EQ(resumed[0].size(), resumed[1].size());
  // A sample read before the state (rank 0's step 0) is no step ahead.
  auto late = Open(CheckOptions(dir.path(), 0, 2));
  ResumeOptions read;
  read.skip_sample_ids = {full[0][2]};
  EXPECT_EQ(late->LoadState(state, read).message(),
            "skip_sample_ids: sample " + std::to_string(full[0][2]) +
                " is not read in epoch 0 after sample_in_epoch 8 (read before the state was "
                "saved, or not a sample of this dataset's 160 per epoch)");
}

}  // namespace
}  // namespace sluice
