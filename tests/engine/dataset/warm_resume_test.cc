// Resumption over a warm cache: a fresh process that loads a mid-epoch
// state and reads on, with index.json and every shard already in its cache
// folder, sends nothing to the remote (a real s3rver behind a
// RequestLogProxy counts the requests on the wire) and reads exactly the
// rest of the epoch.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/file.h"
#include "engine/dataset/streaming_dataset.h"
#include "tests/engine/dataset/dataset_test_util.h"
#include "tests/engine/dataset/multiprocess_util.h"
#include "tests/engine/dataset/request_log_proxy.h"
#include "tests/stores/common/node_servers.h"

namespace sluice {
namespace {

using testing::Fork;
using testing::ReadResult;
using testing::RequestLogProxy;
using testing::ScratchDir;
using testing::WaitExit;
using testing::WorkerResult;

constexpr char kKeyId[] = "SLUICERESUMEKEY";
constexpr char kSecret[] = "resume-s3cr3t-never-printed";
constexpr int64_t kSamples = 600;
constexpr int64_t kResumeAt = 250;

DatasetOptions WarmOptions(const std::string& cache) {
  DatasetOptions o = testing::OneStreamOptions("s3://bkt/ds", cache);
  o.streams[0].download_retry = 0;  // a retry would be a second request
  o.peek_first_sample = false;      // so would a first-sample peek
  o.plan.shuffle = true;
  o.plan.shuffle_seed = 11;
  o.plan.batch_size = 4;
  o.predownload = 32;
  return o;
}

// In a child: opens the dataset, loads {epoch 0, sample_in_epoch
// kResumeAt} as a checkpoint would, reads the rest of the epoch and writes
// the ids, bytes and counters to `out`.
int ResumeAndRead(const DatasetOptions& o, const std::string& out) {
  auto ds = StreamingDataset::Open(o);
  if (!ds.ok()) return 2;
  ResumeState state;
  state.epoch = 0;
  state.sample_in_epoch = kResumeAt;
  state.num_canonical_nodes = 1;
  state.shuffle_seed = 11;
  state.initial_physical_nodes = 1;
  if (!(*ds)->LoadState(state).ok()) return 3;
  std::vector<std::string> bytes;
  std::vector<int64_t> ids = testing::ReadEpoch(**ds, 0, kResumeAt, 0, 1, 16, &bytes);
  return testing::WriteResult(out, ids, bytes, (*ds)->counters()).ok() ? 0 : 4;
}

TEST(WarmResumeMultiProcess, SendsNoRequestAndReadsTheRestOfTheEpoch) {
  std::string why = testing::NodeServersUnavailableReason();
  if (!why.empty()) GTEST_SKIP() << why;
  ScratchDir data, scratch, server_dir;
  testing::WriteSyntheticMds(data.path(), kSamples, 4000);
  auto server = testing::StartS3rver(server_dir.path(), kKeyId, kSecret, {"bkt"});
  ASSERT_NE(server, nullptr) << "s3rver did not start";
  testing::ScopedEnv env(testing::S3rverEnv(server->port(), kKeyId, kSecret));
  ASSERT_EQ(testing::UploadTree("s3://bkt/ds", data.path()), 0) << server->Log();
  auto proxy = RequestLogProxy::Start(server->port(), JoinPath(scratch.path(), "requests"));
  ASSERT_NE(proxy, nullptr);
  testing::ScopedEnv through_proxy("S3_ENDPOINT_URL",
                                   "http://127.0.0.1:" + std::to_string(proxy->port()));
  const std::string cache = JoinPath(scratch.path(), "cache");

  // The first run reads the whole epoch: the cache is then warm.
  const std::string first = JoinPath(scratch.path(), "first");
  ASSERT_EQ(WaitExit(Fork([&] { return testing::RunWorker(WarmOptions(cache), 0, 1, first); })), 0);
  WorkerResult whole = ReadResult(first);
  ASSERT_EQ(whole.ids.size(), static_cast<size_t>(kSamples));
  const size_t warm_requests = proxy->Requests().size();
  ASSERT_EQ(warm_requests, whole.counters.shards_downloaded + 1) << "index.json and each shard once";
  ASSERT_GT(whole.counters.shards_downloaded, 4u);

  // A fresh process resumes mid-epoch from the warm cache.
  const std::string resumed = JoinPath(scratch.path(), "resumed");
  ASSERT_EQ(WaitExit(Fork([&] { return ResumeAndRead(WarmOptions(cache), resumed); })), 0);
  WorkerResult rest = ReadResult(resumed);
  std::vector<std::string> after = proxy->Requests();
  EXPECT_EQ(after.size(), warm_requests) << "first request of the resumption: "
                                         << (after.size() > warm_requests ? after[warm_requests] : "");
  EXPECT_EQ(rest.counters.shards_downloaded, 0u);
  EXPECT_EQ(rest.counters.bytes_downloaded, 0u);
  EXPECT_GT(rest.counters.cache_hits, 0u);
  std::vector<int64_t> tail(whole.ids.begin() + kResumeAt, whole.ids.end());
  EXPECT_EQ(rest.ids, tail);
  std::vector<std::string> tail_bytes(whole.bytes.begin() + kResumeAt, whole.bytes.end());
  EXPECT_EQ(rest.bytes, tail_bytes);
}

}  // namespace
}  // namespace sluice
