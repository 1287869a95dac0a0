// A remote raw-file or Parquet stream's node files (stream_index.h) made by
// several processes of a node at once over s3rver: the listing and footer
// store (once per node, under a lock) and the binary index beside them
// (listing_index.bin / parquet_index.bin, built once per node by its first
// opener under a node lock, written by an atomic rename; the others wait
// and map it). A maker is killed in the middle of each write: every
// process still ends with the same table, the one a fresh cache builds,
// and the half-written temporaries are never read. Then a damaged,
// truncated or stale binary index (or footer store) is made again, byte
// for byte. Forks: named MultiProcess so the ThreadSanitizer run leaves it
// out (dev: tsan_tests).
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/env.h"
#include "base/file.h"
#include "base/mapped_file.h"
#include "engine/dataset/remote_source.h"
#include "engine/dataset/stream_index.h"
#include "tests/base/forwarding_env.h"
#include "tests/engine/dataset/dataset_test_util.h"
#include "tests/engine/dataset/multiprocess_util.h"
#include "tests/stores/common/node_servers.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;
using testing::ScratchDir;

constexpr char kListedKeyId[] = "SLUICELISTEDKEY";
constexpr char kListedSecret[] = "listed-s3cr3t-never-printed";

// The real file system, except that the first write to a temporary whose
// name contains `marker` writes half its bytes, tells `ready` and waits
// to be killed: a maker killed mid-write.
class StallingWriteEnv final : public testing::ForwardingEnv {
 public:
  StallingWriteEnv(std::string marker, int ready) : marker_(std::move(marker)), ready_(ready) {}

  Result<size_t> Write(int fd, std::string_view path, std::string_view data) override {
    Stall(fd, path, data);
    return ForwardingEnv::Write(fd, path, data);
  }
  Result<size_t> PWrite(int fd, std::string_view path, std::string_view data,
                        uint64_t offset) override {
    Stall(fd, path, data);
    return ForwardingEnv::PWrite(fd, path, data, offset);
  }

 private:
  void Stall(int fd, std::string_view path, std::string_view data) {
    if (path.find(marker_) == std::string_view::npos || data.size() < 2) return;
    (void)base()->WriteAll(fd, path, data.substr(0, data.size() / 2));
    char c = 1;
    if (::write(ready_, &c, 1) != 1) ::_exit(9);
    for (;;) ::pause();
  }

  std::string marker_;
  int ready_;
};

// Writes `bytes` over the start of `path` in place and gives the file back
// its modification time: the same identity (device, inode, size, time).
void OverwriteKeepingIdentity(const std::string& path, const std::string& bytes) {
  struct stat st{};
  ASSERT_EQ(::stat(path.c_str(), &st), 0) << path;
  const int fd = ::open(path.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0) << path;
  ASSERT_EQ(::pwrite(fd, bytes.data(), bytes.size(), 0), static_cast<ssize_t>(bytes.size()));
  ::close(fd);
  const struct timespec times[2] = {st.st_atim, st.st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
}

class ListedIndexMultiProcess : public ::testing::TestWithParam<bool> {
 protected:
  bool parquet() const { return GetParam(); }

  StreamOptions Stream(const std::string& local) const {
    StreamOptions s;
    s.remote = "s3://bkt/table";
    s.local = local;
    if (parquet()) {
      s.parquet.emplace();
    } else {
      s.files.emplace();
    }
    return s;
  }

  // The stream's table as this process opens it (binary index from 0
  // bytes on), serialized; `env` for the cache folder's files.
  Result<std::string> OpenTable(const std::string& local, uint64_t binary_from = 0,
                                Env* env = Env::Default(),
                                std::chrono::milliseconds wait = std::chrono::seconds(60)) const {
    const StreamOptions s = Stream(local);
    SLUICE_ASSIGN_OR_RETURN(auto remote, OpenRemoteSource(s.remote, StoreOptions{}));
    SLUICE_ASSIGN_OR_RETURN(ShardTable table,
                            LoadStreamIndex(s, remote.get(), wait, nullptr, binary_from, env));
    return table.Serialize(0);
  }

  // A child that opens the stream with a StallingWriteEnv on `marker`
  // (killed by the caller once it has told `ready`).
  pid_t StalledMaker(const std::string& local, const std::string& marker, int ready) const {
    return testing::Fork([this, local, marker, ready] {
      StallingWriteEnv env(marker, ready);
      auto got = OpenTable(local, 0, &env);
      return got.ok() ? 3 : 4;  // never reached: the write stalls
    });
  }

  // Three processes open the stream at once while a maker stalled on
  // `marker` holds its half-written temporary; the maker is killed as they
  // start. Each racer's table goes to `out`/racer<k>.
  void RaceWithAKilledMaker(const std::string& local, const std::string& marker,
                            const std::string& out) {
    int ready[2];
    ASSERT_EQ(::pipe(ready), 0);
    const pid_t maker = StalledMaker(local, marker, ready[1]);
    char c = 0;
    ASSERT_EQ(::read(ready[0], &c, 1), 1) << "the maker never reached " << marker;
    std::vector<pid_t> racers;
    for (int k = 0; k < 3; ++k) {
      racers.push_back(testing::Fork([this, local, out, k] {
        auto got = OpenTable(local);
        if (!got.ok()) {
          fprintf(stderr, "racer %d: %s\n", k, got.status().ToString().c_str());
          return 1;
        }
        return WriteFileAtomic(JoinPath(out, "racer" + std::to_string(k)), *got).ok() ? 0 : 2;
      }));
    }
    ::kill(maker, SIGKILL);
    EXPECT_EQ(testing::WaitExit(maker), 128 + SIGKILL);
    for (pid_t p : racers) EXPECT_EQ(testing::WaitExit(p), 0);
    ::close(ready[0]);
    ::close(ready[1]);
  }
};

TEST_P(ListedIndexMultiProcess, MakersRacingOverS3rverWithAKilledWriterEndWithOneValidIndex) {
  std::string why = testing::NodeServersUnavailableReason();
  if (!why.empty()) GTEST_SKIP() << why;
  const std::string fixture =
      std::string(SLUICE_TEST_DATA_DIR) + "/parquet/pa26_many_row_groups.parquet";
  ScratchDir data, server_dir, local, fresh, out1, out2;
  fs::create_directories(data.path() + "/part=b");
  for (const char* name : {"a.parquet", "d.parquet", "part=b/c.parquet"}) {
    fs::copy_file(fixture, data.path() + "/" + name);
  }
  auto server = testing::StartS3rver(server_dir.path(), kListedKeyId, kListedSecret, {"bkt"});
  ASSERT_NE(server, nullptr) << "s3rver did not start";
  testing::ScopedEnv scoped(testing::S3rverEnv(server->port(), kListedKeyId, kListedSecret));
  // From a child: this process starts no event loop before it forks.
  ASSERT_EQ(testing::UploadTree("s3://bkt/table", data.path()), 0) << server->Log();

  const std::string state = local.path() + "/.sluice";
  const std::string node_file = parquet() ? "parquet_footers" : "listing.json";
  const std::string bin = state + (parquet() ? "/parquet_index.bin" : "/listing_index.bin");
  const std::string bin_name = fs::path(bin).filename().string();
  // 1. The node file's maker killed mid-write, holding the node lock: the
  // racers wait for the lock, which dies with it, and make the file.
  ASSERT_NO_FATAL_FAILURE(RaceWithAKilledMaker(local.path(), "/." + node_file + ".sluice-tmp.",
                                               out1.path()));
  // 2. The binary index's writer killed mid-write (the node files there;
  // a racer above that found them may have written one: gone):
  // the racers make and map their own.
  (void)fs::remove(bin);
  ASSERT_NO_FATAL_FAILURE(
      RaceWithAKilledMaker(local.path(), "/." + bin_name + ".sluice-tmp.", out2.path()));

  // No more forks: this process may open the stream itself now. The table
  // a fresh cache builds without any binary index is every racer's.
  auto want = OpenTable(fresh.path(), UINT64_MAX);
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  for (const std::string& dir : {out1.path(), out2.path()}) {
    for (int k = 0; k < 3; ++k) {
      auto got = ReadFile(JoinPath(dir, "racer" + std::to_string(k)));
      ASSERT_TRUE(got.ok()) << got.status().ToString();
      EXPECT_TRUE(*got == *want) << dir << " racer " << k;
    }
  }
  // The killed writers' temporaries (half a file each) went with the maker
  // that followed each (node_file.h: dead writers' temporaries are removed
  // under the node lock).
  int torn = 0;
  for (const auto& e : fs::directory_iterator(state)) {
    if (e.path().filename().string().find(".sluice-tmp.") != std::string::npos) ++torn;
  }
  EXPECT_EQ(torn, 0);
  ASSERT_TRUE(FileExists(bin));
  const std::string good = *ReadFile(bin);

  // The binary index is what later opens map: with the listing damaged
  // (its identity kept) the table is still the same.
  const std::string listing = state + "/listing.json";
  const std::string good_listing = *ReadFile(listing);
  OverwriteKeepingIdentity(listing, "!");
  auto mapped = OpenTable(local.path());
  ASSERT_TRUE(mapped.ok()) << mapped.status().ToString();
  EXPECT_TRUE(*mapped == *want);
  OverwriteKeepingIdentity(listing, good_listing);

  // Damaged, truncated, emptied or foreign: made again, byte for byte.
  std::string flipped = good;
  flipped[flipped.size() - 3] ^= 1;
  for (const std::string& damaged :
       {good.substr(0, good.size() / 2), flipped, std::string(), std::string(good.size(), 'x')}) {
    SCOPED_TRACE(damaged.size());
    ASSERT_TRUE(WriteFileAtomic(bin, damaged).ok());
    auto again = OpenTable(local.path());
    ASSERT_TRUE(again.ok()) << again.status().ToString();
    EXPECT_TRUE(*again == *want);
    EXPECT_TRUE(*ReadFile(bin) == good);
  }
  // Stale: made for the listing before a new one (the same files listed
  // again, a new identity). The new listing's index is made, then the old
  // one put back is made again as the new one.
  ASSERT_TRUE(WriteFileAtomic(listing, good_listing).ok());
  auto relisted = OpenTable(local.path());
  ASSERT_TRUE(relisted.ok()) << relisted.status().ToString();
  EXPECT_TRUE(*relisted == *want);
  const std::string current = *ReadFile(bin);
  EXPECT_FALSE(current == good);  // another key
  ASSERT_TRUE(WriteFileAtomic(bin, good).ok());
  auto restaled = OpenTable(local.path());
  ASSERT_TRUE(restaled.ok()) << restaled.status().ToString();
  EXPECT_TRUE(*restaled == *want);
  EXPECT_TRUE(*ReadFile(bin) == current);

  if (parquet()) {
    // The footer store damaged (its identity kept: only its checksums
    // tell) or truncated (a new identity): the next open that builds the
    // table makes the store again from the files' footers, byte for byte.
    const std::string store = state + "/parquet_footers";
    const std::string good_store = *ReadFile(store);
    std::string bad_tail = good_store;
    bad_tail[bad_tail.size() - 20] ^= 1;
    for (const std::string& damaged : {bad_tail, good_store.substr(0, good_store.size() - 9)}) {
      SCOPED_TRACE(damaged.size());
      if (damaged.size() == good_store.size()) {
        OverwriteKeepingIdentity(store, damaged);
        ASSERT_TRUE(fs::remove(bin));  // so that the table is built
      } else {
        ASSERT_TRUE(WriteFileAtomic(store, damaged).ok());
      }
      auto remade = OpenTable(local.path());
      ASSERT_TRUE(remade.ok()) << remade.status().ToString();
      EXPECT_TRUE(*remade == *want);
      EXPECT_TRUE(*ReadFile(store) == good_store);
    }
  }
}

// Two nodes (two cache folders) of four processes each, all started at
// once on a cold cache: the table is built exactly once per node (the
// first opener, under the node lock) and every other process maps the
// binary index it wrote. Then a process that waits longer than its
// `wait_timeout` for a builder stalled under the lock builds alone, and
// gets the same table, rather than hang.
TEST_P(ListedIndexMultiProcess, OneBuildPerNodeAmongProcessesStartedAtOnce) {
  std::string why = testing::NodeServersUnavailableReason();
  if (!why.empty()) GTEST_SKIP() << why;
  const std::string fixture =
      std::string(SLUICE_TEST_DATA_DIR) + "/parquet/pa26_many_row_groups.parquet";
  ScratchDir data, server_dir, node0, node1, fresh, out, stalled_node;
  for (const char* name : {"a.parquet", "b.parquet", "c.parquet", "d.parquet"}) {
    fs::copy_file(fixture, data.path() + "/" + name);
  }
  auto server = testing::StartS3rver(server_dir.path(), kListedKeyId, kListedSecret, {"bkt"});
  ASSERT_NE(server, nullptr) << "s3rver did not start";
  testing::ScopedEnv scoped(testing::S3rverEnv(server->port(), kListedKeyId, kListedSecret));
  ASSERT_EQ(testing::UploadTree("s3://bkt/table", data.path()), 0) << server->Log();

  int builds[2], start[2];
  ASSERT_EQ(::pipe(builds), 0);
  ASSERT_EQ(::pipe(start), 0);
  const std::vector<std::string> nodes = {node0.path(), node1.path()};
  std::vector<pid_t> procs;
  for (int n = 0; n < 2; ++n) {
    for (int k = 0; k < 4; ++k) {
      procs.push_back(testing::Fork([&, n, k] {
        ::close(start[1]);
        char go;
        if (::read(start[0], &go, 1) != 0) return 5;  // the parent closes: all start at once
        const char node = char('0' + n);
        SetListedTableBuildHookForTesting([&] {
          if (::write(builds[1], &node, 1) != 1) ::_exit(6);
        });
        auto got = OpenTable(nodes[size_t(n)]);
        if (!got.ok()) {
          fprintf(stderr, "node %d process %d: %s\n", n, k, got.status().ToString().c_str());
          return 1;
        }
        const std::string name = "n" + std::to_string(n) + "p" + std::to_string(k);
        return WriteFileAtomic(JoinPath(out.path(), name), *got).ok() ? 0 : 2;
      }));
    }
  }
  ::close(start[0]);
  ::close(start[1]);
  ::close(builds[1]);
  for (pid_t p : procs) EXPECT_EQ(testing::WaitExit(p), 0);
  std::string built;
  char buf[64];
  for (ssize_t got; (got = ::read(builds[0], buf, sizeof(buf))) > 0;) built.append(buf, size_t(got));
  ::close(builds[0]);
  std::sort(built.begin(), built.end());
  EXPECT_EQ(built, "01");  // one build per node

  const std::string bin_name = parquet() ? "parquet_index.bin" : "listing_index.bin";
  for (const std::string& node : nodes) EXPECT_TRUE(FileExists(node + "/.sluice/" + bin_name)) << node;

  // A builder stalled under the node lock as it starts building: a
  // process whose wait_timeout passes builds alone.
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t stalled = testing::Fork([&] {
    SetListedTableBuildHookForTesting([&] {
      char c = 1;
      if (::write(ready[1], &c, 1) != 1) ::_exit(7);
      for (;;) ::pause();
    });
    (void)OpenTable(stalled_node.path());
    return 3;  // not reached
  });
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  const pid_t impatient = testing::Fork([&] {
    auto got = OpenTable(stalled_node.path(), 0, Env::Default(), std::chrono::milliseconds(200));
    if (!got.ok()) {
      fprintf(stderr, "impatient: %s\n", got.status().ToString().c_str());
      return 1;
    }
    return WriteFileAtomic(JoinPath(out.path(), "impatient"), *got).ok() ? 0 : 2;
  });
  EXPECT_EQ(testing::WaitExit(impatient), 0);
  ::kill(stalled, SIGKILL);
  EXPECT_EQ(testing::WaitExit(stalled), 128 + SIGKILL);
  ::close(ready[0]);
  ::close(ready[1]);

  // No more forks. Every process's table is the one a fresh cache builds.
  auto want = OpenTable(fresh.path(), UINT64_MAX);
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  for (const auto& e : fs::directory_iterator(out.path())) {
    if (e.path().filename().string().find(".sluice-tmp.") != std::string::npos) continue;
    auto got = ReadFile(e.path().string());
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_TRUE(*got == *want) << e.path();
  }
  EXPECT_EQ(std::distance(fs::directory_iterator(out.path()), fs::directory_iterator()), 9);
}

INSTANTIATE_TEST_SUITE_P(Streams, ListedIndexMultiProcess, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? std::string("Parquet") : std::string("RawFiles");
                         });

}  // namespace
}  // namespace sluice
