// Helpers for the streaming dataset tests: synthetic MDS datasets, scratch
// folders, and reading whole epochs.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <thread>
#include <string>
#include <vector>

#include "engine/dataset/streaming_dataset.h"
#include "tests/common/temp_dir.h"

namespace sluice::testing {

// The tests' temporary folder (tests/common/temp_dir.h).
using ScratchDir = TempDir;

// Writes an MDS dataset of `samples` samples with columns "data" (bytes,
// 40..240 bytes derived from the id) and "id" (str), shards of about
// `size_limit` bytes, optionally compressed and hashed, into `dir`.
void WriteSyntheticMds(const std::string& dir, int samples, uint64_t size_limit,
                       std::optional<std::string> compression = std::nullopt,
                       std::vector<std::string> hashes = {});

// One stream `remote` cached in `local`, read by a single rank (world of
// one), no next-epoch prefetch, a 10 s wait timeout: the set-up of the
// single-process dataset tests.
DatasetOptions OneStreamOptions(const std::string& remote, const std::string& local);

// The bytes of every field of a sample joined with 0xff separators.
std::string FieldBytes(const SampleFields& f);

// The etag a folder remote lists for `root`/`path` (LocalFileTag), which
// the names of its cached Parquet row groups carry.
std::string TagOf(const std::string& root, const std::string& path);

// Iterates a whole (worker of an) epoch in batches of `batch`; returns the ids
// and appends each sample's FieldBytes to *bytes when non-null.
std::vector<int64_t> ReadEpoch(StreamingDataset& ds, int64_t epoch, int64_t sample_in_epoch,
                               int64_t worker, int64_t num_workers, size_t batch,
                               std::vector<std::string>* bytes);

// What the cache budgets in `dir`, by one walk (bench::CachedBytes): the
// files under it, each inode once, without the state folder, index.json and
// its download temporary (the index is not under cache_limit).
uint64_t ShardBytesOnDisk(const std::string& dir);

// Samples, every millisecond until stopped and at least once, the shard
// bytes on disk of each node (the sum over its cache folders) and keeps the
// largest a node had: what a test compares with cache_limit. Start it after
// forking the job's
// processes (a child must not inherit a busy thread). A walk of a folder is
// not a snapshot (a file deleted and another created during one walk are
// both counted), so each sample is bench::CachedBytesAtOneInstant, a lower
// bound of what the folders held at one instant.
class DiskSampler {
 public:
  // One node per entry of `nodes`, each a list of its cache folders.
  explicit DiskSampler(std::vector<std::vector<std::string>> nodes);
  // Each folder of `dirs` a node of its own.
  static std::vector<std::vector<std::string>> FolderPerNode(const std::vector<std::string>& dirs);
  ~DiskSampler() { Stop(); }
  DiskSampler(const DiskSampler&) = delete;
  DiskSampler& operator=(const DiskSampler&) = delete;
  void Stop();
  uint64_t max() const { return max_.load(); }       // the largest node total seen
  uint64_t samples() const { return samples_.load(); }

 private:
  const std::vector<std::vector<std::string>> nodes_;
  std::atomic<bool> done_{false};
  std::atomic<uint64_t> max_{0}, samples_{0};
  std::thread thread_;
};

}  // namespace sluice::testing
