// `sluice bench` on small local datasets: the report has every field, its
// numbers agree with each other and with the dataset's index and plan, and
// bad input fails with an exact message and the CLI's exit status.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "formats/json/py_json.h"
#include "tests/bindings/cli/bench_report_check.h"
#include "tests/bindings/cli/cli_runner.h"
#include "tests/common/temp_dir.h"

namespace sluice {
namespace {

using testing::At;
using testing::CliRun;
using testing::Num;
using testing::Sluice;

const std::string kMds = std::string(SLUICE_TEST_DATA_DIR) + "/mosaic/mds/";
// 100 samples in 17 uncompressed MDS shards.
const std::string kSmall = kMds + "fixed_size_only";

JsonValue Report(const std::string& args) {
  CliRun r = Sluice("bench " + args + " --json --interval 0.005");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  auto v = ParsePyJson(r.out);
  EXPECT_TRUE(v.ok()) << r.out;
  return v.ok() ? *v : JsonValue{};
}

TEST(CliBenchTest, ColdSingleNodeDownloadsEachShardOnceAndReadsTheEpoch) {
  JsonValue r = Report(kSmall + " --batch-size 4");
  testing::ExpectEveryField(r);
  EXPECT_EQ(std::get<std::string>(At(r, "mode").v), "run");
  EXPECT_EQ(std::get<std::string>(At(r, "job.remote").v), kSmall);
  const double stored = static_cast<double>(testing::StoredBytes(kSmall));
  EXPECT_EQ(stored, 6495);
  EXPECT_EQ(Num(r, "dataset.stored_bytes"), stored);
  EXPECT_EQ(Num(r, "cache.bytes_downloaded"), stored);
  EXPECT_EQ(Num(r, "cache.per_node.0.bytes_downloaded"), stored);
  EXPECT_EQ(Num(r, "cache.egress_ratio"), 1.0);
  // One process, cold: every shard of the plan fetched once, none found.
  EXPECT_EQ(Num(r, "dataset.shards"), 17);
  EXPECT_EQ(Num(r, "dataset.shards_touched"), 17);
  EXPECT_EQ(Num(r, "cache.shards_downloaded") + Num(r, "cache.cache_hits"), 17);
  EXPECT_EQ(Num(r, "cache.cache_hits"), 0);
  EXPECT_EQ(Num(r, "cache.cache_hit_ratio"), 0);
  EXPECT_EQ(Num(r, "cache.shards_evicted"), 0);
  EXPECT_EQ(Num(r, "cache.per_node.0.peak_cache_bytes"), stored);  // everything stays
  // Samples: exactly the planner's epoch, in 25 batches of 4.
  EXPECT_EQ(Num(r, "dataset.epoch_size"), 100);
  EXPECT_EQ(Num(r, "dataset.planned_samples"), 100);
  EXPECT_EQ(Num(r, "throughput.samples"), 100);
  EXPECT_EQ(Num(r, "stalls.batches"), 25);
  EXPECT_GT(Num(r, "throughput.sample_bytes"), 0);
  EXPECT_NEAR(Num(r, "throughput.samples_per_s"), 100 / Num(r, "throughput.wall_s"), 1e-6 * 100 / Num(r, "throughput.wall_s"));
  EXPECT_LE(Num(r, "throughput.first_sample_s"), Num(r, "throughput.wall_s"));
  EXPECT_LE(Num(r, "stalls.p50_ms"), Num(r, "stalls.p99_ms"));
  EXPECT_LE(Num(r, "stalls.p99_ms"), Num(r, "stalls.max_ms"));
  EXPECT_GT(Num(r, "resources.peak_rss_bytes"), 0);
  // The engine's diagnosis of the run: one of its sentences.
  const std::string& diagnosis = std::get<std::string>(At(r, "stalls.diagnosis").v);
  EXPECT_TRUE(diagnosis.rfind("waited ", 0) == 0 || diagnosis.rfind("not data-bound: ", 0) == 0)
      << diagnosis;
  // The series ends where the run ended.
  const auto& series = std::get<JsonValue::Array>(At(r, "series").v);
  EXPECT_EQ(Num(series.back(), "samples"), 100);
  EXPECT_EQ(Num(series.back(), "bytes_downloaded"), stored);
  for (size_t k = 1; k < series.size(); ++k) EXPECT_GE(Num(series[k], "samples"), Num(series[k - 1], "samples"));
}

TEST(CliBenchTest, EveryProcessOfEveryNodeReadsItsPlan) {
  JsonValue r = Report(kSmall + " --batch-size 2 --nodes 2 --ranks 2 --workers 2 --epochs 2");
  testing::ExpectEveryField(r);
  EXPECT_EQ(Num(r, "dataset.planned_samples"), 200);
  EXPECT_EQ(Num(r, "throughput.samples"), 200);
  // No eviction: each process finds or fetches each shard of its plan once,
  // and no node fetches a shard twice.
  EXPECT_EQ(Num(r, "cache.shards_downloaded") + Num(r, "cache.cache_hits"), Num(r, "dataset.shards_touched"));
  for (const char* n : {"cache.per_node.0", "cache.per_node.1"}) {
    EXPECT_LE(Num(r, std::string(n) + ".bytes_downloaded"), 6495);
    EXPECT_GT(Num(r, std::string(n) + ".bytes_downloaded"), 0);
  }
  EXPECT_EQ(Num(r, "cache.bytes_downloaded"),
            Num(r, "cache.per_node.0.bytes_downloaded") + Num(r, "cache.per_node.1.bytes_downloaded"));
}

TEST(CliBenchTest, CacheLimitEvictsAndHoldsTheLimit) {
  JsonValue r = Report(kSmall + " --batch-size 4 --shuffle --seed 3 --workers 3 --cache-limit 2kb");
  EXPECT_EQ(Num(r, "job.cache_limit"), 2048);
  EXPECT_EQ(Num(r, "throughput.samples"), 100);
  EXPECT_GT(Num(r, "cache.shards_evicted"), 0);
  EXPECT_LE(Num(r, "cache.per_node.0.peak_cache_bytes"), 2048);
  EXPECT_GT(Num(r, "cache.bytes_downloaded"), 6495);  // evicted shards come back
}

TEST(CliBenchTest, StepTimePacesTheConsumer) {
  // 25 batches, one worker: the consumer takes one every 10 ms.
  JsonValue r = Report(kSmall + " --batch-size 4 --step-time 0.01");
  EXPECT_GE(Num(r, "throughput.wall_s"), 0.24);
  EXPECT_EQ(Num(r, "job.step_time_s"), 0.01);
  JsonValue rate = Report(kSmall + " --batch-size 4 --rate 400");  // = 0.01 s per batch of 4
  EXPECT_EQ(Num(rate, "job.step_time_s"), 0.01);
}

TEST(CliBenchTest, TableCsvAndPlot) {
  testing::TempDir dir_owner("sluice_bench_test");
  const std::string dir = dir_owner.path();
  CliRun r = Sluice("bench " + kSmall + " --batch-size 4 --interval 0.005 --csv " + dir + "/s.csv");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("  planned samples         100 (epoch size 100)\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n  diagnosis               "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  node 0                  6.3 KiB downloaded (17 shards), 0 hits, 0 evictions"),
            std::string::npos) << r.out;
  std::string csv = testing::Slurp(dir + "/s.csv");
  EXPECT_EQ(csv.rfind("t,samples,sample_bytes,bytes_downloaded,cache_node0\n", 0), 0u) << csv;
  EXPECT_NE(csv.find(",100,"), std::string::npos) << csv;
  // The plot needs Debian's matplotlib; without it the error says so.
  CliRun plot = Sluice("bench " + kSmall + " --batch-size 4 --interval 0.005 --plot " + dir + "/p.png");
  if (std::system("/usr/bin/python3 -c 'import matplotlib' 2>/dev/null") == 0) {
    ASSERT_EQ(plot.exit_code, 0) << plot.out;
    EXPECT_EQ(testing::Slurp(dir + "/p.png").substr(0, 8), "\x89PNG\r\n\x1a\n");
  } else {
    EXPECT_EQ(plot.exit_code, 1);
    EXPECT_NE(plot.out.find("matplotlib is not installed (Debian: apt-get install python3-matplotlib)"),
              std::string::npos) << plot.out;
  }
}

// A folder of Parquet files (issue 35): two copies of a file of 60 rows in
// 9 row groups. The bench plans and reads every row once (120 samples, 30
// batches of 4, the sample bytes twice those of one copy) and fetches each
// row group once, as an MDS stream's shards: one process downloads exactly
// the groups' column chunks; two shuffled workers each touch all 18 groups,
// the node downloading each once.
TEST(CliBenchTest, ParquetFolderReadsEveryRowOnce) {
  testing::TempDir dir_owner("sluice_bench_parquet");
  const std::string table = dir_owner.path() + "/table", one = dir_owner.path() + "/one";
  ASSERT_TRUE(std::filesystem::create_directories(table));
  ASSERT_TRUE(std::filesystem::create_directories(one));
  const std::string file = std::string(SLUICE_TEST_DATA_DIR) + "/parquet/pa26_many_row_groups.parquet";
  for (const char* name : {"/a.parquet", "/b.parquet"}) {
    std::filesystem::copy_file(file, table + name);
  }
  std::filesystem::copy_file(file, one + "/a.parquet");
  JsonValue r = Report(table + " --batch-size 4 --shuffle --seed 5");
  testing::ExpectEveryField(r);
  EXPECT_EQ(Num(r, "dataset.samples"), 120);
  EXPECT_EQ(Num(r, "dataset.shards"), 18);
  EXPECT_EQ(Num(r, "dataset.epoch_size"), 120);
  EXPECT_EQ(Num(r, "dataset.planned_samples"), 120);
  EXPECT_EQ(Num(r, "dataset.shards_touched"), 18);
  EXPECT_EQ(Num(r, "throughput.samples"), 120);
  EXPECT_EQ(Num(r, "stalls.batches"), 30);
  // The row groups' column chunks, fetched once each (a piece also holds
  // the footer's tail, read once per file, not per group).
  EXPECT_EQ(Num(r, "dataset.stored_bytes"), 15948);
  EXPECT_EQ(Num(r, "cache.bytes_downloaded"), 15948);
  EXPECT_EQ(Num(r, "cache.egress_ratio"), 1.0);
  EXPECT_EQ(Num(r, "cache.shards_downloaded"), 18);
  // (Shuffled, a group's rows come in several stretches: its later opens
  // find it cached.)
  EXPECT_GE(Num(r, "cache.shards_downloaded") + Num(r, "cache.cache_hits"), 18);
  EXPECT_EQ(Num(r, "cache.shards_evicted"), 0);
  EXPECT_EQ(Num(r, "cache.per_node.0.peak_cache_bytes"), Num(r, "dataset.cached_bytes"));
  JsonValue single = Report(one + " --batch-size 4");
  EXPECT_EQ(Num(single, "throughput.samples"), 60);
  EXPECT_GT(Num(single, "throughput.sample_bytes"), 0);
  EXPECT_EQ(Num(r, "throughput.sample_bytes"), 2 * Num(single, "throughput.sample_bytes"));
  // Two workers: each touches every group; the node fetches each once into
  // its cache, the first rows' peeks included (a worker peeks a group only
  // as the node's downloader of it), so its bytes come once.
  JsonValue two = Report(table + " --batch-size 4 --shuffle --seed 5 --workers 2");
  EXPECT_EQ(Num(two, "throughput.samples"), 120);
  EXPECT_EQ(Num(two, "dataset.shards_touched"), 36);
  EXPECT_EQ(Num(two, "cache.shards_downloaded"), 18);
  EXPECT_EQ(Num(two, "cache.bytes_downloaded"), 15948);
  EXPECT_EQ(Num(two, "cache.shards_evicted"), 0);
  EXPECT_EQ(Num(two, "throughput.sample_bytes"), Num(r, "throughput.sample_bytes"));
}

TEST(CliBenchTest, BadInputFailsWithExactErrors) {
  CliRun r = Sluice("bench " + kSmall + " --nodes abc");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "sluice bench: invalid argument: bench options: 'nodes' must be an integer from 1 to 1048576\n");
  r = Sluice("bench " + kSmall + " --nodes 0");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "sluice bench: invalid argument: bench options: 'nodes' must be an integer from 1 to 1048576\n");
  // A real run forks a process per worker; --plan-only forks none.
  r = Sluice("bench " + kSmall + " --nodes 300");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "sluice bench: invalid argument: bench options: 'nodes' x ranks_per_node x "
                   "workers_per_rank is 300 processes; at most 256 (more with --plan-only, which "
                   "starts none)\n");
  r = Sluice("bench " + kSmall + " --plan-only --nodes 65536 --ranks 512");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "sluice bench: invalid argument: bench options: 'nodes' x ranks_per_node x "
                   "workers_per_rank is 33554432 workers to plan; at most 16777216\n");
  r = Sluice("bench " + kSmall + " --plan-nodes 4");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "sluice bench: invalid argument: bench options: 'plan_nodes' applies to plan_only "
                   "(--plan-only); a run plans every node\n");
  r = Sluice("bench " + kSmall + " --plan-only --plan-nodes 0");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "sluice bench: invalid argument: bench options: 'plan_nodes' must be an integer from 1 to 1048576\n");
  r = Sluice("bench " + kSmall + " --step-time -1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "sluice bench: invalid argument: bench options: 'step_time' must be a number >= 0\n");
  r = Sluice("bench " + kSmall + " --step-time 1 --rate 5");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "sluice bench: invalid argument: bench options: 'consumer_rate' and 'step_time' say the same thing: give one\n");
  r = Sluice("bench " + kSmall + " --frobnicate 3");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "sluice bench: invalid argument: unknown option --frobnicate\n");
  r = Sluice("bench " + kSmall + " --set frobnicate=3");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "sluice bench: invalid argument: dataset config: 'frobnicate' is not a known key\n");
  r = Sluice("bench " + kSmall + " --set 'local=\"/x\"'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "sluice bench: invalid argument: bench options: 'local' is set by the bench (one cache "
                   "folder per simulated node under 'cache_dir', one world per simulated rank)\n");
  r = Sluice("bench " + kSmall + " --shuffle --shuffle-algo py9x");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("py9x"), std::string::npos) << r.out;
  r = Sluice("bench");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out.rfind("usage: sluice bench DATASET [options]\n", 0), 0u) << r.out;
  // A dataset that is not there: the run fails (status 1) naming the index it looked for.
  r = Sluice("bench /nonexistent/dataset");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out.rfind("sluice bench: not found: stream 0 (", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("/nonexistent/dataset/index.json: no such object\n"), std::string::npos) << r.out;
}

TEST(CliBenchTest, AWorkersErrorEndsTheRunNamingTheProcess) {
  testing::TempDir dir_owner("sluice_bench_test");
  const std::string dir = dir_owner.path();
  ASSERT_EQ(std::system(("cp -r '" + kSmall + "' '" + dir + "/ds' && truncate -s 10 '" + dir +
                         "/ds/shard.00002.mds'").c_str()), 0);
  CliRun r = Sluice("bench " + dir + "/ds --batch-size 4 --set download_retry=0");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out.rfind("sluice bench: corrupt: process 0 (node 0, rank 0, worker 0): prefetching sample position 12: "
                       "'shard.00002.mds' from " + dir + "/ds/shard.00002.mds is corrupt after 1 download(s)", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("the object is 10 bytes, index.json says 385"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace sluice
