// The epoch checkpoints file's bytes: read back exactly, and never trusted
// when damaged or made for another request (checkpoints_file.h).
#include "engine/planner/checkpoints_file.h"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <cstring>

#include "base/file.h"

namespace sluice::planner {
namespace {

PlanRequest Request() {
  PlanRequest q;
  StreamSpec s;
  for (int i = 0; i < 40; ++i) s.shard_sizes.push_back(100 + 7 * (i % 5));
  q.streams.push_back(std::move(s));
  q.config.num_canonical_nodes = 6;
  q.config.batch_size = 4;
  q.config.shuffle = true;
  q.config.shuffle_algo = ShuffleAlgo::kPy1e;
  q.config.shuffle_block_size = 300;
  q.world = World{2, 2, 2, {}, {}, {}};
  q.epoch = 3;
  return q;
}

struct Made {
  EpochCheckpoints checkpoints;
  uint64_t key = 0;
  std::string bytes;
};

Made Make(const PlanRequest& q) {
  Made m;
  auto k = PlanCheckpoints(q);
  EXPECT_TRUE(k.ok()) << k.status().ToString();
  auto key = CheckpointsKey(q);
  EXPECT_TRUE(key.ok()) << key.status().ToString();
  m.checkpoints = *k;
  m.key = *key;
  m.bytes = SerializeCheckpoints(m.checkpoints, m.key);
  return m;
}

TEST(CheckpointsFileTest, ReadsBackEveryFieldAndState) {
  for (ShuffleAlgo algo : {ShuffleAlgo::kPy1e, ShuffleAlgo::kPy1s}) {
    PlanRequest q = Request();
    q.config.shuffle_algo = algo;
    const Made m = Make(q);
    EXPECT_EQ(m.bytes.size(), 88u + 40u * 6u);
    auto read = CheckpointsFromBytes(m.bytes, m.key, "f");
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    EXPECT_EQ(read->algo, algo);
    EXPECT_EQ(read->seed, m.checkpoints.seed);
    EXPECT_EQ(read->epoch, 3u);
    EXPECT_EQ(read->num_samples, m.checkpoints.num_samples);
    EXPECT_EQ(read->num_canonical_nodes, 6);
    EXPECT_EQ(read->block, m.checkpoints.block);
    EXPECT_EQ(read->py1e_narrow_block, m.checkpoints.py1e_narrow_block);
    ASSERT_EQ(read->node_start.size(), 6u);
    for (size_t i = 0; i < 6; ++i) {
      const numpy::Pcg64 &a = read->node_start[i], &b = m.checkpoints.node_start[i];
      EXPECT_TRUE(a.state() == b.state() && a.inc() == b.inc()) << i;
      EXPECT_EQ(a.has_buffered_u32(), b.has_buffered_u32());
      EXPECT_EQ(a.buffered_u32(), b.buffered_u32());
    }
    EXPECT_EQ(SerializeCheckpoints(*read, m.key), m.bytes);
    // Every worker's plan from them is its plan without them.
    for (int64_t node = 0; node < 2; ++node)
      for (int64_t rank = 0; rank < 2; ++rank)
        for (int64_t worker = 0; worker < 2; ++worker) {
          auto alone = PlanWorker(q, node, rank, worker);
          auto shared = PlanWorker(q, node, rank, worker, nullptr, &*read);
          ASSERT_TRUE(alone.ok() && shared.ok());
          EXPECT_EQ(*shared, *alone);
        }
  }
}

TEST(CheckpointsFileTest, DamagedBytesAreCorruptWithWhatIsWrong) {
  const Made m = Make(Request());
  std::string flipped = m.bytes;
  flipped[100] ^= 1;  // in node 0's record
  auto r = CheckpointsFromBytes(flipped, m.key, "/s/plan_checkpoints.3.bin");
  EXPECT_EQ(r.status().code(), StatusCode::kCorrupt);
  EXPECT_EQ(r.status().message(), "/s/plan_checkpoints.3.bin: checksum mismatch");

  r = CheckpointsFromBytes(std::string_view(m.bytes).substr(0, 200), m.key, "f");
  EXPECT_EQ(r.status().code(), StatusCode::kCorrupt);
  EXPECT_EQ(r.status().message(), "f: sections larger than the file's 200 bytes");
  r = CheckpointsFromBytes(std::string_view(m.bytes).substr(0, 88 + 80), m.key, "f");
  EXPECT_EQ(r.status().message(), "f: sections larger than the file's 168 bytes");
  r = CheckpointsFromBytes(m.bytes + std::string(40, '\0'), m.key, "f");
  EXPECT_EQ(r.status().message(), "f: 368 bytes where its header says 328");
  r = CheckpointsFromBytes(std::string_view(m.bytes).substr(0, 50), m.key, "f");
  EXPECT_EQ(r.status().message(), "f: 50 bytes, shorter than the 88-byte header of an epoch checkpoints file");
  r = CheckpointsFromBytes("", m.key, "f");
  EXPECT_EQ(r.status().message(), "f: 0 bytes, shorter than the 88-byte header of an epoch checkpoints file");

  std::string magic = m.bytes;
  magic[0] = 'X';
  EXPECT_EQ(CheckpointsFromBytes(magic, m.key, "f").status().message(), "f: not an epoch checkpoints file");
  std::string layout = m.bytes;
  layout[8] = 2;
  EXPECT_EQ(CheckpointsFromBytes(layout, m.key, "f").status().message(),
            "f: an epoch checkpoints file of layout 2, expected 1");
  // A record's impossible buffer flag, its checksum made to match.
  EpochCheckpoints odd = m.checkpoints;
  std::string bad = SerializeCheckpoints(odd, m.key);
  bad[88 + 32] = 2;
  checkpoints_layout::CheckpointsHeader h;
  std::memcpy(&h, bad.data(), sizeof(h));
  h.head.checksum = XXH3_64bits(bad.data() + 88, bad.size() - 88);
  std::memcpy(bad.data(), &h, sizeof(h));
  r = CheckpointsFromBytes(bad, m.key, "f");
  EXPECT_EQ(r.status().code(), StatusCode::kCorrupt);
  EXPECT_EQ(r.status().message(), "f: canonical node 0's generator state is impossible");
}

// tests/data/binary_files/plan_checkpoints.bin was written by the code
// before base/binary_file.h (main at c9be08a) for Request(): the layout on
// disk is unchanged, read and written to the byte.
TEST(CheckpointsFileTest, AFileWrittenBeforeTheSharedHeaderReadsAndWritesTheSameBytes) {
  const std::string old = *ReadFile(SLUICE_TEST_DATA_DIR "/binary_files/plan_checkpoints.bin");
  ASSERT_EQ(old.size(), 88u + 6 * 40);
  const Made m = Make(Request());
  EXPECT_EQ(m.bytes, old);
  auto read = CheckpointsFromBytes(old, m.key, "old");
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(SerializeCheckpoints(*read, m.key), old);
}

// Plans with parts long enough that PlanCheckpoints makes their words on a
// second thread (numpy::Pcg64Ahead): the files' bytes are those main wrote
// before that thread existed (XXH3-64 of each, taken at 8c8de98).
TEST(CheckpointsFileTest, LongPartsWriteTheBytesWrittenBefore) {
  struct Case {
    ShuffleAlgo algo;
    int64_t nodes, shards, size, block;
    uint64_t seed, epoch;
    uint64_t hash;
  };
  const Case cases[] = {
      {ShuffleAlgo::kPy1e, 4, 600, 5000, 0, 9176, 2, 17496505183840216694u},
      {ShuffleAlgo::kPy1e, 3, 250, 4096, 1 << 16, 7, 0, 2028958073633674896u},
      {ShuffleAlgo::kPy1e, 2, 40, 70000, 50000, 1, 5, 3802801588047701799u},  // blocks narrower than shards
      {ShuffleAlgo::kPy1s, 4, 600, 5000, 0, 9176, 2, 3021440880508614299u},
      {ShuffleAlgo::kPy1s, 5, 333, 3001, 0, 123456789, 1, 948023685450272680u},
  };
  for (const Case& c : cases) {
    PlanRequest q;
    StreamSpec s;
    for (int64_t i = 0; i < c.shards; ++i) s.shard_sizes.push_back(c.size + (i % 7 == 3 ? i : 0));
    q.streams.push_back(std::move(s));
    q.config.num_canonical_nodes = c.nodes;
    q.config.batch_size = 8;
    q.config.shuffle = true;
    q.config.shuffle_algo = c.algo;
    if (c.block > 0) q.config.shuffle_block_size = c.block;
    q.config.shuffle_seed = c.seed;
    q.world = World{2, 2, 2, {}, {}, {}};
    q.epoch = int64_t(c.epoch);
    const Made m = Make(q);
    EXPECT_EQ(XXH3_64bits(m.bytes.data(), m.bytes.size()), c.hash)
        << "algo " << int(c.algo) << " seed " << c.seed << " narrow " << m.checkpoints.py1e_narrow_block;
  }
}

TEST(CheckpointsFileTest, AnotherRequestsFileIsStale) {
  const Made m = Make(Request());
  PlanRequest next = Request();
  next.epoch = 4;
  auto key = CheckpointsKey(next);
  ASSERT_TRUE(key.ok());
  auto r = CheckpointsFromBytes(m.bytes, *key, "/s/plan_checkpoints.3.bin");
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(r.status().message(), "/s/plan_checkpoints.3.bin: made for another plan (stale)");
}

TEST(CheckpointsFileTest, KeyIsTheShuffleNotTheWorld) {
  const uint64_t key = *CheckpointsKey(Request());
  auto same = [&](auto change) {
    PlanRequest q = Request();
    change(q);
    return *CheckpointsKey(q) == key;
  };
  // The same checkpoints serve every world and resume point.
  EXPECT_TRUE(same([](PlanRequest& q) { q.world = World{3, 1, 4, {}, {}, {}}; }));
  EXPECT_TRUE(same([](PlanRequest& q) { q.sample_in_epoch = 120; }));
  EXPECT_TRUE(same([](PlanRequest& q) { q.config.batch_size = 7; }));
  EXPECT_TRUE(same([](PlanRequest& q) { q.config.partition_algo = PartitionAlgo::kOrig; }));
  // Anything they depend on is another key.
  EXPECT_FALSE(same([](PlanRequest& q) { q.epoch = 4; }));
  EXPECT_FALSE(same([](PlanRequest& q) { q.config.shuffle_seed = 1; }));
  EXPECT_FALSE(same([](PlanRequest& q) { q.config.shuffle_algo = ShuffleAlgo::kPy1s; }));
  EXPECT_FALSE(same([](PlanRequest& q) { q.config.shuffle_block_size = 301; }));
  EXPECT_FALSE(same([](PlanRequest& q) { q.config.num_canonical_nodes = 5; }));
  EXPECT_FALSE(same([](PlanRequest& q) { q.streams[0].shard_sizes[39] += 1; }));
  EXPECT_FALSE(same([](PlanRequest& q) { q.streams[0].shard_sizes.push_back(1); }));
  EXPECT_FALSE(same([](PlanRequest& q) { q.config.epoch_size = 3000; }));
  EXPECT_FALSE(same([](PlanRequest& q) { q.config.sampling_granularity = 2; }));
  // num_canonical_nodes unset: its default follows the node count.
  PlanRequest a = Request(), b = Request();
  a.config.num_canonical_nodes.reset();
  b.config.num_canonical_nodes.reset();
  b.world.num_nodes = 1;
  EXPECT_NE(*CheckpointsKey(a), *CheckpointsKey(b));
}

}  // namespace
}  // namespace sluice::planner
