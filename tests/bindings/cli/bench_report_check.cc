#include "tests/bindings/cli/bench_report_check.h"

#include <gtest/gtest.h>

#include "tests/bindings/cli/cli_runner.h"

namespace sluice::testing {
namespace {

const JsonValue kNull{};

// An object's member, or an array's element when `key` is a number.
const JsonValue* Find(const JsonValue& obj, const std::string& key) {
  if (const auto* a = std::get_if<JsonValue::Array>(&obj.v)) {
    if (key.empty() || key.find_first_not_of("0123456789") != std::string::npos) return nullptr;
    size_t i = std::stoul(key);
    return i < a->size() ? &(*a)[i] : nullptr;
  }
  const auto* o = std::get_if<JsonValue::Object>(&obj.v);
  if (!o) return nullptr;
  for (const auto& [k, v] : *o) {
    if (k == key) return &v;
  }
  return nullptr;
}

}  // namespace

const JsonValue& At(const JsonValue& obj, const std::string& path) {
  const JsonValue* v = &obj;
  for (size_t start = 0; start <= path.size();) {
    size_t dot = path.find('.', start);
    std::string key = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    v = Find(*v, key);
    if (!v) {
      ADD_FAILURE() << "the report has no " << path;
      return kNull;
    }
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return *v;
}

double Num(const JsonValue& obj, const std::string& path) {
  const JsonValue& v = At(obj, path);
  if (const int64_t* i = std::get_if<int64_t>(&v.v)) return static_cast<double>(*i);
  if (const double* d = std::get_if<double>(&v.v)) return *d;
  ADD_FAILURE() << path << " is not a number";
  return -1;
}

void ExpectEveryField(const JsonValue& r) {
  EXPECT_TRUE(std::holds_alternative<std::string>(At(r, "mode").v));
  EXPECT_TRUE(std::holds_alternative<std::string>(At(r, "job.remote").v));
  for (const char* k : {"job.nodes", "job.ranks_per_node", "job.workers_per_rank", "job.epochs",
                        "job.batch_size", "job.step_time_s", "dataset.samples", "dataset.shards",
                        "dataset.stored_bytes", "dataset.cached_bytes", "dataset.epoch_size",
                        "dataset.planned_samples", "dataset.shards_touched", "throughput.wall_s",
                        "throughput.samples", "throughput.sample_bytes", "throughput.samples_per_s",
                        "throughput.gb_per_s", "throughput.first_sample_s",
                        "throughput.first_sample_max_s", "stalls.batches", "stalls.total_s",
                        "stalls.p50_ms", "stalls.p90_ms", "stalls.p99_ms", "stalls.max_ms",
                        "stalls.consumer_wait_s", "cache.bytes_downloaded", "cache.shards_downloaded",
                        "cache.cache_hits", "cache.shards_evicted", "cache.cache_hit_ratio",
                        "cache.egress_ratio", "resources.cpu_s", "resources.cpu_s_per_gb",
                        "resources.peak_rss_bytes"}) {
    EXPECT_GE(Num(r, k), 0) << k;
  }
  At(r, "job.cache_limit");  // null when there is none
  At(r, "job.link_bandwidth");
  EXPECT_TRUE(std::holds_alternative<std::string>(At(r, "series_unit").v));
  EXPECT_TRUE(std::holds_alternative<bool>(At(r, "stalls.consumer_waits").v));
  EXPECT_TRUE(std::holds_alternative<std::string>(At(r, "stalls.diagnosis").v));
  const auto* nodes = std::get_if<JsonValue::Array>(&At(r, "cache.per_node").v);
  ASSERT_NE(nodes, nullptr);
  const auto* planned = std::get_if<JsonValue::Array>(&At(r, "job.planned_nodes").v);
  ASSERT_NE(planned, nullptr);
  EXPECT_EQ(nodes->size(), planned->size());
  if (std::get<std::string>(At(r, "mode").v) == "run") {
    EXPECT_EQ(static_cast<double>(nodes->size()), Num(r, "job.nodes"));
  }
  for (const JsonValue& n : *nodes) {
    for (const char* k : {"bytes_downloaded", "shards_downloaded", "cache_hits", "shards_evicted",
                          "peak_cache_bytes"}) {
      EXPECT_GE(Num(n, k), 0) << k;
    }
  }
  const auto* series = std::get_if<JsonValue::Array>(&At(r, "series").v);
  ASSERT_NE(series, nullptr);
  ASSERT_FALSE(series->empty());
  for (const JsonValue& p : *series) {
    for (const char* k : {"t", "samples", "sample_bytes", "bytes_downloaded"}) EXPECT_GE(Num(p, k), 0) << k;
    const auto* cache = std::get_if<JsonValue::Array>(&At(p, "cache_bytes").v);
    ASSERT_NE(cache, nullptr);
    EXPECT_EQ(cache->size(), nodes->size());
  }
}

uint64_t StoredBytes(const std::string& folder) {
  auto index = ParsePyJson(Slurp(folder + "/index.json"));
  EXPECT_TRUE(index.ok()) << folder;
  if (!index.ok()) return 0;
  uint64_t total = 0;
  for (const JsonValue& shard : std::get<JsonValue::Array>(At(*index, "shards").v)) {
    bool compressed = !std::holds_alternative<std::nullptr_t>(At(shard, "compression").v);
    total += static_cast<uint64_t>(Num(shard, compressed ? "zip_data.bytes" : "raw_data.bytes"));
    const JsonValue* meta = Find(shard, compressed ? "zip_meta" : "raw_meta");
    if (meta && !std::holds_alternative<std::nullptr_t>(meta->v)) total += static_cast<uint64_t>(Num(*meta, "bytes"));
  }
  return total;
}

}  // namespace sluice::testing
