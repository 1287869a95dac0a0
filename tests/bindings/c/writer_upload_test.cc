// The C ABI writer with a remote (sluice_writer_options.remote) and
// sluice_remote_*, through libsluice.so, against a real s3rver: what lands
// remotely is byte for byte what a local-only writer writes.
#include "sluice.h"

#include <gtest/gtest.h>

#include <cstring>
#include <regex>
#include <string>
#include <vector>

#include "base/file.h"
#include "tests/stores/common/node_servers.h"
#include "tests/stores/http/test_servers.h"

namespace {

using sluice::testing::CleanStoreEnv;
using sluice::testing::NamesIn;
using sluice::testing::NodeServer;
using sluice::testing::ScopedEnv;
using sluice::testing::TempDir;

constexpr char kKeyId[] = "SLUICECAPIKEY";
constexpr char kSecret[] = "capi-s3cr3t-never-printed";

std::string RemoteRead(const std::string& url, const std::string& key, sluice_status* status) {
  char* data = nullptr;
  uint64_t size = 0;
  *status = sluice_remote_read(url.c_str(), key.c_str(), &data, &size);
  std::string out = data ? std::string(data, size) : std::string();
  sluice_free(data);
  return out;
}

std::string RemoteList(const std::string& url) {
  char* json = nullptr;
  if (sluice_remote_list(url.c_str(), nullptr, &json) != SLUICE_OK) return sluice_last_error();
  std::string out = json;
  sluice_free(json);
  return out;
}

// Writes 120 samples {id: int64, text: str} into `dir`, with `remote` (or
// none), a 1 KiB size limit, zstd and xxh64.
sluice_status WriteDataset(const std::string& dir, const char* remote, uint32_t keep_local) {
  const char* names[] = {"text", "id"};
  const char* encs[] = {"str", "int64"};
  const char* hashes[] = {"xxh64"};
  sluice_writer_options o;
  std::memset(&o, 0, sizeof(o));
  o.compression = "zstd";
  o.hashes = hashes;
  o.num_hashes = 1;
  o.size_limit = 1024;
  o.remote = remote;
  o.keep_local = keep_local;
  o.max_workers = 2;
  sluice_writer* w = nullptr;
  sluice_status st = sluice_writer_open(dir.c_str(), names, encs, 2, &o, &w);
  if (st != SLUICE_OK) return st;
  for (int64_t i = 0; i < 120 && st == SLUICE_OK; ++i) {
    std::string text = "sample " + std::to_string(i * 7919);
    uint8_t id[8];
    uint64_t len = 0;
    st = sluice_encode_int64("int64", i, id, sizeof(id), &len);
    sluice_bytes fields[2] = {{reinterpret_cast<const uint8_t*>(text.data()), text.size()},
                              {id, len}};
    if (st == SLUICE_OK) st = sluice_writer_write(w, fields, 2);
  }
  if (st == SLUICE_OK) st = sluice_writer_finish(w);
  sluice_writer_close(w);
  return st;
}

class WriterUploadTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    reason_ = new std::string(sluice::testing::NodeServersUnavailableReason());
    if (!reason_->empty()) return;
    dir_ = new TempDir();
    server_ = sluice::testing::StartS3rver(dir_->path(), kKeyId, kSecret, {"bkt"}).release();
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
  static std::string* reason_;
  static TempDir* dir_;
  static NodeServer* server_;
  std::unique_ptr<ScopedEnv> env_;
};
std::string* WriterUploadTest::reason_ = nullptr;
TempDir* WriterUploadTest::dir_ = nullptr;
NodeServer* WriterUploadTest::server_ = nullptr;

TEST_F(WriterUploadTest, RemoteHoldsExactlyWhatALocalWriterWrites) {
  TempDir plain, staged;
  ASSERT_EQ(WriteDataset(plain.path(), nullptr, 0), SLUICE_OK) << sluice_last_error();
  ASSERT_EQ(WriteDataset(staged.path(), "s3://bkt/c/ds", 0), SLUICE_OK) << sluice_last_error();
  sluice_dataset* ds = nullptr;
  ASSERT_EQ(sluice_dataset_open(plain.path().c_str(), 0, &ds), SLUICE_OK);
  uint32_t shards = sluice_dataset_num_shards(ds);
  sluice_dataset_close(ds);
  ASSERT_GT(shards, 3u);
  std::string want_list = "[\"index.json\"";
  for (uint32_t i = 0; i < shards; ++i) {
    char name[40];
    std::snprintf(name, sizeof(name), ", \"shard.%05u.mds.zstd\"", i);
    want_list += name;
  }
  want_list += "]";
  EXPECT_EQ(RemoteList("s3://bkt/c/ds"), want_list);
  for (const std::string& key : {std::string("index.json"), std::string("shard.00000.mds.zstd"),
                                 std::string("shard.00003.mds.zstd")}) {
    sluice_status st;
    std::string got = RemoteRead("s3://bkt/c/ds", key, &st);
    ASSERT_EQ(st, SLUICE_OK) << sluice_last_error();
    auto want = sluice::ReadFile(plain.path() + "/" + key);
    ASSERT_TRUE(want.ok());
    EXPECT_TRUE(got == *want) << key;
    EXPECT_FALSE(sluice::FileExists(staged.path() + "/" + key)) << key << " kept locally";
  }
}

TEST_F(WriterUploadTest, KeepLocalAndRemoteObjectCalls) {
  TempDir staged;
  ASSERT_EQ(WriteDataset(staged.path(), "s3://bkt/c/kept", 1), SLUICE_OK) << sluice_last_error();
  EXPECT_TRUE(sluice::FileExists(staged.path() + "/index.json"));
  EXPECT_TRUE(sluice::FileExists(staged.path() + "/shard.00000.mds.zstd"));
  const std::string payload = "{\"version\": 2, \"shards\": []}";
  ASSERT_EQ(sluice_remote_write("s3://bkt/c/obj", "sub/index.json",
                                reinterpret_cast<const uint8_t*>(payload.data()), payload.size()),
            SLUICE_OK)
      << sluice_last_error();
  sluice_status st;
  EXPECT_EQ(RemoteRead("s3://bkt/c/obj", "sub/index.json", &st), payload);
  EXPECT_EQ(st, SLUICE_OK);
  RemoteRead("s3://bkt/c/obj", "nope/index.json", &st);
  EXPECT_EQ(st, SLUICE_ENOTFOUND);
  EXPECT_EQ(RemoteList("s3://bkt/c/obj"), "[\"sub/index.json\"]");
}

TEST_F(WriterUploadTest, ReadToFileStreamsAnObjectIntoPlaceAndLeavesNothingOnFailure) {
  std::string payload(3 << 20, '\0');
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<char>((i * 131) >> 7);
  ASSERT_EQ(sluice_remote_write("s3://bkt/c/big", "d/obj.bin",
                                reinterpret_cast<const uint8_t*>(payload.data()), payload.size()),
            SLUICE_OK)
      << sluice_last_error();
  TempDir local;
  const std::string path = local.path() + "/obj.bin";
  ASSERT_TRUE(sluice::WriteFileAtomic(path, "an older file").ok());
  ASSERT_EQ(sluice_remote_read_to_file("s3://bkt/c/big", "d/obj.bin", path.c_str()), SLUICE_OK)
      << sluice_last_error();
  auto got = sluice::ReadFile(path);
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(*got == payload);
  EXPECT_EQ(NamesIn(local.path()), std::vector<std::string>{"obj.bin"});

  const std::string missing = local.path() + "/missing.bin";
  EXPECT_EQ(sluice_remote_read_to_file("s3://bkt/c/big", "d/nope.bin", missing.c_str()),
            SLUICE_ENOTFOUND);
  EXPECT_NE(std::string(sluice_last_error()).find("d/nope.bin"), std::string::npos)
      << sluice_last_error();
  EXPECT_EQ(NamesIn(local.path()), std::vector<std::string>{"obj.bin"});
  EXPECT_EQ(sluice_remote_read_to_file("s3://bkt/c/big", "d/obj.bin", nullptr), SLUICE_EINVAL);
}

TEST_F(WriterUploadTest, FailedUploadIsReportedByFinishWithoutSecrets) {
  TempDir staged;
  sluice_status st = WriteDataset(staged.path(), "s3://missing-bucket/ds", 0);
  ASSERT_NE(st, SLUICE_OK);
  std::string text = sluice_last_error();
  // Shards upload concurrently, so whichever fails first is reported; the
  // message names that one file both locally and remotely.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      text, m,
      std::regex("upload of (.*)/(shard\\.[0-9]{5}\\.mds\\.zstd) to "
                 "s3://missing-bucket/ds/(shard\\.[0-9]{5}\\.mds\\.zstd): .*NoSuchBucket")))
      << text;
  EXPECT_EQ(m[1].str(), staged.path()) << text;
  EXPECT_EQ(m[2].str(), m[3].str()) << text;
  EXPECT_EQ(text.find(kSecret), std::string::npos);
  EXPECT_EQ(text.find(kKeyId), std::string::npos);
}

TEST(WriterOptionsTest, RefusedCombinations) {
  TempDir dir;
  const char* names[] = {"a"};
  const char* encs[] = {"str"};
  sluice_writer* w = nullptr;
  sluice_writer_options o;
  std::memset(&o, 0, sizeof(o));
  o.newline = "\r\n";  // MDS has no lines
  EXPECT_EQ(sluice_writer_open(dir.path().c_str(), names, encs, 1, &o, &w), SLUICE_EINVAL);
  std::memset(&o, 0, sizeof(o));
  o.format = "xsv";  // needs a separator
  EXPECT_EQ(sluice_writer_open(dir.path().c_str(), names, encs, 1, &o, &w), SLUICE_EINVAL);
  o.separator = "|";
  o.remote = "nosuch://x/y";
  EXPECT_EQ(sluice_writer_open(dir.path().c_str(), names, encs, 1, &o, &w), SLUICE_EINVAL);
  EXPECT_NE(std::string(sluice_last_error()).find("nosuch"), std::string::npos);
  EXPECT_EQ(w, nullptr);
  char* data = nullptr;
  uint64_t size = 0;
  EXPECT_EQ(sluice_remote_read(nullptr, "k", &data, &size), SLUICE_EINVAL);
  EXPECT_EQ(sluice_remote_list("s3:/", nullptr, nullptr), SLUICE_EINVAL);
  uint64_t files = 7;
  EXPECT_EQ(sluice_writer_uploaded(nullptr, &files, nullptr), SLUICE_EINVAL);
}

TEST(WriterOptionsTest, XsvWithSeparatorThroughTheCApi) {
  TempDir dir;
  const char* names[] = {"b", "a"};
  const char* encs[] = {"str", "int"};
  sluice_writer_options o;
  std::memset(&o, 0, sizeof(o));
  o.format = "xsv";
  o.separator = "|";
  o.newline = "\r\n";
  sluice_writer* w = nullptr;
  ASSERT_EQ(sluice_writer_open(dir.path().c_str(), names, encs, 2, &o, &w), SLUICE_OK)
      << sluice_last_error();
  sluice_bytes fields[2] = {{reinterpret_cast<const uint8_t*>("x y"), 3},
                            {reinterpret_cast<const uint8_t*>("42"), 2}};
  ASSERT_EQ(sluice_writer_write(w, fields, 2), SLUICE_OK) << sluice_last_error();
  ASSERT_EQ(sluice_writer_finish(w), SLUICE_OK) << sluice_last_error();
  uint64_t files = 9, bytes = 9;
  EXPECT_EQ(sluice_writer_uploaded(w, &files, &bytes), SLUICE_OK);
  EXPECT_EQ(files, 0u);
  EXPECT_EQ(bytes, 0u);
  sluice_writer_close(w);
  auto data = sluice::ReadFile(dir.path() + "/shard.00000.xsv");
  ASSERT_TRUE(data.ok());
  EXPECT_EQ(*data, "a|b\r\n42|x y\r\n");  // columns sorted, Mosaic's header line
}

}  // namespace
