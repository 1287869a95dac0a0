// ShardUploader and RemoteFolder against a real, signature-verifying s3rver
// (tests/servers) and a local folder (file store).
#include "engine/upload/shard_uploader.h"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "base/file.h"
#include "engine/runtime/event_loop.h"
#include "engine/upload/remote_folder.h"
#include "stores/store.h"
#include "tests/stores/common/fake_http_server.h"
#include "tests/stores/common/node_servers.h"
#include "tests/stores/http/test_servers.h"

namespace sluice {
namespace {

using testing::CleanStoreEnv;
using testing::FakeHttpServer;
using testing::FakeRequest;
using testing::FakeResponse;
using testing::NodeServer;
using testing::PatternBytes;
using testing::ScopedEnv;
using testing::TempDir;

constexpr char kKeyId[] = "SLUICEUPLOADKEY";
constexpr char kSecret[] = "upl0ad-s3cr3t-never-printed";

// Writes `files` (name -> bytes) into `dir`.
void WriteFiles(const std::string& dir, const std::vector<std::pair<std::string, std::string>>& files) {
  for (const auto& [name, bytes] : files) {
    ASSERT_TRUE(WriteFileAtomic(JoinPath(dir, name), bytes).ok()) << name;
  }
}

std::vector<std::pair<std::string, std::string>> ShardFiles(int n, size_t size) {
  std::vector<std::pair<std::string, std::string>> out;
  for (int i = 0; i < n; ++i) {
    char name[32];
    std::snprintf(name, sizeof(name), "shard.%05d.mds", i);
    out.emplace_back(name, PatternBytes(size + static_cast<size_t>(i), static_cast<uint32_t>(i + 3)));
  }
  return out;
}

class S3UploadTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    reason_ = new std::string(testing::NodeServersUnavailableReason());
    if (!reason_->empty()) return;
    dir_ = new TempDir();
    server_ = testing::StartS3rver(dir_->path(), kKeyId, kSecret, {"up"}).release();
  }
  static void TearDownTestSuite() {
    delete server_;
    delete dir_;
    delete reason_;
    server_ = nullptr;
    dir_ = nullptr;
  }
  void SetUp() override {
    if (!reason_->empty()) GTEST_SKIP() << *reason_;
    ASSERT_NE(server_, nullptr) << "s3rver did not start";
    auto env = CleanStoreEnv();
    env["AWS_ACCESS_KEY_ID"] = kKeyId;
    env["AWS_SECRET_ACCESS_KEY"] = kSecret;
    env["S3_ENDPOINT_URL"] = "http://127.0.0.1:" + std::to_string(server_->port());
    env_ = std::make_unique<ScopedEnv>(env);
  }
  static std::string Read(const std::string& url, const std::string& key) {
    auto folder = RemoteFolder::Open(url);
    if (!folder.ok()) return "open failed: " + folder.status().ToString();
    auto got = (*folder)->Read(key);
    return got.ok() ? *got : "read failed: " + got.status().ToString();
  }
  static ShardUploaderOptions Options(const std::string& local, const std::string& remote) {
    ShardUploaderOptions o;
    o.local_dir = local;
    o.remote = remote;
    o.store.download_retry = 0;
    o.store.download_timeout_s = 20;
    return o;
  }

  static std::string* reason_;
  static TempDir* dir_;
  static NodeServer* server_;
  std::unique_ptr<ScopedEnv> env_;
};
std::string* S3UploadTest::reason_ = nullptr;
TempDir* S3UploadTest::dir_ = nullptr;
NodeServer* S3UploadTest::server_ = nullptr;

TEST_F(S3UploadTest, UploadsEveryFileAndDeletesLocalCopies) {
  TempDir local;
  auto files = ShardFiles(7, 40000);
  WriteFiles(local.path(), files);
  auto opts = Options(local.path(), "s3://up/ds1");
  opts.max_workers = 3;
  auto up = ShardUploader::Open(opts);
  ASSERT_TRUE(up.ok()) << up.status().ToString();
  EXPECT_EQ((*up)->max_workers(), 3u);
  EXPECT_EQ((*up)->remote(), "s3://up/ds1");
  uint64_t total = 0;
  for (const auto& [name, bytes] : files) {
    ASSERT_TRUE((*up)->Enqueue(name).ok());
    total += bytes.size();
  }
  Status st = (*up)->Wait();
  ASSERT_TRUE(st.ok()) << st.ToString() << "\n" << server_->Log();
  EXPECT_EQ((*up)->files_uploaded(), 7u);
  EXPECT_EQ((*up)->bytes_uploaded(), total);
  for (const auto& [name, bytes] : files) {
    EXPECT_TRUE(Read("s3://up/ds1", name) == bytes) << name;
    EXPECT_FALSE(FileExists(JoinPath(local.path(), name))) << name << " kept locally";
  }
  auto folder = RemoteFolder::Open("s3://up/ds1");
  ASSERT_TRUE(folder.ok());
  auto keys = (*folder)->List("");
  ASSERT_TRUE(keys.ok()) << keys.status().ToString();
  std::vector<std::string> want;
  for (const auto& f : files) want.push_back(f.first);
  EXPECT_EQ(*keys, want);
}

TEST_F(S3UploadTest, KeepLocalKeepsFiles) {
  TempDir local;
  auto files = ShardFiles(2, 1000);
  WriteFiles(local.path(), files);
  auto opts = Options(local.path(), "s3://up/keep/");
  opts.keep_local = true;
  opts.max_workers = 1;
  auto up = ShardUploader::Open(opts);
  ASSERT_TRUE(up.ok()) << up.status().ToString();
  for (const auto& f : files) ASSERT_TRUE((*up)->Enqueue(f.first).ok());
  ASSERT_TRUE((*up)->Wait().ok());
  for (const auto& [name, bytes] : files) {
    EXPECT_TRUE(Read("s3://up/keep", name) == bytes);
    auto kept = ReadFile(JoinPath(local.path(), name));
    ASSERT_TRUE(kept.ok());
    EXPECT_TRUE(*kept == bytes);
  }
}

TEST_F(S3UploadTest, LargeFileGoesUpWhole) {
  // Above the store's part size: the store uploads it in parts.
  TempDir local;
  std::string big = PatternBytes((5u << 20) + 12345, 99);
  WriteFiles(local.path(), {{"shard.00000.mds.zstd", big}});
  auto opts = Options(local.path(), "s3://up/big");
  opts.store.part_size = 5u << 20;
  auto up = ShardUploader::Open(opts);
  ASSERT_TRUE(up.ok()) << up.status().ToString();
  ASSERT_TRUE((*up)->Enqueue("shard.00000.mds.zstd").ok());
  Status st = (*up)->Wait();
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_TRUE(Read("s3://up/big", "shard.00000.mds.zstd") == big);
}

TEST_F(S3UploadTest, FailedUploadNamesFileAndUrlWithoutSecretAndSticks) {
  TempDir local;
  WriteFiles(local.path(), ShardFiles(3, 100));
  // No such bucket: the PUT fails.
  auto up = ShardUploader::Open(Options(local.path(), "s3://nobucket/ds"));
  ASSERT_TRUE(up.ok()) << up.status().ToString();
  ASSERT_TRUE((*up)->Enqueue("shard.00000.mds").ok());
  Status st = (*up)->Wait();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find(JoinPath(local.path(), "shard.00000.mds")), std::string::npos)
      << st.ToString();
  EXPECT_NE(st.message().find("s3://nobucket/ds/shard.00000.mds"), std::string::npos)
      << st.ToString();
  EXPECT_EQ(st.message().find(kSecret), std::string::npos);
  EXPECT_EQ(st.message().find(kKeyId), std::string::npos);
  // Later files are refused with the same error, and the local file stays.
  Status again = (*up)->Enqueue("shard.00001.mds");
  EXPECT_EQ(again.message(), st.message());
  EXPECT_TRUE(FileExists(JoinPath(local.path(), "shard.00000.mds")));
  EXPECT_EQ((*up)->files_uploaded(), 0u);
}

TEST_F(S3UploadTest, RemoteFolderReadWriteList) {
  auto folder = RemoteFolder::Open("s3://up/rf");
  ASSERT_TRUE(folder.ok()) << folder.status().ToString();
  ASSERT_TRUE((*folder)->Write("b/index.json", "{\"b\": 1}").ok());
  ASSERT_TRUE((*folder)->Write("a/index.json", "{\"a\": 1}").ok());
  auto got = (*folder)->Read("a/index.json");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, "{\"a\": 1}");
  auto keys = (*folder)->List("");
  ASSERT_TRUE(keys.ok());
  EXPECT_EQ(*keys, (std::vector<std::string>{"a/index.json", "b/index.json"}));
  auto missing = (*folder)->Read("c/index.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound) << missing.status().ToString();
}

TEST(LocalUploadTest, CopiesIntoAFolderAndRefusesUnsafeNames) {
  TempDir local;
  TempDir remote;
  auto files = ShardFiles(4, 3000);
  WriteFiles(local.path(), files);
  ShardUploaderOptions o;
  o.local_dir = local.path();
  o.remote = "file://" + remote.path() + "/sub";
  o.max_workers = 2;
  auto up = ShardUploader::Open(o);
  ASSERT_TRUE(up.ok()) << up.status().ToString();
  for (const auto& f : files) ASSERT_TRUE((*up)->Enqueue(f.first).ok());
  ASSERT_TRUE((*up)->Wait().ok());
  for (const auto& [name, bytes] : files) {
    auto got = ReadFile(JoinPath(remote.path() + "/sub", name));
    ASSERT_TRUE(got.ok()) << name;
    EXPECT_TRUE(*got == bytes);
    EXPECT_FALSE(FileExists(JoinPath(local.path(), name)));
  }
  Status bad = (*up)->Enqueue("../escape");
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
  // A file that is not there: the error names it.
  ASSERT_TRUE((*up)->Enqueue("shard.00009.mds").ok());
  Status missing = (*up)->Wait();
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find(JoinPath(local.path(), "shard.00009.mds")), std::string::npos)
      << missing.ToString();
}

TEST(LocalUploadTest, UnknownSchemeFailsAtOpen) {
  ShardUploaderOptions o;
  o.local_dir = "/tmp";
  o.remote = "nosuch://x/y";
  auto up = ShardUploader::Open(o);
  ASSERT_FALSE(up.ok());
  EXPECT_EQ(up.status().code(), StatusCode::kInvalidArgument) << up.status().ToString();
}

// How many uploads run at once cannot be seen from s3rver, so this one runs
// against a fake S3 endpoint (FakeHttpServer) that accepts every PUT after
// 150 ms and records the peak number of PUTs in flight.
class ConcurrencyTest : public ::testing::TestWithParam<unsigned> {};

TEST_P(ConcurrencyTest, AtMostMaxWorkersUploadsAtOnce) {
  std::mutex mu;
  int in_flight = 0, peak = 0, puts = 0;
  FakeHttpServer fake([&](const FakeRequest& req) {
    if (req.method != "PUT") return FakeResponse{405, {}, "unexpected " + req.method};
    {
      std::lock_guard<std::mutex> lock(mu);
      peak = std::max(peak, ++in_flight);
      ++puts;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    std::lock_guard<std::mutex> lock(mu);
    --in_flight;
    return FakeResponse{200, {{"ETag", "\"e\""}}, ""};
  });
  auto env = CleanStoreEnv();
  env["AWS_ACCESS_KEY_ID"] = kKeyId;
  env["AWS_SECRET_ACCESS_KEY"] = kSecret;
  env["S3_ENDPOINT_URL"] = fake.url();
  ScopedEnv scoped(env);
  TempDir local;
  auto files = ShardFiles(9, 100);
  WriteFiles(local.path(), files);
  ShardUploaderOptions o;
  o.local_dir = local.path();
  o.remote = "s3://fake/ds";
  o.max_workers = GetParam();
  o.store.download_retry = 0;
  auto up = ShardUploader::Open(o);
  ASSERT_TRUE(up.ok()) << up.status().ToString();
  for (const auto& f : files) ASSERT_TRUE((*up)->Enqueue(f.first).ok());
  Status st = (*up)->Wait();
  ASSERT_TRUE(st.ok()) << st.ToString();
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(puts, 9);
  EXPECT_EQ(peak, static_cast<int>(GetParam()));
  EXPECT_EQ((*up)->files_uploaded(), 9u);
}

INSTANTIATE_TEST_SUITE_P(Workers, ConcurrencyTest, ::testing::Values(1u, 3u));

}  // namespace
}  // namespace sluice
