// `sluice bench --plan-only` against real runs of the same job on a small
// local dataset: per-node egress exactly without cache_limit, within the
// bound bench_plan.h states with one; waits predicted from the link bandwidth.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "formats/json/py_json.h"
#include "tests/bindings/cli/bench_report_check.h"
#include "tests/bindings/cli/cli_runner.h"

namespace sluice {
namespace {

using testing::At;
using testing::Num;

const std::string kSmall = std::string(SLUICE_TEST_DATA_DIR) + "/mosaic/mds/fixed_size_only";

JsonValue Report(const std::string& args) {
  testing::CliRun r = testing::Sluice("bench " + kSmall + " " + args + " --json --interval 0.005");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  auto v = ParsePyJson(r.out);
  EXPECT_TRUE(v.ok()) << r.out;
  return v.ok() ? *v : JsonValue{};
}

std::vector<double> Nums(const JsonValue& v, const std::string& path) {
  std::vector<double> out;
  for (const JsonValue& e : std::get<JsonValue::Array>(At(v, path).v)) {
    const int64_t* i = std::get_if<int64_t>(&e.v);
    EXPECT_NE(i, nullptr) << path;
    out.push_back(i ? static_cast<double>(*i) : -1);
  }
  return out;
}

// A world larger than a real run may fork: 300 nodes, 16 of them planned
// (by default) or each one (--plan-nodes 300).
TEST(CliBenchPlanTest, PlansAWorldOfMoreNodesThanARunMayStart) {
  JsonValue plan = Report("--plan-only --nodes 300 --batch-size 1");
  EXPECT_EQ(Num(plan, "job.nodes"), 300);
  EXPECT_EQ(Nums(plan, "job.planned_nodes"), (std::vector<double>{0, 20, 40, 60, 80, 100, 120, 140, 159, 179, 199,
                                                                    219, 239, 259, 279, 299}));
  EXPECT_EQ(std::get<JsonValue::Array>(At(plan, "cache.per_node").v).size(), 16u);
  EXPECT_EQ(Num(plan, "cache.shards_downloaded"), 300);  // one shard's samples on each node, scaled from 16
  JsonValue every = Report("--plan-only --nodes 300 --batch-size 1 --plan-nodes 300");
  EXPECT_EQ(std::get<JsonValue::Array>(At(every, "job.planned_nodes").v).size(), 300u);
  EXPECT_EQ(std::get<JsonValue::Array>(At(every, "cache.per_node").v).size(), 300u);
  EXPECT_EQ(Num(every, "cache.shards_downloaded"), 300);
}

// Planning some nodes of a job predicts for each of them exactly what
// planning every node predicts for it, and scales the totals from theirs.
TEST(CliBenchPlanTest, PlannedNodesAreThoseOfTheWholePlan) {
  const std::string job = "--plan-only --nodes 12 --ranks 2 --workers 2 --batch-size 2 --shuffle --seed 5 --epochs 2";
  JsonValue whole = Report(job + " --plan-nodes 12");
  JsonValue some = Report(job + " --plan-nodes 4");
  EXPECT_EQ(Nums(some, "job.planned_nodes"), (std::vector<double>{0, 4, 7, 11}));
  double bytes = 0, shards = 0, samples = 0;
  const std::vector<double> planned = Nums(some, "job.planned_nodes");
  for (size_t k = 0; k < planned.size(); ++k) {
    const std::string at = "cache.per_node." + std::to_string(k);
    const std::string node = "cache.per_node." + std::to_string(static_cast<int>(planned[k]));
    for (std::string field : {"bytes_downloaded", "shards_downloaded", "cache_hits", "peak_cache_bytes"}) {
      EXPECT_EQ(Num(some, at + "." + field), Num(whole, node + "." + field)) << field << " of node " << planned[k];
    }
    bytes += Num(whole, node + ".bytes_downloaded"), shards += Num(whole, node + ".shards_downloaded");
  }
  EXPECT_EQ(Num(some, "cache.bytes_downloaded"), std::round(bytes * 3));
  EXPECT_EQ(Num(some, "cache.shards_downloaded"), std::round(shards * 3));
  // Every node reads the same number of samples (the planner pads), so the
  // scaled total is the whole plan's.
  samples = Num(whole, "dataset.planned_samples");
  EXPECT_EQ(Num(some, "dataset.planned_samples"), samples);
  EXPECT_EQ(Num(some, "throughput.samples"), samples);
  const auto& series = std::get<JsonValue::Array>(At(some, "series").v);
  EXPECT_EQ(Num(series.back(), "samples"), samples);
  EXPECT_EQ(std::get<JsonValue::Array>(At(series.back(), "cache_bytes").v).size(), 4u);
  testing::CliRun table = testing::Sluice("bench " + kSmall + " " + job + " --plan-nodes 4");
  EXPECT_NE(table.out.find("  planned nodes           4 of 12 (0, 4, 7, 11); totals scale theirs by 3 (--plan-nodes)\n"),
            std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find("  node 11 "), std::string::npos) << table.out;
}

TEST(CliBenchPlanTest, PredictedEgressIsTheRunsWithoutCacheLimit) {
  for (std::string job : {"--batch-size 4 --workers 3", "--batch-size 2 --nodes 2 --ranks 2 --workers 2 --shuffle",
                          "--batch-size 3 --nodes 3 --ranks 1 --workers 2 --shuffle --seed 7 --epochs 2"}) {
    JsonValue plan = Report("--plan-only " + job);
    JsonValue run = Report(job);
    testing::ExpectEveryField(plan);
    EXPECT_EQ(std::get<std::string>(At(plan, "mode").v), "plan");
    EXPECT_EQ(Num(plan, "dataset.planned_samples"), Num(run, "throughput.samples")) << job;
    const auto& nodes = std::get<JsonValue::Array>(At(run, "cache.per_node").v);
    for (size_t n = 0; n < nodes.size(); ++n) {
      std::string node = "cache.per_node." + std::to_string(n);
      EXPECT_EQ(Num(plan, node + ".bytes_downloaded"), Num(run, node + ".bytes_downloaded")) << job << " node " << n;
      EXPECT_EQ(Num(plan, node + ".shards_downloaded"), Num(run, node + ".shards_downloaded")) << job << " node " << n;
      EXPECT_EQ(Num(plan, node + ".peak_cache_bytes"), Num(run, node + ".peak_cache_bytes")) << job << " node " << n;
    }
    // Nothing downloaded by the prediction: its series ends with the egress
    // it predicts, in steps (no step time).
    EXPECT_EQ(std::get<std::string>(At(plan, "series_unit").v), "step");
    const auto& series = std::get<JsonValue::Array>(At(plan, "series").v);
    EXPECT_EQ(Num(series.back(), "bytes_downloaded"), Num(plan, "cache.bytes_downloaded"));
    EXPECT_EQ(Num(series.back(), "samples"), Num(plan, "dataset.planned_samples"));
  }
}

// A mixture schedule over two streams (--set streams, epoch_size, mixture):
// the prediction is the run's, node by node, and a schedule that reads
// only one stream downloads only that stream's shards.
TEST(CliBenchPlanTest, PredictedEgressFollowsAMixtureSchedule) {
  const std::string other = std::string(SLUICE_TEST_DATA_DIR) + "/mosaic/mds/single_shard_no_limit";
  const std::string two = "--set 'streams=[{\"remote\": \"" + kSmall + "\"}, {\"remote\": \"" + other +
                          "\"}]' --set epoch_size=60 --batch-size 3 --shuffle ";
  const std::string streams = two + "--nodes 2 ";
  auto bytes = [](const JsonValue& r) { return Num(r, "cache.bytes_downloaded"); };
  for (std::string mixture : {"[[0, [1, 0]]]", "[[0, [0, 1]]]", "[[0, [1, 0]], [30, [0, 1]]]"}) {
    const std::string job = streams + "--set 'mixture=" + mixture + "' --set mixture_interpolation='\"linear\"'";
    JsonValue plan = Report("--plan-only " + job);
    JsonValue run = Report(job);
    EXPECT_EQ(Num(plan, "dataset.planned_samples"), 60) << mixture;
    EXPECT_EQ(Num(run, "throughput.samples"), 60) << mixture;
    for (size_t n = 0; n < 2; ++n) {
      std::string node = "cache.per_node." + std::to_string(n);
      EXPECT_EQ(Num(plan, node + ".bytes_downloaded"), Num(run, node + ".bytes_downloaded")) << mixture << n;
      EXPECT_EQ(Num(plan, node + ".shards_downloaded"), Num(run, node + ".shards_downloaded")) << mixture << n;
    }
  }
  // On one node: stream 0 alone reads 60 of its 100 samples (at most its
  // shards), stream 1 alone 60 draws of its 10 (its one shard).
  JsonValue first = Report("--plan-only " + two + "--set 'mixture=[[0, [1, 0]]]'");
  JsonValue second = Report("--plan-only " + two + "--set 'mixture=[[0, [0, 1]]]'");
  // Each stream's own bytes, from a bench of that stream alone.
  JsonValue zero = Report("--plan-only");
  testing::CliRun one_run = testing::Sluice("bench " + other + " --plan-only --json");
  auto one = ParsePyJson(one_run.out);
  ASSERT_TRUE(one.ok()) << one_run.out;
  const double stored0 = Num(zero, "dataset.stored_bytes"), stored1 = Num(*one, "dataset.stored_bytes");
  EXPECT_LE(bytes(first), stored0);
  EXPECT_EQ(bytes(second), stored1);
  EXPECT_NE(bytes(first), bytes(second));
}

TEST(CliBenchPlanTest, PredictedEgressBoundsTheRunsWithCacheLimit) {
  const std::string job = "--batch-size 4 --cache-limit 1kb --shuffle --predownload 4";
  JsonValue plan = Report("--plan-only " + job);
  JsonValue run = Report(job);
  const double predicted = Num(plan, "cache.bytes_downloaded"), real = Num(run, "cache.bytes_downloaded");
  EXPECT_GT(predicted, 6495);  // evictions make shards come back
  EXPECT_GT(Num(plan, "cache.shards_evicted"), 0);
  EXPECT_GE(real, 0.5 * predicted);
  EXPECT_LE(real, 2 * predicted);
}

TEST(CliBenchPlanTest, LinkBandwidthDecidesWhetherTheConsumerWaits) {
  // 25 batches of 4, 0.01 s apart; 17 shards of ~380 bytes.
  JsonValue fast = Report("--plan-only --batch-size 4 --step-time 0.01 --bandwidth 10mb");
  EXPECT_FALSE(std::get<bool>(At(fast, "stalls.consumer_waits").v));
  EXPECT_EQ(Num(fast, "stalls.total_s"), 0);
  EXPECT_EQ(std::get<std::string>(At(fast, "series_unit").v), "s");
  JsonValue slow = Report("--plan-only --batch-size 4 --step-time 0.01 --bandwidth 1000");
  EXPECT_TRUE(std::get<bool>(At(slow, "stalls.consumer_waits").v));
  // The whole dataset needs 6.5 s at 1000 B/s; the consumer's last batch is due at 0.24 s.
  EXPECT_GT(Num(slow, "stalls.max_ms"), 6000);
  EXPECT_LT(Num(slow, "stalls.max_ms"), 6500);
  testing::CliRun bad = testing::Sluice("bench " + kSmall + " --plan-only --bandwidth fast");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.out, "sluice bench: invalid argument: bench options: 'link_bandwidth' must be bytes per second > 0 "
                     "(an integer or e.g. \"1gb\")\n");
}

}  // namespace
}  // namespace sluice
