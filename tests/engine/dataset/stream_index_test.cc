// The node's binary index (stream_index.h): made once from index.json (or
// from a remote stream's listing and footers), mapped by every later open,
// read exactly as the JSON reads; stale,
// damaged or half-made files are made again, never trusted; processes
// racing to make it, or a maker killed while holding its lock, leave every
// process with the right index.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/file.h"
#include "engine/cache/ofd_lock.h"
#include "engine/cache/state_dir.h"
#include "engine/dataset/order_record.h"
#include "engine/dataset/remote_source.h"
#include "engine/dataset/stream_index.h"
#include "engine/dataset/streaming_dataset.h"
#include "tests/engine/dataset/dataset_test_util.h"
#include "tests/engine/dataset/multiprocess_util.h"

namespace sluice {
namespace {

using testing::ScratchDir;

struct BinaryIndexRead {
  uint64_t samples = 0;
  std::string fingerprint;
  std::vector<std::string> files;  // every shard's data file, in order
  std::vector<std::string> bytes;  // the epoch's samples, in order
};

Result<BinaryIndexRead> ReadThroughIndex(const std::string& dir, uint64_t binary_from) {
  DatasetOptions o = testing::OneStreamOptions("", dir);
  o.binary_index_from_bytes = binary_from;
  o.plan.shuffle = true;
  o.plan.batch_size = 4;
  SLUICE_ASSIGN_OR_RETURN(auto ds, StreamingDataset::Open(o));
  BinaryIndexRead r;
  r.samples = ds->num_samples();
  r.fingerprint = IndexFingerprint(ds->stream_index(0));
  for (size_t g = 0; g < ds->num_shards(); ++g) r.files.push_back(ds->shard_entry(g).raw_data.basename);
  testing::ReadEpoch(*ds, 0, 0, 0, 1, 8, &r.bytes);
  return r;
}

std::string BinaryIndexPath(const std::string& dir) {
  auto state = CacheStateDir(dir);
  EXPECT_TRUE(state.ok()) << state.status().ToString();
  return JoinPath(state.ok() ? *state : "", "index.bin");
}

ino_t BinaryIndexInode(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

void ExpectSameRead(const BinaryIndexRead& a, const BinaryIndexRead& b) {
  EXPECT_EQ(a.samples, b.samples);
  EXPECT_EQ(a.fingerprint, b.fingerprint);
  EXPECT_EQ(a.files, b.files);
  EXPECT_EQ(a.bytes, b.bytes);
}

TEST(BinaryIndex, MadeOnceThenMappedAndReadAsTheJsonReads) {
  ScratchDir dir;
  testing::WriteSyntheticMds(dir.path(), 300, 4096, "zstd", {"sha1", "xxh64"});
  auto parsed = ReadThroughIndex(dir.path(), UINT64_MAX);  // no binary index
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const std::string bin = BinaryIndexPath(dir.path());
  // A state folder is keyed by the folder's inode, which an earlier test's
  // deleted folder may have had: start without its file.
  std::filesystem::remove(bin);
  ASSERT_GT(parsed->files.size(), 5u);

  auto first = ReadThroughIndex(dir.path(), 0);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_TRUE(FileExists(bin));
  const ino_t made = BinaryIndexInode(bin);
  ExpectSameRead(*first, *parsed);
  auto again = ReadThroughIndex(dir.path(), 0);
  ASSERT_TRUE(again.ok());
  ExpectSameRead(*again, *parsed);
  EXPECT_EQ(BinaryIndexInode(bin), made);  // mapped, not made again

  // Every entry, hashes included, as index.json has it.
  DatasetOptions o = testing::OneStreamOptions("", dir.path());
  o.binary_index_from_bytes = 0;
  auto ds = StreamingDataset::Open(o);
  ASSERT_TRUE(ds.ok());
  auto text = ReadFile(JoinPath(dir.path(), "index.json"));
  auto index = ParseIndex(*text, "index.json");
  ASSERT_TRUE(index.ok());
  ASSERT_EQ((*ds)->num_shards(), index->shards.size());
  for (size_t g = 0; g < index->shards.size(); ++g) {
    const ShardEntry e = (*ds)->shard_entry(g);
    EXPECT_EQ(e.raw_data.hashes, index->shards[g].raw_data.hashes);
    EXPECT_EQ(e.zip_data->hashes, index->shards[g].zip_data->hashes);
    EXPECT_EQ(*SerializeShardEntry(e), *SerializeShardEntry(index->shards[g]));
  }
}

TEST(BinaryIndex, StaleDamagedOrForeignFilesAreMadeAgain) {
  ScratchDir dir;
  testing::WriteSyntheticMds(dir.path(), 200, 4096);
  auto parsed = ReadThroughIndex(dir.path(), UINT64_MAX);
  ASSERT_TRUE(parsed.ok());
  ASSERT_TRUE(ReadThroughIndex(dir.path(), 0).ok());
  const std::string bin = BinaryIndexPath(dir.path());
  auto good = ReadFile(bin);
  ASSERT_TRUE(good.ok());

  std::vector<std::string> damaged = {
      good->substr(0, good->size() / 2),  // truncated
      std::string(good->size(), 'x'),     // not a binary index
      "",                                 // empty
  };
  std::string flipped = *good;
  flipped[flipped.size() - 3] ^= 1;  // a file name's byte: the checksum catches it
  damaged.push_back(flipped);
  for (size_t k = 0; k < damaged.size(); ++k) {
    SCOPED_TRACE(k);
    ASSERT_TRUE(WriteFileAtomic(bin, damaged[k]).ok());
    auto read = ReadThroughIndex(dir.path(), 0);
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    ExpectSameRead(*read, *parsed);
    EXPECT_EQ(*ReadFile(bin), *good);  // made again, byte for byte
  }

  // A new index.json (another dataset in the same folder): the old file is
  // stale and made again from the new one.
  ScratchDir other;
  testing::WriteSyntheticMds(other.path(), 120, 2048);
  auto new_json = ReadFile(JoinPath(other.path(), "index.json"));
  ASSERT_TRUE(new_json.ok());
  for (const auto& entry : std::filesystem::directory_iterator(other.path())) {
    const std::string name = entry.path().filename().string();
    if (name != "index.json") {
      std::filesystem::copy_file(entry.path(), JoinPath(dir.path(), name),
                                 std::filesystem::copy_options::overwrite_existing);
    }
  }
  ASSERT_TRUE(WriteFileAtomic(JoinPath(dir.path(), "index.json"), *new_json).ok());
  auto expected = ReadThroughIndex(other.path(), UINT64_MAX);
  auto read = ReadThroughIndex(dir.path(), 0);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ASSERT_TRUE(expected.ok());
  EXPECT_EQ(read->samples, 120u);
  ExpectSameRead(*read, *expected);
}

// Forks: named MultiProcess so the ThreadSanitizer run leaves it out, as it
// does every forking test (dev: tsan_tests).
TEST(BinaryIndex, MultiProcessRacingMakersAndAKilledLockHolderLeaveEveryProcessTheIndex) {
  ScratchDir dir;
  testing::WriteSyntheticMds(dir.path(), 400, 4096, "zstd");
  auto parsed = ReadThroughIndex(dir.path(), UINT64_MAX);
  ASSERT_TRUE(parsed.ok());
  const std::string bin = BinaryIndexPath(dir.path());

  // A maker killed while it holds the lock: the kernel drops an OFD lock
  // with its process, so the next open neither waits for wait_timeout nor
  // finds a file.
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const std::string lock = JoinPath(*CacheStateDir(dir.path()), "index.bin.lock");
  pid_t holder = testing::Fork([&] {
    auto file = cache_internal::LockFile::Open(Env::Default(), lock);
    if (!file.ok()) return 1;
    auto got = cache_internal::TryLockByte(*file, 0, true);
    if (!got.ok() || !*got) return 2;
    char c = 1;
    if (::write(ready[1], &c, 1) != 1) return 3;
    ::pause();
    return 0;
  });
  char c;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  ::kill(holder, SIGKILL);
  EXPECT_EQ(testing::WaitExit(holder), 128 + SIGKILL);
  ::close(ready[0]);
  ::close(ready[1]);

  // Then four processes race to make it; each checks what it read.
  std::vector<pid_t> racers;
  for (int k = 0; k < 4; ++k) {
    racers.push_back(testing::Fork([&] {
      auto read = ReadThroughIndex(dir.path(), 0);
      if (!read.ok()) return 1;
      return read->samples == parsed->samples && read->files == parsed->files &&
                     read->bytes == parsed->bytes && read->fingerprint == parsed->fingerprint
                 ? 0
                 : 2;
    }));
  }
  for (pid_t p : racers) EXPECT_EQ(testing::WaitExit(p), 0);
  ASSERT_TRUE(FileExists(bin));
  auto read = ReadThroughIndex(dir.path(), 0);
  ASSERT_TRUE(read.ok());
  ExpectSameRead(*read, *parsed);
}

}  // namespace
}  // namespace sluice

namespace sluice {
namespace {

// Overwrites the first byte of `path` and gives the file back its
// modification time: the same identity (device, inode, size, time), other
// bytes, so only a reader that parses the file sees the change.
void DamageKeepingIdentity(const std::string& path) {
  struct stat st{};
  ASSERT_EQ(::stat(path.c_str(), &st), 0) << path;
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(0);
    f.put('!');
  }
  const struct timespec times[2] = {st.st_atim, st.st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
}

// A remote stream indexed from its listing (raw files) or its footers
// (Parquet): the first open makes the node's listing (and footer store)
// and writes the binary index beside them (issue 38: the node's first
// process, not its second), and from then on every open maps it (proved by damaging the listing without changing its
// identity: only a reader of the listing would fail). A new listing is a
// new key, and a damaged binary index is made again; the same table
// throughout.
TEST(BinaryIndex, ListedAndParquetStreamsMapTheirOwnBinaryIndex) {
  const std::string fixture =
      std::string(SLUICE_TEST_DATA_DIR) + "/parquet/pa26_many_row_groups.parquet";
  for (bool parquet : {false, true}) {
    SCOPED_TRACE(parquet ? "parquet" : "files");
    ScratchDir remote_dir, local_dir;
    std::filesystem::create_directories(remote_dir.path() + "/part=b");
    std::filesystem::copy_file(fixture, remote_dir.path() + "/a.parquet");
    std::filesystem::copy_file(fixture, remote_dir.path() + "/part=b/c.parquet");
    StreamOptions s;
    s.remote = remote_dir.path();
    s.local = local_dir.path();
    if (parquet) {
      s.parquet.emplace();
    } else {
      s.files.emplace();
    }
    auto remote = OpenRemoteSource(s.remote, StoreOptions{});
    ASSERT_TRUE(remote.ok()) << remote.status().ToString();
    auto open = [&] {
      return LoadStreamIndex(s, remote->get(), std::chrono::seconds(5), nullptr, 0);
    };
    const std::string state = local_dir.path() + "/.sluice";
    const std::string bin = state + (parquet ? "/parquet_index.bin" : "/listing_index.bin");
    const std::string listing = state + "/listing.json";

    auto first = open();
    ASSERT_TRUE(first.ok()) << first.status().ToString();
    const std::string want = first->Serialize(0);
    EXPECT_EQ(first->size(), parquet ? 18u : 2u);  // 9 row groups a file
    EXPECT_TRUE(FileExists(bin));

    const std::string good_listing = *ReadFile(listing);
    DamageKeepingIdentity(listing);
    auto mapped = open();
    ASSERT_TRUE(mapped.ok()) << mapped.status().ToString();
    EXPECT_TRUE(mapped->Serialize(0) == want);

    // A new listing (the same files): made anew from it, then mapped.
    ASSERT_TRUE(WriteFileAtomic(listing, good_listing).ok());
    auto remade = open();
    ASSERT_TRUE(remade.ok()) << remade.status().ToString();
    EXPECT_TRUE(remade->Serialize(0) == want);
    DamageKeepingIdentity(listing);
    auto mapped_again = open();
    ASSERT_TRUE(mapped_again.ok()) << mapped_again.status().ToString();
    EXPECT_TRUE(mapped_again->Serialize(0) == want);

    // A damaged binary index is not read: the listing (damaged) is, and
    // its error is the open's.
    DamageKeepingIdentity(bin);
    EXPECT_FALSE(open().ok());
    ASSERT_TRUE(WriteFileAtomic(listing, good_listing).ok());
    auto repaired = open();
    ASSERT_TRUE(repaired.ok()) << repaired.status().ToString();
    EXPECT_TRUE(repaired->Serialize(0) == want);
  }
}

}  // namespace
}  // namespace sluice
