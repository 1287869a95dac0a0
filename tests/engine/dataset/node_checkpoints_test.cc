// The node's shared plan checkpoints (node_checkpoints.h): made once, read
// by the node's other processes, equal to PlanCheckpoints; damaged,
// truncated and stale files made again, never trusted; racing processes
// and a maker killed mid-write leave every process the right checkpoints;
// a dataset's plans through them equal its plans without.
#include "engine/dataset/node_checkpoints.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <tuple>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/file.h"
#include "base/mapped_file.h"
#include "engine/cache/state_dir.h"
#include "engine/dataset/streaming_dataset.h"
#include "engine/planner/checkpoints_file.h"
#include "tests/engine/dataset/dataset_test_util.h"
#include "tests/engine/dataset/multiprocess_util.h"

namespace sluice {
namespace {

using testing::ScratchDir;

planner::PlanRequest Request(int64_t epoch = 2) {
  planner::PlanRequest q;
  planner::StreamSpec s;
  for (int i = 0; i < 60; ++i) s.shard_sizes.push_back(90 + 11 * (i % 7));
  q.streams.push_back(std::move(s));
  q.config.num_canonical_nodes = 8;
  q.config.batch_size = 4;
  q.config.shuffle = true;
  q.config.shuffle_algo = planner::ShuffleAlgo::kPy1e;
  q.config.shuffle_block_size = 400;
  q.world = planner::World{2, 2, 2, {}, {}, {}};
  q.epoch = epoch;
  return q;
}

NodeCheckpointsPlace Place(const std::string& root) {
  return NodeCheckpointsPlace{root, std::chrono::seconds(30), Env::Default()};
}

std::string FileOf(const std::string& root, const planner::PlanRequest& q) {
  auto path = NodeCheckpointsPath(root, q);
  EXPECT_TRUE(path.ok()) << path.status().ToString();
  return path.ok() ? *path : "";
}

// The bytes a correct file holds for `q`.
std::string Expected(const planner::PlanRequest& q) {
  auto k = planner::PlanCheckpoints(q);
  auto key = planner::CheckpointsKey(q);
  EXPECT_TRUE(k.ok() && key.ok());
  return planner::SerializeCheckpoints(*k, *key);
}

// Every worker of q's world planned from `k` as it is planned alone.
bool PlansEqual(const planner::PlanRequest& q, const planner::EpochCheckpoints& k) {
  for (int64_t n = 0; n < q.world.num_nodes; ++n)
    for (int64_t r = 0; r < q.world.ranks_per_node; ++r)
      for (int64_t w = 0; w < q.world.workers_per_rank; ++w) {
        auto alone = planner::PlanWorker(q, n, r, w);
        auto shared = planner::PlanWorker(q, n, r, w, nullptr, &k);
        if (!alone.ok() || !shared.ok() || *alone != *shared) return false;
      }
  return true;
}

// A new scratch folder may get a deleted one's inode, and with it that
// folder's state (state_dir.h): its checkpoints files are removed first.
void ForgetEarlierFolders(const std::string& root) {
  auto state = CacheStateDir(root);
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(*state, ec)) {
    if (e.path().filename().string().rfind("plan_checkpoints.", 0) == 0) std::filesystem::remove(e.path());
  }
}

ino_t InodeOf(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

TEST(NodeCheckpoints, MadeOnceThenReadByTheOthers) {
  ScratchDir dir;
  ForgetEarlierFolders(dir.path());
  const planner::PlanRequest q = Request();
  bool made = false;
  auto first = NodeEpochCheckpoints(Place(dir.path()), q, &made);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_TRUE(*first);
  EXPECT_TRUE(made);
  const std::string path = FileOf(dir.path(), q);
  EXPECT_EQ(*ReadFile(path, 1 << 20), Expected(q));
  EXPECT_TRUE(PlansEqual(q, **first));
  const ino_t inode = InodeOf(path);

  // Another world and a resume point read the same file.
  planner::PlanRequest other = q;
  other.world = planner::World{4, 1, 2, {}, {}, {}};
  other.sample_in_epoch = 24;
  auto second = NodeEpochCheckpoints(Place(dir.path()), other, &made);
  ASSERT_TRUE(second.ok() && *second);
  EXPECT_FALSE(made);
  EXPECT_EQ(InodeOf(path), inode);
  EXPECT_EQ(planner::SerializeCheckpoints(**second, *planner::CheckpointsKey(q)), Expected(q));
  EXPECT_TRUE(PlansEqual(other, **second));

  // Another epoch has its own file.
  auto next = NodeEpochCheckpoints(Place(dir.path()), Request(3), &made);
  ASSERT_TRUE(next.ok() && *next);
  EXPECT_TRUE(made);
  EXPECT_EQ(*ReadFile(FileOf(dir.path(), Request(3)), 1 << 20), Expected(Request(3)));
  EXPECT_EQ(InodeOf(path), inode);
}

TEST(NodeCheckpoints, OtherShufflesHaveNone) {
  ScratchDir dir;
  ForgetEarlierFolders(dir.path());
  for (planner::ShuffleAlgo algo : {planner::ShuffleAlgo::kPy1b, planner::ShuffleAlgo::kPy1br,
                                    planner::ShuffleAlgo::kPy2s, planner::ShuffleAlgo::kNaive}) {
    planner::PlanRequest q = Request();
    q.config.shuffle_algo = algo;
    bool made = true;
    auto got = NodeEpochCheckpoints(Place(dir.path()), q, &made);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(*got, nullptr);
    EXPECT_FALSE(made);
  }
  planner::PlanRequest unshuffled = Request();
  unshuffled.config.shuffle = false;
  EXPECT_EQ(*NodeEpochCheckpoints(Place(dir.path()), unshuffled), nullptr);
  EXPECT_FALSE(FileExists(FileOf(dir.path(), Request())));
}

TEST(NodeCheckpoints, DamagedTruncatedOrStaleFilesAreMadeAgain) {
  ScratchDir dir;
  ForgetEarlierFolders(dir.path());
  const planner::PlanRequest q = Request();
  const uint64_t key = *planner::CheckpointsKey(q);
  const std::string path = FileOf(dir.path(), q);
  const std::string good = Expected(q);
  planner::PlanRequest reseeded = q;
  reseeded.config.shuffle_seed = 17;
  struct Case {
    std::string name, bytes, error;
    StatusCode code;
  };
  std::string flipped = good;
  flipped[good.size() - 3] ^= 0x40;
  const std::vector<Case> cases = {
      {"damaged", flipped, path + ": checksum mismatch", StatusCode::kCorrupt},
      {"truncated", good.substr(0, good.size() - 40),
       path + ": sections larger than the file's " + std::to_string(good.size() - 40) + " bytes",
       StatusCode::kCorrupt},
      {"empty", "", path + ": 0 bytes, shorter than the 88-byte header of an epoch checkpoints file", StatusCode::kCorrupt},
      {"stale", Expected(reseeded), path + ": made for another plan (stale)", StatusCode::kNotFound},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ASSERT_TRUE(WriteFileAtomic(path, c.bytes).ok());
    // What a reader sees in it: never checkpoints.
    auto read = planner::CheckpointsFromBytes(*ReadFile(path, 1 << 20), key, path);
    EXPECT_EQ(read.status().code(), c.code);
    EXPECT_EQ(read.status().message(), c.error);
    bool made = false;
    auto got = NodeEpochCheckpoints(Place(dir.path()), q, &made);
    ASSERT_TRUE(got.ok() && *got) << got.status().ToString();
    EXPECT_TRUE(made);
    EXPECT_EQ(*ReadFile(path, 1 << 20), good);
    EXPECT_TRUE(PlansEqual(q, **got));
  }
}

// The names of the plan checkpoints files in `root`'s state folder.
std::set<std::string> CheckpointsFiles(const std::string& root) {
  std::set<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(*CacheStateDir(root))) {
    const std::string name = e.path().filename().string();
    if (name.rfind("plan_checkpoints.", 0) == 0) names.insert(name);
  }
  return names;
}

std::string NameOf(const std::string& root, const planner::PlanRequest& q) {
  return std::filesystem::path(FileOf(root, q)).filename().string();
}

// Lifetime (node_checkpoints.h): publishing epoch E removes the plan's
// files of epochs before E - 1 and no other plan's (and any file of the
// unnamed layout before); a process that maps a
// file while it is removed still reads it, and plans, exactly; an epoch
// wanted again after its file went is made again.
TEST(NodeCheckpoints, PublishingAnEpochRemovesThePlansFilesBeforeThePreviousOne) {
  ScratchDir dir;
  ForgetEarlierFolders(dir.path());
  const std::string root = dir.path();
  // A file of the layout before plans named their files: removed by the
  // first publish.
  ASSERT_TRUE(WriteFileAtomic(JoinPath(*CacheStateDir(root), "plan_checkpoints.7.bin"), Expected(Request(7))).ok());
  planner::PlanRequest other = Request(0);
  other.config.shuffle_seed = 17;
  ASSERT_TRUE(NodeEpochCheckpoints(Place(root), other).ok());
  EXPECT_EQ(CheckpointsFiles(root), (std::set<std::string>{"plan_checkpoints.lock", NameOf(root, other)}));
  ASSERT_TRUE(NodeEpochCheckpoints(Place(root), Request(0)).ok());
  EXPECT_NE(NameOf(root, other), NameOf(root, Request(0)));
  auto mapped = MappedFile::Open(FileOf(root, Request(0)));
  ASSERT_TRUE(mapped.ok()) << mapped.status().ToString();
  for (int64_t epoch = 1; epoch <= 4; ++epoch) {
    SCOPED_TRACE(epoch);
    bool made = false;
    auto got = NodeEpochCheckpoints(Place(root), Request(epoch), &made);
    ASSERT_TRUE(got.ok() && *got) << got.status().ToString();
    EXPECT_TRUE(made);
    const std::set<std::string> want = {"plan_checkpoints.lock", NameOf(root, other),
                                        NameOf(root, Request(epoch - 1)), NameOf(root, Request(epoch))};
    EXPECT_EQ(CheckpointsFiles(root), want);
  }
  EXPECT_FALSE(FileExists(FileOf(root, Request(0))));
  // Removed (epoch 2's publish), still mapped here: the same bytes, the same plans.
  EXPECT_EQ(std::string(mapped->data()), Expected(Request(0)));
  auto read = planner::CheckpointsFromBytes(mapped->data(), *planner::CheckpointsKey(Request(0)), "mapped");
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_TRUE(PlansEqual(Request(0), *read));
  // Epoch 1 wanted again (a late process): made again; the newer files stay.
  bool made = false;
  auto again = NodeEpochCheckpoints(Place(root), Request(1), &made);
  ASSERT_TRUE(again.ok() && *again);
  EXPECT_TRUE(made);
  EXPECT_EQ(*ReadFile(FileOf(root, Request(1)), 1 << 20), Expected(Request(1)));
  const std::set<std::string> want = {"plan_checkpoints.lock", NameOf(root, other), NameOf(root, Request(1)),
                                      NameOf(root, Request(3)), NameOf(root, Request(4))};
  EXPECT_EQ(CheckpointsFiles(root), want);
}

// The checkpoints files and every temporary in root's state folder (the
// folder may hold a deleted scratch folder's other files: ForgetEarlierFolders).
std::set<std::string> StateFiles(const std::string& root) {
  std::set<std::string> names = CheckpointsFiles(root);
  for (const auto& e : std::filesystem::directory_iterator(*CacheStateDir(root))) {
    const std::string name = e.path().filename().string();
    if (ParseTempName(name)) names.insert(name);
  }
  return names;
}

void SetAgeDays(const std::string& path, double days) {
  const auto when = std::filesystem::file_time_type::clock::now() -
                    std::chrono::duration_cast<std::filesystem::file_time_type::duration>(
                        std::chrono::duration<double>(days * 86400.0));
  std::filesystem::last_write_time(path, when);
}

// Lifetime (node_checkpoints.h): publishing an epoch removes the files of
// other plans none of whose files was written in the last 7 days, and
// keeps every file of a plan with a newer one.
TEST(NodeCheckpoints, PublishingAnEpochRemovesPlansIdleForAWeek) {
  ScratchDir dir;
  ForgetEarlierFolders(dir.path());
  const std::string root = dir.path();
  auto plan = [](uint64_t seed, int64_t epoch) {
    planner::PlanRequest q = Request(epoch);
    q.config.shuffle_seed = seed;
    return q;
  };
  // Plan 1: two files, both 8 days old (idle: removed). Plan 2: one 8 days
  // old, one 6 (kept, both). Plan 3: one 6 days old (kept).
  for (auto [seed, epoch, days] : {std::tuple{1, 0, 8.0}, {1, 1, 8.0}, {2, 0, 8.0}, {2, 1, 6.0}, {3, 5, 6.0}}) {
    const planner::PlanRequest q = plan(uint64_t(seed), epoch);
    ASSERT_TRUE(WriteFileAtomic(FileOf(root, q), Expected(q)).ok());
    SetAgeDays(FileOf(root, q), days);
  }
  ASSERT_TRUE(NodeEpochCheckpoints(Place(root), Request(0)).ok());
  EXPECT_EQ(CheckpointsFiles(root),
            (std::set<std::string>{"plan_checkpoints.lock", NameOf(root, plan(2, 0)), NameOf(root, plan(2, 1)),
                                   NameOf(root, plan(3, 5)), NameOf(root, Request(0))}));
  // Reading a file removes nothing; the next publish does, by the same rule.
  SetAgeDays(FileOf(root, plan(2, 1)), 7.5);
  ASSERT_TRUE(NodeEpochCheckpoints(Place(root), Request(0)).ok());
  EXPECT_EQ(CheckpointsFiles(root).size(), 5u);
  ASSERT_TRUE(NodeEpochCheckpoints(Place(root), Request(1)).ok());
  EXPECT_EQ(CheckpointsFiles(root),
            (std::set<std::string>{"plan_checkpoints.lock", NameOf(root, plan(3, 5)), NameOf(root, Request(0)),
                                   NameOf(root, Request(1))}));
}

// A maker killed mid-write leaves its temporary (named by its pid and start
// time: base/file.h); the next maker, holding the node's lock, removes every
// temporary of the file (only a lock holder writes one, so even one of a
// process still exiting is dead) and every temporary of a dead process
// beside it, and no other.
TEST(NodeCheckpoints, MultiProcessTheNextMakerRemovesADeadWritersTemporary) {
  ScratchDir dir;
  ForgetEarlierFolders(dir.path());
  const std::string root = dir.path();
  const planner::PlanRequest q = Request();
  const std::string path = FileOf(root, q);
  const pid_t dead = testing::Fork([] { return 0; });
  ASSERT_EQ(testing::WaitExit(dead), 0);
  const TempOwner gone{uint32_t(dead), 0};
  const std::string state = *CacheStateDir(root);
  const std::string dead_mine = TempPathFor(path, gone, 3);
  const std::string dead_other = TempPathFor(JoinPath(state, "index.bin"), gone, 4);
  const std::string live = TempPathFor(JoinPath(state, "index.bin"));  // this process's: kept
  const std::string exiting = TempPathFor(path, TempOwner{uint32_t(::getppid()), 0}, 5);  // a live pid: removed
  for (const std::string& t : {dead_mine, dead_other, live, exiting}) ASSERT_TRUE(WriteFileAtomic(t, "half").ok());
  auto name = [](const std::string& p) { return std::filesystem::path(p).filename().string(); };
  bool made = false;
  auto got = NodeEpochCheckpoints(Place(root), q, &made);
  ASSERT_TRUE(got.ok() && *got) << got.status().ToString();
  EXPECT_TRUE(made);
  EXPECT_EQ(StateFiles(root), (std::set<std::string>{"plan_checkpoints.lock", NameOf(root, q), name(live)}));
  // A reader that finds the file made sweeps nothing.
  ASSERT_TRUE(WriteFileAtomic(dead_mine, "half").ok());
  ASSERT_TRUE(NodeEpochCheckpoints(Place(root), q).ok());
  EXPECT_TRUE(FileExists(dead_mine));
  std::filesystem::remove(dead_mine);
  std::filesystem::remove(live);
}

// Forks: named MultiProcess so the ThreadSanitizer run leaves it out, as it
// does every forking test (dev: tsan_tests). One process is killed with the
// file half written (a temporary, holding the node's lock); four racing
// processes wait for the lock, exactly one makes the file, and every one
// plans as without checkpoints.
TEST(NodeCheckpoints, MultiProcessRacingMakersAndOneKilledMidWrite) {
  ScratchDir dir;
  ForgetEarlierFolders(dir.path());
  const planner::PlanRequest q = Request();
  const std::string path = FileOf(dir.path(), q);
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  pid_t killed = testing::Fork([&] {
    SetCheckpointsWriteHookForTesting([&] {
      char c = 1;
      if (::write(ready[1], &c, 1) != 1) _exit(3);
      ::pause();
    });
    (void)NodeEpochCheckpoints(Place(dir.path()), q);
    return 0;  // not reached: killed in the hook
  });
  ::close(ready[1]);
  char c;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  ::close(ready[0]);
  // Half written under a temporary name: no file yet.
  EXPECT_FALSE(FileExists(path));
  std::vector<pid_t> racers;
  for (int k = 0; k < 4; ++k) {
    racers.push_back(testing::Fork([&] {
      bool made = false;
      auto got = NodeEpochCheckpoints(Place(dir.path()), q, &made);
      if (!got.ok() || !*got) return 1;
      if (!PlansEqual(q, **got)) return 2;
      return made ? 10 : 0;
    }));
  }
  ::usleep(50'000);  // the racers wait on the killed process's lock meanwhile
  ::kill(killed, SIGKILL);
  EXPECT_EQ(testing::WaitExit(killed), 128 + SIGKILL);
  int makers = 0;
  for (pid_t p : racers) {
    const int code = testing::WaitExit(p);
    EXPECT_TRUE(code == 0 || code == 10) << code;
    makers += code == 10;
  }
  EXPECT_EQ(makers, 1);
  EXPECT_EQ(*ReadFile(path, 1 << 20), Expected(q));
  // The killed process's temporary went with the maker that followed it.
  EXPECT_EQ(StateFiles(dir.path()), (std::set<std::string>{"plan_checkpoints.lock", NameOf(dir.path(), q)}));
}

// 600 synthetic MDS samples in `root`, read shuffled by py1e over 4
// canonical nodes: a plan whose epochs have checkpoints.
DatasetOptions ShuffledSyntheticDataset(const std::string& root) {
  ForgetEarlierFolders(root);
  testing::WriteSyntheticMds(root, 600, 2048);
  DatasetOptions o = testing::OneStreamOptions("", root);
  o.plan.shuffle = true;
  o.plan.shuffle_algo = planner::ShuffleAlgo::kPy1e;
  o.plan.num_canonical_nodes = 4;
  o.plan.shuffle_block_size = 100;
  o.plan.batch_size = 4;
  return o;
}

// The planner's request of `ds`'s epoch 0 (opened from `o`) for
// `workers` workers a rank.
planner::PlanRequest PlanRequestOfDataset(const StreamingDataset& ds, const DatasetOptions& o,
                                          int64_t workers) {
  planner::PlanRequest q;
  q.config = o.plan;
  planner::StreamSpec s;
  for (size_t g = 0; g < ds.num_shards(); ++g) s.shard_sizes.push_back(int64_t(ds.shard_entry(g).samples));
  q.streams.push_back(s);
  q.world.workers_per_rank = workers;
  return q;
}

// A dataset's passes (head first, whole, in windows, the next epoch
// prefetched) plan from the node's file: the same ids as without it
// (WorkerIds against planner::PlanWorker of the dataset's request), the
// file made by the first pass and made again when damaged.
TEST(NodeCheckpoints, DatasetPlansFromTheNodesFile) {
  ScratchDir dir;
  DatasetOptions o = ShuffledSyntheticDataset(dir.path());
  o.prefetch_next_epoch = true;
  auto ds = StreamingDataset::Open(o);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  auto expect = (*ds)->WorkerIds(0, 0, 1, 2);
  ASSERT_TRUE(expect.ok());
  // Planned alone from the same request: the same ids.
  const planner::PlanRequest q = PlanRequestOfDataset(**ds, o, 2);
  const std::string path = FileOf(dir.path(), q);
  ASSERT_TRUE(FileExists(path));
  const std::string good = *ReadFile(path, 1 << 20);
  planner::PlanRequest q1 = q;
  q1.epoch = 1;
  auto alone = planner::PlanWorker(q, 0, 0, 1);
  ASSERT_TRUE(alone.ok());
  EXPECT_EQ(*expect, *alone);

  for (int64_t window : {int64_t{1} << 20, int64_t{7}}) {
    SCOPED_TRACE(window);
    o.pass_window_ids = window;
    auto reader = StreamingDataset::Open(o);
    ASSERT_TRUE(reader.ok());
    std::string damaged = good;
    damaged[damaged.size() - 1] ^= 1;
    ASSERT_TRUE(WriteFileAtomic(path, damaged).ok());
    EXPECT_EQ(testing::ReadEpoch(**reader, 0, 0, 1, 2, 5, nullptr), *expect);
    EXPECT_EQ(*ReadFile(path, 1 << 20), good);
    // The next epoch's file is made by the prefetch or the next pass.
    auto next = (*reader)->WorkerIds(1, 0, 1, 2);
    ASSERT_TRUE(next.ok());
    EXPECT_EQ(testing::ReadEpoch(**reader, 1, 0, 1, 2, 5, nullptr), *next);
    EXPECT_TRUE(FileExists(FileOf(dir.path(), q1)));
    ASSERT_TRUE(WriteFileAtomic(FileOf(dir.path(), q1), "").ok());
  }
}

// The epoch's first sample (global rank 0's worker 0 from the start) is
// planned ahead of the node's checkpoints, which cannot shorten its draws:
// IterBegin leaves the file to the thread planning the rest, which makes
// it, and the pass's ids are still planner::PlanWorker's.
TEST(NodeCheckpoints, FirstSamplesHeadLeavesTheFileToTheRestsThread) {
  ScratchDir dir;
  DatasetOptions o = ShuffledSyntheticDataset(dir.path());
  auto ds = StreamingDataset::Open(o);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  const planner::PlanRequest q = PlanRequestOfDataset(**ds, o, 2);
  const std::string path = FileOf(dir.path(), q);
  auto alone = planner::PlanWorker(q, 0, 0, 0);
  ASSERT_TRUE(alone.ok());
  ASSERT_FALSE(FileExists(path));
  ASSERT_TRUE((*ds)->IterBegin(0, 0, 0, 2).ok());
  EXPECT_FALSE(FileExists(path));
  std::vector<int64_t> got, ids(5);
  std::vector<SampleFields> fields;
  while (true) {
    auto n = (*ds)->NextBatch(ids.size(), ids.data(), &fields);
    ASSERT_TRUE(n.ok()) << n.status().ToString();
    if (*n == 0) break;
    got.insert(got.end(), ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(*n));
  }
  EXPECT_EQ(got, *alone);
  EXPECT_TRUE(FileExists(path));
  EXPECT_EQ(*ReadFile(path, 1 << 20), Expected(q));
  // Worker 1's head is not the epoch's first: its pass finds the file.
  ASSERT_TRUE(WriteFileAtomic(path, "").ok());
  ASSERT_TRUE((*ds)->IterBegin(0, 0, 1, 2).ok());
  EXPECT_EQ(*ReadFile(path, 1 << 20), Expected(q));
}

}  // namespace
}  // namespace sluice
