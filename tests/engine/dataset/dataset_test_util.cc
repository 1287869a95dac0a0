#include "tests/engine/dataset/dataset_test_util.h"

#include <sys/stat.h>

#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "base/file.h"
#include "bindings/cli/bench/cache_usage.h"
#include "formats/mds/mds_writer.h"
#include "stores/file/file_store.h"

namespace sluice::testing {

void WriteSyntheticMds(const std::string& dir, int samples, uint64_t size_limit,
                       std::optional<std::string> compression, std::vector<std::string> hashes) {
  ShardedWriterOptions options;
  options.compression = std::move(compression);
  options.hashes = std::move(hashes);
  options.size_limit = size_limit;
  auto writer = MdsWriter::Create(dir, {{"data", "bytes"}, {"id", "str"}}, options);
  ASSERT_TRUE(writer.ok()) << writer.status().message();
  for (int i = 0; i < samples; ++i) {
    std::string data(40 + (i * 37) % 200, '\0');
    for (size_t k = 0; k < data.size(); ++k) data[k] = static_cast<char>((i * 131 + k * 7) & 0xff);
    std::string id = "sample-" + std::to_string(i);
    ASSERT_TRUE((*writer)->WriteFields({data, id}).ok());
  }
  Status finished = (*writer)->Finish();
  ASSERT_TRUE(finished.ok()) << finished.message();
}

std::string FieldBytes(const SampleFields& f) {
  std::string out;
  for (std::string_view v : f.fields) {
    out.append(v);
    out.push_back('\xff');
  }
  return out;
}

std::vector<int64_t> ReadEpoch(StreamingDataset& ds, int64_t epoch, int64_t sample_in_epoch,
                               int64_t worker, int64_t num_workers, size_t batch,
                               std::vector<std::string>* bytes) {
  std::vector<int64_t> all;
  Status begun = ds.IterBegin(epoch, sample_in_epoch, worker, num_workers);
  EXPECT_TRUE(begun.ok()) << begun.message();
  if (!begun.ok()) return all;
  std::vector<int64_t> ids(batch);
  std::vector<SampleFields> fields;
  while (true) {
    auto n = ds.NextBatch(batch, ids.data(), &fields);
    EXPECT_TRUE(n.ok()) << n.status().message();
    if (!n.ok() || *n == 0) break;
    for (size_t k = 0; k < *n; ++k) {
      all.push_back(ids[k]);
      if (bytes) bytes->push_back(FieldBytes(fields[k]));
    }
  }
  return all;
}

DiskSampler::DiskSampler(std::vector<std::vector<std::string>> nodes) : nodes_(std::move(nodes)) {
  thread_ = std::thread([this] {
    // At least one sample, even when Stop() comes before this thread first
    // runs (a loaded machine can run a whole small job meanwhile).
    do {
      for (const auto& dirs : nodes_) {
        const uint64_t seen = bench::CachedBytesAtOneInstant(dirs);
        if (seen > max_.load()) max_ = seen;
      }
      ++samples_;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    } while (!done_.load());
  });
}

std::vector<std::vector<std::string>> DiskSampler::FolderPerNode(
    const std::vector<std::string>& dirs) {
  std::vector<std::vector<std::string>> nodes;
  for (const std::string& d : dirs) nodes.push_back({d});
  return nodes;
}

void DiskSampler::Stop() {
  done_ = true;
  if (thread_.joinable()) thread_.join();
}

DatasetOptions OneStreamOptions(const std::string& remote, const std::string& local) {
  DatasetOptions o;
  StreamOptions s;
  s.remote = remote;
  s.local = local;
  o.streams.push_back(s);
  o.world.rank = 0;
  o.world.world_size = 1;
  o.world.local_rank = 0;
  o.world.local_world_size = 1;
  o.prefetch_next_epoch = false;
  o.wait_timeout = std::chrono::seconds(10);
  return o;
}

uint64_t ShardBytesOnDisk(const std::string& dir) { return bench::CachedBytes(dir); }

std::string TagOf(const std::string& root, const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(JoinPath(root, path).c_str(), &st), 0) << path;
  return LocalFileTag(st);
}

}  // namespace sluice::testing
