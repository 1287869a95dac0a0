// `sluice bench` on a dataset served over HTTP by a real nginx (started by
// tests/stores' fixture on 127.0.0.1): a cold cache downloads exactly the
// stored bytes; a second run over the same cache folder downloads nothing.
#include <gtest/gtest.h>

#include <string>

#include "formats/json/py_json.h"
#include "tests/bindings/cli/bench_report_check.h"
#include "tests/bindings/cli/cli_runner.h"
#include "tests/stores/common/node_servers.h"
#include "tests/stores/http/test_servers.h"

namespace sluice {
namespace {

using testing::At;
using testing::Num;

const std::string kSmall = std::string(SLUICE_TEST_DATA_DIR) + "/mosaic/mds/fixed_size_only";

JsonValue Report(const std::string& args) {
  testing::CliRun r = testing::Sluice("bench " + args + " --json --interval 0.005");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  auto v = ParsePyJson(r.out);
  EXPECT_TRUE(v.ok()) << r.out;
  return v.ok() ? *v : JsonValue{};
}

TEST(CliBenchRemoteTest, NginxColdThenWarmCache) {
  testing::TempDir dir;
  auto nginx = testing::NginxServer::Start(dir.path());
  if (nginx == nullptr) GTEST_SKIP() << "nginx did not start (is it installed?)";
  testing::ScopedEnv env(testing::CleanStoreEnv());
  ASSERT_EQ(testing::Shell("cp -r '" + kSmall + "' '" + nginx->www() + "/ds'"), 0);
  const std::string url = "http://127.0.0.1:" + std::to_string(nginx->http_port()) + "/ds";
  const std::string cache = dir.path() + "/cache";
  const double stored = static_cast<double>(testing::StoredBytes(kSmall));

  JsonValue cold = Report(url + " --batch-size 4 --workers 2 --cache " + cache);
  testing::ExpectEveryField(cold);
  EXPECT_EQ(std::get<std::string>(At(cold, "job.remote").v), url);
  EXPECT_EQ(Num(cold, "dataset.stored_bytes"), stored);
  EXPECT_EQ(Num(cold, "cache.bytes_downloaded"), stored);  // one node: each shard once
  EXPECT_EQ(Num(cold, "cache.shards_downloaded"), 17);
  EXPECT_EQ(Num(cold, "cache.shards_downloaded") + Num(cold, "cache.cache_hits"),
            Num(cold, "dataset.shards_touched"));
  EXPECT_EQ(Num(cold, "throughput.samples"), 100);
  EXPECT_EQ(Num(cold, "dataset.planned_samples"), 100);

  JsonValue warm = Report(url + " --batch-size 4 --workers 2 --cache " + cache);
  EXPECT_EQ(Num(warm, "cache.bytes_downloaded"), 0);
  EXPECT_EQ(Num(warm, "cache.shards_downloaded"), 0);
  EXPECT_EQ(Num(warm, "cache.cache_hits"), Num(warm, "dataset.shards_touched"));
  EXPECT_EQ(Num(warm, "cache.cache_hit_ratio"), 1.0);
  EXPECT_EQ(Num(warm, "throughput.samples"), 100);

  // A server that answers 404 for the index: status 1, naming the URL.
  testing::CliRun bad = testing::Sluice("bench " + url + "/missing");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_EQ(bad.out.rfind("sluice bench: not found: ", 0), 0u) << bad.out;
  EXPECT_NE(bad.out.find(url + "/missing/index.json"), std::string::npos) << bad.out;
}

}  // namespace
}  // namespace sluice
