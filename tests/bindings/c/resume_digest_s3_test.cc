// A resume that proves itself over a real s3rver, through libsluice.so's C
// ABI: a state saved over a remote stream whose data then changed is
// refused, naming the stream by its remote (never the cache folder or a
// secret) with each changed fingerprint, and loads when told to adapt.
#include "sluice.h"

#include <gtest/gtest.h>

#include <cstring>
#include <regex>
#include <string>

#include "tests/stores/common/node_servers.h"
#include "tests/stores/http/test_servers.h"

namespace {

using sluice::testing::CleanStoreEnv;
using sluice::testing::ScopedEnv;
using sluice::testing::TempDir;

constexpr char kDigestKeyId[] = "SLUICEDIGESTKEY";
constexpr char kDigestSecret[] = "digest-s3cr3t-never-printed";
constexpr char kRemote[] = "s3://bkt/digest/ds";

// Writes `n` samples {id: int64} to kRemote (nothing kept in `dir`).
sluice_status UploadSamples(const std::string& dir, int64_t n) {
  const char* names[] = {"id"};
  const char* encs[] = {"int64"};
  sluice_writer_options o;
  std::memset(&o, 0, sizeof(o));
  o.size_limit = 256;
  o.remote = kRemote;
  o.max_workers = 2;
  sluice_writer* w = nullptr;
  sluice_status st = sluice_writer_open(dir.c_str(), names, encs, 1, &o, &w);
  for (int64_t i = 0; i < n && st == SLUICE_OK; ++i) {
    uint8_t id[8];
    uint64_t len = 0;
    st = sluice_encode_int64("int64", i, id, sizeof(id), &len);
    sluice_bytes field{id, len};
    if (st == SLUICE_OK) st = sluice_writer_write(w, &field, 1);
  }
  if (st == SLUICE_OK) st = sluice_writer_finish(w);
  sluice_writer_close(w);
  return st;
}

std::string Config(const std::string& cache) {
  return std::string(R"({"remote": ")") + kRemote + R"(", "local": ")" + cache +
         R"(", "shuffle": true, "shuffle_seed": 3, "batch_size": 4, "world": {"rank": 0, "world_size": 1}})";
}

// The state after `rank_samples` of epoch 0 of a stream opened over `cache`.
std::string StateOver(const std::string& cache, uint64_t rank_samples) {
  sluice_stream* s = nullptr;
  EXPECT_EQ(sluice_stream_open(Config(cache).c_str(), &s), SLUICE_OK) << sluice_last_error();
  char* json = nullptr;
  EXPECT_EQ(sluice_stream_state_json(s, rank_samples, &json), SLUICE_OK) << sluice_last_error();
  std::string out = json ? json : "";
  sluice_free(json);
  sluice_stream_close(s);
  return out;
}

// One field of the record's only stream, as the state's JSON prints it.
std::string StreamPart(const std::string& state, const std::string& key) {
  std::smatch m;
  EXPECT_TRUE(std::regex_search(state, m, std::regex("\"" + key + "\": (\"[^\"]*\"|[0-9]+)")))
      << key << " in " << state;
  return m.size() > 1 ? m[1].str() : "";
}

TEST(ResumeDigestOverS3MultiProcess, ChangedDataUnderARemoteIsRefusedNamingTheRemote) {
  const std::string why = sluice::testing::NodeServersUnavailableReason();
  if (!why.empty()) GTEST_SKIP() << why;
  TempDir server_dir, staged, restaged, cache_a, cache_b, cache_c;
  auto server = sluice::testing::StartS3rver(server_dir.path(), kDigestKeyId, kDigestSecret, {"bkt"});
  ASSERT_NE(server, nullptr) << "s3rver did not start";
  auto env = CleanStoreEnv();
  env["AWS_ACCESS_KEY_ID"] = kDigestKeyId;
  env["AWS_SECRET_ACCESS_KEY"] = kDigestSecret;
  env["S3_ENDPOINT_URL"] = "http://127.0.0.1:" + std::to_string(server->port());
  ScopedEnv scoped(env);

  ASSERT_EQ(UploadSamples(staged.path(), 40), SLUICE_OK) << sluice_last_error();
  const std::string saved = StateOver(cache_a.path(), 8);
  EXPECT_EQ(StreamPart(saved, "remote"), std::string("\"") + kRemote + "\"");
  // The same remote read through another cache folder is the same stream.
  sluice_stream* same = nullptr;
  ASSERT_EQ(sluice_stream_open(Config(cache_b.path()).c_str(), &same), SLUICE_OK);
  uint64_t epoch = 9, offset = 9;
  EXPECT_EQ(sluice_stream_load_state(same, saved.c_str(), &epoch, &offset), SLUICE_OK)
      << sluice_last_error();
  EXPECT_EQ(offset, 8u);
  sluice_stream_close(same);

  // The remote's data grows by 4 samples (index.json and shards rewritten).
  ASSERT_EQ(UploadSamples(restaged.path(), 44), SLUICE_OK) << sluice_last_error();
  const std::string fresh = StateOver(cache_c.path(), 0);
  sluice_stream* now = nullptr;
  ASSERT_EQ(sluice_stream_open(Config(cache_c.path()).c_str(), &now), SLUICE_OK);
  epoch = offset = 9;
  EXPECT_EQ(sluice_stream_load_state(now, saved.c_str(), &epoch, &offset), SLUICE_EINVAL);
  const std::string name = std::string("stream 0 (") + kRemote + ")";
  std::string expected = "invalid argument: resume state does not match this dataset: ";
  if (StreamPart(saved, "shards") != StreamPart(fresh, "shards")) {
    expected += name + " shards changed: saved " + StreamPart(saved, "shards") + ", now " +
                StreamPart(fresh, "shards") + "; ";
  }
  expected += name + " samples changed: saved 40, now 44; " + name + " index changed: saved " +
              StreamPart(saved, "index") + ", now " + StreamPart(fresh, "index") +
              " (to resume anyway, adapt \"streams\")";
  const std::string error = sluice_last_error();
  EXPECT_EQ(error, expected);
  EXPECT_EQ(error.find(cache_a.path()), std::string::npos);
  EXPECT_EQ(error.find(cache_c.path()), std::string::npos);
  EXPECT_EQ(error.find(kDigestSecret), std::string::npos);
  EXPECT_EQ(epoch, 9u);  // untouched
  EXPECT_EQ(sluice_stream_load_state_with(now, saved.c_str(), R"({"adapt": ["streams"]})", &epoch,
                                          &offset),
            SLUICE_OK)
      << sluice_last_error();
  EXPECT_EQ(epoch, 0u);
  EXPECT_EQ(offset, 8u);
  sluice_stream_close(now);
}

}  // namespace
