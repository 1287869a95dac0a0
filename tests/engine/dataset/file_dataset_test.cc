// Raw-file datasets through the engine (StreamOptions::files): a folder,
// s3rver, azurite, nginx with a manifest and a dbfs:/Volumes fake; the canonical order, every file once per
// epoch whatever each rank's worker count, one GET per file per node counted
// on the wire, the listing made once per node, cache_limit, exact
// resumption, and errors that name the file.
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "base/file.h"
#include "engine/dataset/streaming_dataset.h"
#include "engine/runtime/event_loop.h"
#include "stores/store.h"
#include "tests/engine/dataset/dataset_test_util.h"
#include "tests/engine/dataset/multiprocess_util.h"
#include "tests/engine/dataset/request_log_proxy.h"
#include "tests/stores/common/azurite_suite.h"
#include "tests/stores/common/fake_databricks_files.h"
#include "tests/stores/common/node_servers.h"
#include "tests/stores/http/test_servers.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;
using testing::FieldBytes;
using testing::Fork;
using testing::ReadEpoch;
using testing::ReadResult;
using testing::RequestLogProxy;
using testing::ScratchDir;
using testing::UploadTree;
using testing::WaitExit;
using testing::WorkerResult;

// File i's relative path: a few folders, names that sort differently as
// text than as numbers.
std::string FilePath(int i) {
  return "class" + std::to_string(i % 3) + "/img" + std::to_string(i) + ".jpg";
}

// File i's bytes: 0 to ~1.5 KB, distinct per file.
std::string FileBytes(int i) {
  std::string out = "file " + std::to_string(i) + ":";
  out.resize(static_cast<size_t>((i * 37) % 1500), static_cast<char>('a' + i % 26));
  return out;
}

// Writes `n` files and what Spark leaves beside data into `dir`; returns
// the files' paths in canonical (bytewise) order.
std::vector<std::string> WriteFiles(const std::string& dir, int n) {
  std::vector<std::string> paths;
  for (int i = 0; i < n; ++i) {
    std::string path = JoinPath(dir, FilePath(i));
    EXPECT_TRUE(MakeDirs(fs::path(path).parent_path().string()).ok());
    EXPECT_TRUE(WriteFileAtomic(path, FileBytes(i)).ok());
    paths.push_back(FilePath(i));
  }
  EXPECT_TRUE(WriteFileAtomic(JoinPath(dir, "_SUCCESS"), "").ok());
  EXPECT_TRUE(MakeDirs(JoinPath(dir, "class0/_temporary")).ok());
  EXPECT_TRUE(WriteFileAtomic(JoinPath(dir, "class0/_temporary/part.jpg"), "partial").ok());
  EXPECT_TRUE(WriteFileAtomic(JoinPath(dir, "class1/.img1.jpg.crc"), "crc").ok());
  std::sort(paths.begin(), paths.end());
  return paths;
}

// The file at canonical position `id`: its bytes, and as FieldBytes
// renders its one field.
std::string BytesOf(const std::vector<std::string>& paths, int64_t id) {
  const std::string& p = paths[static_cast<size_t>(id)];
  return FileBytes(std::stoi(p.substr(p.find("img") + 3)));
}
std::string FieldOf(const std::vector<std::string>& paths, int64_t id) {
  return BytesOf(paths, id) + '\xff';
}

DatasetOptions FileOptions(const std::string& remote, const std::string& local) {
  DatasetOptions o = testing::OneStreamOptions(remote, local);
  o.streams[0].files.emplace();
  return o;
}

// Rank `rank` of 2 on one node, shuffled with `seed`, batches of 4.
DatasetOptions RankOfTwoOnOneNode(const std::string& remote, const std::string& local,
                                  int64_t rank, uint64_t seed) {
  DatasetOptions o = FileOptions(remote, local);
  o.world.rank = rank;
  o.world.world_size = 2;
  o.world.local_rank = rank;
  o.world.local_world_size = 2;
  o.plan.shuffle = true;
  o.plan.shuffle_seed = seed;
  o.plan.batch_size = 4;
  return o;
}

// Every worker of `workers` reads its epoch 0, `read_batch` samples per
// call, each file's bytes checked; counts each id read in `seen` and
// returns the ids of all the workers.
std::set<int64_t> ReadAllWorkers(StreamingDataset& ds, int64_t workers, int64_t read_batch,
                                 const std::vector<std::string>& paths,
                                 std::map<int64_t, int>* seen) {
  std::set<int64_t> read;
  for (int64_t w = 0; w < workers; ++w) {
    std::vector<std::string> bytes;
    std::vector<int64_t> ids = ReadEpoch(ds, 0, 0, w, workers, read_batch, &bytes);
    for (size_t k = 0; k < ids.size(); ++k) {
      EXPECT_EQ(bytes[k], FieldOf(paths, ids[k])) << paths[static_cast<size_t>(ids[k])];
      ++(*seen)[ids[k]];
      read.insert(ids[k]);
    }
  }
  return read;
}

TEST(FileDataset, LocalFolderIsReadInPlaceInCanonicalOrder) {
  ScratchDir data;
  std::vector<std::string> paths = WriteFiles(data.path(), 40);
  DatasetOptions o = FileOptions("", data.path());
  auto ds = StreamingDataset::Open(o);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  ASSERT_EQ((*ds)->num_samples(), 40u);
  ASSERT_EQ((*ds)->num_shards(), 40u);
  EXPECT_EQ((*ds)->column_names(), std::vector<std::string>{"data"});
  EXPECT_EQ((*ds)->column_encodings(), std::vector<std::string>{"bytes"});
  std::vector<std::string> bytes;
  std::vector<int64_t> ids = ReadEpoch(**ds, 0, 0, 0, 1, 7, &bytes);
  ASSERT_EQ(ids.size(), 40u);
  for (size_t k = 0; k < ids.size(); ++k) {
    EXPECT_EQ(ids[k], static_cast<int64_t>(k));
    EXPECT_EQ(bytes[k], FieldOf(paths, ids[k])) << paths[k];
    EXPECT_EQ((*ds)->shard_path(k), JoinPath(data.path(), paths[k]));
  }
  // The listing of a folder read in place is not kept in it.
  EXPECT_FALSE(fs::exists(JoinPath(data.path(), ".sluice/listing.json")));
}

TEST(FileDataset, GlobsSelectAndAnEmptySelectionIsAnError) {
  ScratchDir data, cache;
  WriteFiles(data.path(), 12);
  ASSERT_TRUE(WriteFileAtomic(JoinPath(data.path(), "class0/notes.txt"), "not an image").ok());
  DatasetOptions o = FileOptions(data.path(), cache.path());
  o.streams[0].files->selection.globs = {"class1/*.jpg", "*.txt"};
  auto ds = StreamingDataset::Open(o);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  // class1: files 1, 4, 7, 10; plus notes.txt.
  EXPECT_EQ((*ds)->num_samples(), 5u);
  EXPECT_EQ((*ds)->shard_path(0), JoinPath(cache.path(), "class0/notes.txt"));

  ScratchDir cache2;
  DatasetOptions none = FileOptions(data.path(), cache2.path());
  none.streams[0].files->selection.globs = {"*.png"};
  EXPECT_EQ(StreamingDataset::Open(none).status().message(),
            "stream 0 (" + cache2.path() + "): " + data.path() +
                ": no data file among the 16 listed that matches \"*.png\" (names starting with "
                "'_' or '.' are left out)");
}

// Files are shared among ranks by the planner, each rank by its own worker
// count: the union of all workers is every file exactly once.
TEST(FileDataset, RanksWithDifferentWorkerCountsReadEveryFileOnce) {
  ScratchDir data, cache;
  constexpr int kFiles = 240;  // a multiple of the 2 ranks: no padding
  std::vector<std::string> paths = WriteFiles(data.path(), kFiles);
  std::map<int64_t, int> seen;
  const int64_t workers_of_rank[] = {2, 3};
  for (int64_t rank = 0; rank < 2; ++rank) {
    auto ds = StreamingDataset::Open(RankOfTwoOnOneNode(data.path(), cache.path(), rank, 11));
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    EXPECT_EQ((*ds)->length(), kFiles / 2);
    const std::set<int64_t> of_rank =
        ReadAllWorkers(**ds, workers_of_rank[rank], 5, paths, &seen);
    // The rank's share does not depend on its worker count.
    std::set<int64_t> one_worker;
    auto planned = (*ds)->WorkerIds(0, 0, 0, 1);
    ASSERT_TRUE(planned.ok());
    one_worker.insert(planned->begin(), planned->end());
    EXPECT_EQ(of_rank, one_worker) << "rank " << rank;
    EXPECT_EQ(of_rank.size(), static_cast<size_t>(kFiles / 2));
  }
  ASSERT_EQ(seen.size(), static_cast<size_t>(kFiles));
  for (const auto& [id, count] : seen) EXPECT_EQ(count, 1) << paths[static_cast<size_t>(id)];
}

TEST(FileDataset, ResumesMidEpochExactly) {
  ScratchDir data, cache;
  std::vector<std::string> paths = WriteFiles(data.path(), 90);
  DatasetOptions o = FileOptions(data.path(), cache.path());
  o.plan.shuffle = true;
  o.plan.shuffle_seed = 3;
  o.cache_limit = 20000;  // about a third of the files: evicts as it goes
  auto ds = StreamingDataset::Open(o);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  std::vector<int64_t> whole = ReadEpoch(**ds, 1, 0, 0, 1, 8, nullptr);
  ASSERT_EQ(whole.size(), 90u);
  EXPECT_LE(testing::ShardBytesOnDisk(cache.path()), 20000u);
  ResumeState state = (*ds)->State(37);
  auto resumed = StreamingDataset::Open(o);
  ASSERT_TRUE(resumed.ok());
  ASSERT_TRUE((*resumed)->LoadState(state).ok());
  std::vector<std::string> bytes;
  std::vector<int64_t> rest = ReadEpoch(**resumed, state.epoch, state.sample_in_epoch, 0, 1, 8, &bytes);
  EXPECT_EQ(rest, std::vector<int64_t>(whole.begin() + 37, whole.end()));
  for (size_t k = 0; k < rest.size(); ++k) EXPECT_EQ(bytes[k], FieldOf(paths, rest[k]));
  EXPECT_GT((*resumed)->counters().shards_evicted, 0u);
}

TEST(FileDataset, AMissingFileIsNamedOrSkippedAndCounted) {
  ScratchDir data, cache;
  std::vector<std::string> paths = WriteFiles(data.path(), 10);
  DatasetOptions o = FileOptions(data.path(), cache.path());
  auto ds = StreamingDataset::Open(o);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  // Deleted after it was listed (the listing is cached on the node).
  ASSERT_TRUE(fs::remove(JoinPath(data.path(), paths[4])));
  SampleFields f;
  Status get = (*ds)->Get(4, &f);
  EXPECT_EQ(get.code(), StatusCode::kNotFound) << get.ToString();
  EXPECT_NE(get.message().find(JoinPath(data.path(), paths[4])), std::string::npos)
      << get.message();

  o.skip_missing_files = true;
  auto skipping = StreamingDataset::Open(o);
  ASSERT_TRUE(skipping.ok());
  std::vector<std::string> bytes;
  std::vector<int64_t> ids = ReadEpoch(**skipping, 0, 0, 0, 1, 4, &bytes);
  std::vector<int64_t> expected = {0, 1, 2, 3, 5, 6, 7, 8, 9};
  EXPECT_EQ(ids, expected);
  EXPECT_EQ((*skipping)->counters().shards_skipped, 1u);
  EXPECT_EQ((*skipping)->counters().samples_skipped, 1u);
  Status skipped_get = (*skipping)->Get(4, &f);
  EXPECT_NE(skipped_get.message().find("was skipped as corrupt or unreadable"), std::string::npos)
      << skipped_get.message();
}

// dbfs:/Volumes (Unity Catalog volumes, the Databricks case) through the
// Files API fake: two ranks of one node with 2 and 3 workers read every file
// once, with exact bytes, one GET per file, and the listing made once.
TEST(FileDataset, DbfsVolumeIsReadOnceAcrossRanksWithOneGetPerFile) {
  testing::FakeDatabricksFiles fake;
  testing::ScopedEnv scoped(fake.StoreEnv());
  ScratchDir written, cache;
  constexpr int kFiles = 60;
  std::vector<std::string> paths = WriteFiles(written.path(), kFiles);
  const std::string volume = "/Volumes/main/vision/raw/imgs";
  for (const std::string& p : paths) {
    auto bytes = ReadFile(JoinPath(written.path(), p));
    ASSERT_TRUE(bytes.ok());
    fake.Put(volume + "/" + p, *bytes);
  }
  fake.Put(volume + "/_SUCCESS", "");
  std::map<int64_t, int> seen;
  int pages_after_first_rank = 0;
  const int64_t workers_of_rank[] = {2, 3};
  for (int64_t rank = 0; rank < 2; ++rank) {
    auto ds = StreamingDataset::Open(RankOfTwoOnOneNode("dbfs:" + volume, cache.path(), rank, 5));
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    ReadAllWorkers(**ds, workers_of_rank[rank], 4, paths, &seen);
    if (rank == 0) pages_after_first_rank = fake.list_pages();
  }
  ASSERT_EQ(seen.size(), static_cast<size_t>(kFiles));
  for (const auto& [id, count] : seen) EXPECT_EQ(count, 1) << paths[static_cast<size_t>(id)];
  for (const std::string& p : paths) EXPECT_EQ(fake.gets(volume + "/" + p), 1) << p;
  EXPECT_GT(pages_after_first_rank, 0);
  EXPECT_EQ(fake.list_pages(), pages_after_first_rank);  // the second rank used the node's listing
}

// Forks (a child reads, so the store's loop stays out of this process):
// MultiProcess in its name, which the ThreadSanitizer run leaves out (see dev).
TEST(FileDatasetMultiProcess, ManifestOverNginxWithAndWithoutSizes) {
  ScratchDir scratch;
  const std::string server_dir = JoinPath(scratch.path(), "nginx");
  ASSERT_TRUE(fs::create_directories(server_dir));
  auto nginx = testing::NginxServer::Start(server_dir);
  ASSERT_NE(nginx, nullptr) << "nginx did not start";
  const std::string root = JoinPath(nginx->www(), "imgs");
  std::vector<std::string> paths = WriteFiles(root, 30);
  // Half the lines give sizes, half are plain paths (looked up with HEAD).
  std::string manifest = "# the training images\n";
  for (size_t k = 0; k < paths.size(); ++k) {
    manifest += k % 2 ? paths[k] + "\n"
                      : "{\"path\": \"" + paths[k] + "\", \"size\": " +
                            std::to_string(BytesOf(paths, static_cast<int64_t>(k)).size()) + "}\n";
  }
  ASSERT_TRUE(WriteFileAtomic(JoinPath(root, "files.txt"), manifest).ok());
  const std::string url = "http://127.0.0.1:" + std::to_string(nginx->http_port()) + "/imgs";
  testing::ScopedEnv env(testing::CleanStoreEnv());
  DatasetOptions o = FileOptions(url, JoinPath(scratch.path(), "cache"));
  o.streams[0].files->manifest = "files.txt";
  std::string out = JoinPath(scratch.path(), "result");
  // In a child: the store's event loop stays out of this process.
  ASSERT_EQ(WaitExit(Fork([&] { return testing::RunWorker(o, 0, 1, out); })), 0);
  WorkerResult got = ReadResult(out);
  ASSERT_EQ(got.ids.size(), paths.size());
  for (size_t k = 0; k < got.ids.size(); ++k) {
    EXPECT_EQ(got.ids[k], static_cast<int64_t>(k));
    EXPECT_EQ(got.bytes[k], FieldOf(paths, got.ids[k]));
  }
  // One GET of the manifest, one HEAD per unsized file, one GET per file.
  std::map<std::string, int> requests;
  std::string log = nginx->AccessLog();
  for (size_t at = 0; at < log.size();) {
    size_t end = log.find('\n', at);
    std::string line = log.substr(at, end - at);
    at = end == std::string::npos ? log.size() : end + 1;
    std::istringstream fields(line);
    std::string conn, method, uri;
    fields >> conn >> method >> uri;
    ++requests[method + " " + uri];
  }
  std::map<std::string, int> expected{{"GET /imgs/files.txt", 1}};
  for (size_t k = 0; k < paths.size(); ++k) {
    expected["GET /imgs/" + paths[k]] = 1;
    if (k % 2) expected["HEAD /imgs/" + paths[k]] = 1;
  }
  EXPECT_EQ(requests, expected);

  // A listed file the server does not have: named at Open (its HEAD).
  ASSERT_TRUE(WriteFileAtomic(JoinPath(root, "bad.txt"), "class0/img0.jpg\nclass9/none.jpg\n").ok());
  DatasetOptions bad = FileOptions(url, JoinPath(scratch.path(), "cache-bad"));
  bad.streams[0].files->manifest = "bad.txt";
  std::string bad_out = JoinPath(scratch.path(), "bad-result");
  pid_t child = Fork([&] {
    auto ds = StreamingDataset::Open(bad);
    if (ds.ok()) return 1;
    (void)WriteFileAtomic(bad_out, ds.status().ToString());
    return 0;
  });
  ASSERT_EQ(WaitExit(child), 0);
  auto message = ReadFile(bad_out);
  ASSERT_TRUE(message.ok());
  EXPECT_NE(message->find("class9/none.jpg"), std::string::npos) << *message;
  EXPECT_NE(message->find("404"), std::string::npos) << *message;
}

// A file larger than a part (8 MiB) is fetched as parallel ranged GETs that
// cover it exactly once; small files beside it take one plain GET each.
// nginx on this host answers as if local (HttpClient::LocalLink): the file
// then comes in two halves (StoreOptions::local_concurrency); on a machine
// so loaded that the manifest's answer took over 5 ms, in 8 MiB parts.
TEST(FileDatasetMultiProcess, ALargeFileIsFetchedAsRangedParts) {
  ScratchDir scratch;
  const std::string server_dir = JoinPath(scratch.path(), "nginx");
  ASSERT_TRUE(fs::create_directories(server_dir));
  auto nginx = testing::NginxServer::Start(server_dir);
  ASSERT_NE(nginx, nullptr) << "nginx did not start";
  const std::string root = JoinPath(nginx->www(), "media");
  ASSERT_TRUE(MakeDirs(JoinPath(root, "clips")).ok());
  const uint64_t kBig = (uint64_t{20} << 20) + 12345;  // 3 parts of 8 MiB, or 2 halves
  const std::string big = testing::PatternBytes(kBig, 7);
  ASSERT_TRUE(WriteFileAtomic(JoinPath(root, "clips/long.bin"), big).ok());
  ASSERT_TRUE(WriteFileAtomic(JoinPath(root, "clips/short.bin"), "short clip").ok());
  ASSERT_TRUE(WriteFileAtomic(JoinPath(root, "files.txt"),
                              "{\"path\": \"clips/long.bin\", \"size\": " +
                                  std::to_string(kBig) +
                                  "}\n{\"path\": \"clips/short.bin\", \"size\": 10}\n")
                  .ok());
  testing::ScopedEnv env(testing::CleanStoreEnv());
  DatasetOptions o = FileOptions("http://127.0.0.1:" + std::to_string(nginx->http_port()) + "/media",
                                 JoinPath(scratch.path(), "cache"));
  o.streams[0].files->manifest = "files.txt";
  std::string out = JoinPath(scratch.path(), "result");
  ASSERT_EQ(WaitExit(Fork([&] { return testing::RunWorker(o, 0, 1, out); })), 0);
  WorkerResult got = ReadResult(out);
  ASSERT_EQ(got.ids, (std::vector<int64_t>{0, 1}));
  EXPECT_TRUE(got.bytes[0] == big + '\xff') << "the large file's bytes differ";
  EXPECT_EQ(got.bytes[1], std::string("short clip") + '\xff');

  // Each GET of the large file asks for a range; together they tile it.
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  int short_gets = 0;
  std::istringstream log(nginx->AccessLog());
  for (std::string line; std::getline(log, line);) {
    std::istringstream fields(line);
    std::string conn, method, uri, status, range;
    fields >> conn >> method >> uri >> status >> range;
    if (uri == "/media/clips/short.bin") ++short_gets;
    if (uri != "/media/clips/long.bin") continue;
    ASSERT_EQ(method, "GET");
    ASSERT_EQ(status, "206") << line;
    ASSERT_EQ(range.rfind("bytes=", 0), 0u) << line;
    size_t dash = range.find('-');
    ranges.emplace_back(std::stoull(range.substr(6, dash - 6)), std::stoull(range.substr(dash + 1)));
  }
  std::sort(ranges.begin(), ranges.end());
  ASSERT_TRUE(ranges.size() == 2 || ranges.size() == 3) << ranges.size() << " ranges";
  const uint64_t part = ranges.size() == 2 ? (kBig + 1) / 2 : uint64_t{8} << 20;
  uint64_t next = 0;
  for (const auto& [first, last] : ranges) {
    EXPECT_EQ(first, next);
    EXPECT_EQ(last + 1 - first, std::min(part, kBig - first));
    next = last + 1;
  }
  EXPECT_EQ(next, kBig);
  EXPECT_EQ(short_gets, 1);
}

// 2 nodes x 2 ranks x 2 workers over s3rver, each node through its own
// request-logging proxy: one LIST per node, one GET per file a node reads,
// a second job on the same nodes lists nothing, cache_limit holds.
TEST(FileDatasetS3MultiProcess, OneListAndOneGetPerFilePerNode) {
  std::string why = testing::NodeServersUnavailableReason();
  if (!why.empty()) GTEST_SKIP() << why;
  constexpr char kKeyId[] = "SLUICEFILESKEY";
  constexpr char kSecret[] = "files-s3cr3t-never-printed";
  ScratchDir data, scratch, server_dir;
  constexpr int kFiles = 320;  // C(2) x P(2) x R(2) x W(2) x B(4) x 5: no padding
  std::vector<std::string> paths = WriteFiles(data.path(), kFiles);
  uint64_t total_bytes = 0;
  for (int i = 0; i < kFiles; ++i) total_bytes += FileBytes(i).size();
  const uint64_t limit = total_bytes * 40 / 100;  // below a node's half
  constexpr int64_t kNodes = 2, kRanks = 2, kWorkers = 2, kBatch = 4;

  auto server = testing::StartS3rver(server_dir.path(), kKeyId, kSecret, {"bkt"});
  ASSERT_NE(server, nullptr) << "s3rver did not start";
  testing::ScopedEnv env(testing::S3rverEnv(server->port(), kKeyId, kSecret));
  ASSERT_EQ(UploadTree("s3://bkt/imgs", data.path()), 0) << server->Log();

  std::vector<std::unique_ptr<RequestLogProxy>> proxies;
  for (int64_t n = 0; n < kNodes; ++n) {
    proxies.push_back(RequestLogProxy::Start(
        server->port(), JoinPath(scratch.path(), "requests" + std::to_string(n))));
    ASSERT_NE(proxies.back(), nullptr);
  }
  auto node_dir = [&](int64_t n) { return JoinPath(scratch.path(), "node" + std::to_string(n)); };
  auto options = [&](int64_t node, int64_t rank) {
    DatasetOptions o = FileOptions("s3://bkt/imgs", node_dir(node));
    o.streams[0].download_retry = 0;  // a retry would be a second GET
    o.cache_limit = limit;
    o.plan.shuffle = true;
    o.plan.shuffle_seed = 5;
    o.plan.batch_size = kBatch;
    o.plan.num_canonical_nodes = 2;
    o.predownload = 16;
    o.world.rank = node * kRanks + rank;
    o.world.world_size = kNodes * kRanks;
    o.world.local_rank = rank;
    o.world.local_world_size = kRanks;
    o.wait_timeout = std::chrono::seconds(30);
    return o;
  };
  auto result_path = [&](int64_t n, int64_t r, int64_t w) {
    return JoinPath(scratch.path(),
                    "result_" + std::to_string(n) + std::to_string(r) + std::to_string(w));
  };
  std::map<std::tuple<int64_t, int64_t, int64_t>, pid_t> pids;
  for (int64_t n = 0; n < kNodes; ++n) {
    std::string endpoint = "http://127.0.0.1:" + std::to_string(proxies[n]->port());
    for (int64_t r = 0; r < kRanks; ++r) {
      for (int64_t w = 0; w < kWorkers; ++w) {
        DatasetOptions o = options(n, r);
        std::string out = result_path(n, r, w);
        pids[{n, r, w}] = Fork([o, w, out, endpoint] {
          ::setenv("S3_ENDPOINT_URL", endpoint.c_str(), 1);  // this node's proxy
          return testing::RunWorker(o, w, kWorkers, out);
        });
      }
    }
  }
  testing::DiskSampler sampler(testing::DiskSampler::FolderPerNode({node_dir(0), node_dir(1)}));
  for (const auto& [key, pid] : pids) EXPECT_EQ(WaitExit(pid), 0);
  sampler.Stop();

  std::map<int64_t, int> seen;
  std::map<int64_t, std::set<std::string>> node_files;
  for (const auto& [key, pid] : pids) {
    auto [n, r, w] = key;
    WorkerResult got = ReadResult(result_path(n, r, w));
    ASSERT_EQ(got.bytes.size(), got.ids.size());
    for (size_t i = 0; i < got.ids.size(); ++i) {
      ASSERT_EQ(got.bytes[i], FieldOf(paths, got.ids[i]));
      ++seen[got.ids[i]];
      node_files[n].insert(paths[static_cast<size_t>(got.ids[i])]);
    }
  }
  ASSERT_EQ(seen.size(), static_cast<size_t>(kFiles));
  for (const auto& [id, count] : seen) ASSERT_EQ(count, 1) << paths[static_cast<size_t>(id)];
  EXPECT_GT(sampler.samples(), 0u);
  EXPECT_LE(sampler.max(), limit);

  // On the wire: per node one listing (its five requests, all delimited:
  // imgs/, its three folders class0/ to class2/ (too few to fan out over),
  // then class0/_temporary/; see stores/common/tree_listing.h) and one GET
  // per file it read.
  auto count_requests = [&](int64_t n, int* lists) {
    std::map<std::string, int> gets;
    *lists = 0;
    for (const std::string& line : proxies[n]->Requests()) {
      if (line.rfind("GET /bkt?", 0) == 0 || line.rfind("GET /bkt/?", 0) == 0) {
        ++*lists;
        continue;
      }
      const std::string object = "GET /bkt/imgs/";
      EXPECT_EQ(line.rfind(object, 0), 0u) << line;
      std::string key = line.substr(object.size());
      ++gets[key.substr(0, key.find(' '))];
    }
    return gets;
  };
  for (int64_t n = 0; n < kNodes; ++n) {
    int lists = 0;
    std::map<std::string, int> gets = count_requests(n, &lists);
    EXPECT_EQ(lists, 5) << "node " << n;
    std::map<std::string, int> expected;
    for (const std::string& f : node_files[n]) expected[f] = 1;
    EXPECT_EQ(gets, expected) << "node " << n;
    EXPECT_LT(node_files[n].size(), static_cast<size_t>(kFiles));
  }

  // A second job on node 0: the listing is read from the node's cache.
  size_t before = proxies[0]->Requests().size();
  std::string endpoint = "http://127.0.0.1:" + std::to_string(proxies[0]->port());
  pid_t again = Fork([&] {
    ::setenv("S3_ENDPOINT_URL", endpoint.c_str(), 1);
    auto ds = StreamingDataset::Open(options(0, 0));
    return ds.ok() && (*ds)->num_samples() == static_cast<uint64_t>(kFiles) ? 0 : 1;
  });
  EXPECT_EQ(WaitExit(again), 0);
  EXPECT_EQ(proxies[0]->Requests().size(), before);
}

// The same files from azurite (azure://): listed through the Blob service,
// read in canonical order, the listing kept under the source's name. Forks,
// as the test above.
TEST(FileDatasetMultiProcess, AzureListsAndReadsEveryFileInOrder) {
  std::string why = testing::NodeServersUnavailableReason();
  if (!why.empty()) GTEST_SKIP() << why;
  ScratchDir data, scratch, server_dir;
  std::vector<std::string> paths = WriteFiles(data.path(), 30);
  auto server = testing::StartAzurite(server_dir.path());
  ASSERT_NE(server, nullptr) << "azurite did not start";
  testing::ScopedEnv env(testing::AzuriteEnv(server->port()));
  const int port = server->port();
  ASSERT_EQ(UploadTree("azure://imgs/ds", data.path(),
                       [port](EventLoop& loop) {
                         return testing::CreateAzuriteContainer(loop, port, "imgs");
                       }),
            0)
      << server->Log();
  DatasetOptions o = FileOptions("azure://imgs/ds", JoinPath(scratch.path(), "cache"));
  std::string out = JoinPath(scratch.path(), "result");
  ASSERT_EQ(WaitExit(Fork([&] { return testing::RunWorker(o, 0, 1, out); })), 0);
  WorkerResult got = ReadResult(out);
  ASSERT_EQ(got.ids.size(), paths.size());
  for (size_t k = 0; k < got.ids.size(); ++k) {
    EXPECT_EQ(got.ids[k], static_cast<int64_t>(k));
    EXPECT_EQ(got.bytes[k], FieldOf(paths, got.ids[k])) << paths[k];
  }
  auto listing = ReadFile(JoinPath(scratch.path(), "cache/.sluice/listing.json"));
  ASSERT_TRUE(listing.ok());
  EXPECT_EQ(listing->rfind("{\"source\": \"azure://imgs/ds\"", 0), 0u) << *listing;
}

}  // namespace
}  // namespace sluice
