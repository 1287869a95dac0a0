// sluice_bench_run: the bench through libsluice.so, as a C caller uses it.
#include "sluice.h"

#include <gtest/gtest.h>

#include <string>

namespace {

const std::string kSmall = std::string(SLUICE_TEST_DATA_DIR) + "/mosaic/mds/fixed_size_only";

TEST(BenchCApi, RunsAndReportsJson) {
  char* out = nullptr;
  std::string options = R"({"remote": ")" + kSmall + R"(", "batch_size": 4, "interval": 0.005})";
  ASSERT_EQ(sluice_bench_run(options.c_str(), &out), SLUICE_OK) << sluice_last_error();
  ASSERT_NE(out, nullptr);
  std::string json = out;
  sluice_free(out);
  EXPECT_EQ(json.rfind(R"({"mode": "run", "job": {"remote": ")" + kSmall + R"(", "nodes": 1, )", 0), 0u) << json;
  EXPECT_NE(json.find(R"("planned_samples": 100, "shards_touched": 17})"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("cache": {"bytes_downloaded": 6495, "shards_downloaded": 17, "cache_hits": 0, )"),
            std::string::npos) << json;
}

TEST(BenchCApi, BadOptionsAreEinvalNamingTheKey) {
  char* out = reinterpret_cast<char*>(1);
  EXPECT_EQ(sluice_bench_run(R"({"remote": "/x", "epochs": 0})", &out), SLUICE_EINVAL);
  EXPECT_EQ(out, nullptr);
  EXPECT_STREQ(sluice_last_error(),
               "invalid argument: bench options: 'epochs' must be an integer from 1 to 1000");
  EXPECT_EQ(sluice_bench_run(R"({"epochs": 1})", &out), SLUICE_EINVAL);
  EXPECT_STREQ(sluice_last_error(),
               "invalid argument: bench options: 'remote' must be set: the dataset folder or URL the bench streams from");
  EXPECT_EQ(sluice_bench_run("[1]", &out), SLUICE_EINVAL);
  EXPECT_STREQ(sluice_last_error(), "invalid argument: bench options: must be a JSON object");
  EXPECT_EQ(sluice_bench_run(nullptr, &out), SLUICE_EINVAL);
  EXPECT_STREQ(sluice_last_error(), "invalid argument: sluice_bench_run: argument 'options_json' must not be NULL");
  EXPECT_EQ(sluice_bench_run("{}", nullptr), SLUICE_EINVAL);
  EXPECT_EQ(sluice_bench_run(R"({"remote": "/nonexistent/ds"})", &out), SLUICE_ENOTFOUND);
  EXPECT_NE(std::string(sluice_last_error()).find("/nonexistent/ds/index.json: no such object"), std::string::npos)
      << sluice_last_error();
}

}  // namespace
