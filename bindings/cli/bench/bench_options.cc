#include "bindings/cli/bench/bench_options.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "engine/dataset/byte_size.h"
#include "formats/json/py_json.h"

namespace sluice::bench {
namespace {

using Object = JsonValue::Object;

// Bounds that keep a typo from forking thousands of processes; --plan-only
// starts none, so its world may be a pretraining job's (each dimension up
// to kMaxWorldDim, the plan's per-worker state up to kMaxPlannedWorkers).
constexpr int64_t kMaxProcesses = 256;
constexpr int64_t kMaxWorldDim = int64_t{1} << 20;
constexpr int64_t kMaxPlannedWorkers = int64_t{1} << 24;
constexpr int64_t kMaxEpochs = 1000;

Status Bad(std::string_view key, std::string_view what) {
  return InvalidArgumentError("bench options: '" + std::string(key) + "' " + std::string(what));
}

Result<int64_t> Count(const JsonValue& v, std::string_view key, int64_t max) {
  const int64_t* i = std::get_if<int64_t>(&v.v);
  if (!i || *i < 1 || *i > max) {
    return Bad(key, "must be an integer from 1 to " + std::to_string(max));
  }
  return *i;
}

Result<double> Seconds(const JsonValue& v, std::string_view key, bool positive) {
  double d = -1;
  if (const int64_t* i = std::get_if<int64_t>(&v.v)) d = static_cast<double>(*i);
  if (const double* f = std::get_if<double>(&v.v)) d = *f;
  if (!std::isfinite(d) || d < 0 || (positive && d == 0) || d > 1e6) {
    return Bad(key, positive ? "must be a number greater than 0" : "must be a number >= 0");
  }
  return d;
}

Result<uint64_t> Bandwidth(const JsonValue& v) {
  if (const int64_t* i = std::get_if<int64_t>(&v.v); i && *i > 0) return static_cast<uint64_t>(*i);
  if (const std::string* s = std::get_if<std::string>(&v.v)) {
    auto n = ParseByteSize(*s);
    if (n.ok() && *n > 0) return *n;
  }
  return Bad("link_bandwidth", "must be bytes per second > 0 (an integer or e.g. \"1gb\")");
}

const std::set<std::string_view>& BenchKeys() {
  static const std::set<std::string_view> keys = {
      "cache_dir", "nodes", "ranks_per_node", "workers_per_rank", "epochs", "step_time",
      "consumer_rate", "interval", "plan_only", "plan_nodes", "link_bandwidth"};
  return keys;
}

}  // namespace

std::string BenchOptions::CacheFolder(int64_t node, size_t stream) const {
  return cache_dir + "/node" + std::to_string(node) + "/stream" + std::to_string(stream);
}

std::vector<int64_t> BenchOptions::PlannedNodes() const {
  std::vector<int64_t> out;
  if (!plan_only || nodes <= plan_nodes) {
    for (int64_t n = 0; n < nodes; ++n) out.push_back(n);
    return out;
  }
  if (plan_nodes == 1) return {0};
  // Rounded to nearest; distinct because the step (nodes - 1) / (plan_nodes - 1) exceeds 1.
  for (int64_t k = 0; k < plan_nodes; ++k) out.push_back((2 * k * (nodes - 1) + (plan_nodes - 1)) / (2 * (plan_nodes - 1)));
  return out;
}

DatasetOptions BenchOptions::ForRank(int64_t node, int64_t rank) const {
  DatasetOptions o = dataset;
  for (size_t s = 0; s < o.streams.size(); ++s) o.streams[s].local = CacheFolder(node, s);
  o.world.world_size = nodes * ranks_per_node;
  o.world.local_world_size = ranks_per_node;
  o.world.rank = node * ranks_per_node + rank;
  o.world.local_rank = rank;
  return o;
}

Result<BenchOptions> ParseBenchOptions(std::string_view json) {
  auto parsed = ParsePyJson(json);
  if (!parsed.ok()) return InvalidArgumentError("bench options: " + parsed.status().message());
  const Object* top = std::get_if<Object>(&parsed->v);
  if (!top) return InvalidArgumentError("bench options: must be a JSON object");
  BenchOptions b;
  Object dataset;
  std::optional<double> rate;
  bool has_step = false, has_prefetch = false, has_plan_nodes = false;
  for (const auto& [k, v] : *top) {
    if (k == "local" || k == "world") {
      return Bad(k, "is set by the bench (one cache folder per simulated node under "
                    "'cache_dir', one world per simulated rank)");
    }
    if (!BenchKeys().count(k)) {
      if (k == "prefetch_next_epoch") has_prefetch = true;
      if (k == "streams") {
        // Each stream's local is the bench's; say so rather than overwrite it.
        if (const auto* arr = std::get_if<JsonValue::Array>(&v.v)) {
          for (size_t i = 0; i < arr->size(); ++i) {
            const Object* so = std::get_if<Object>(&(*arr)[i].v);
            if (!so) continue;
            for (const auto& kv : *so) {
              if (kv.first == "local") {
                return Bad("streams[" + std::to_string(i) + "].local", "is set by the bench (use 'cache_dir')");
              }
            }
          }
        }
      }
      dataset.emplace_back(k, v);
      continue;
    }
    if (std::holds_alternative<std::nullptr_t>(v.v)) continue;  // null = default
    if (k == "cache_dir") {
      const std::string* s = std::get_if<std::string>(&v.v);
      if (!s || s->empty()) return Bad(k, "must be a non-empty folder path");
      b.cache_dir = *s;
    } else if (k == "nodes") {
      SLUICE_ASSIGN_OR_RETURN(b.nodes, Count(v, k, kMaxWorldDim));
    } else if (k == "ranks_per_node") {
      SLUICE_ASSIGN_OR_RETURN(b.ranks_per_node, Count(v, k, kMaxWorldDim));
    } else if (k == "workers_per_rank") {
      SLUICE_ASSIGN_OR_RETURN(b.workers_per_rank, Count(v, k, kMaxWorldDim));
    } else if (k == "epochs") {
      SLUICE_ASSIGN_OR_RETURN(b.epochs, Count(v, k, kMaxEpochs));
    } else if (k == "step_time") {
      SLUICE_ASSIGN_OR_RETURN(b.step_time_s, Seconds(v, k, false));
      has_step = true;
    } else if (k == "consumer_rate") {
      SLUICE_ASSIGN_OR_RETURN(rate, Seconds(v, k, true));
    } else if (k == "interval") {
      SLUICE_ASSIGN_OR_RETURN(b.interval_s, Seconds(v, k, true));
      if (b.interval_s < 0.001) return Bad(k, "must be at least 0.001 seconds");
    } else if (k == "plan_only") {
      const bool* f = std::get_if<bool>(&v.v);
      if (!f) return Bad(k, "must be true or false");
      b.plan_only = *f;
    } else if (k == "plan_nodes") {
      SLUICE_ASSIGN_OR_RETURN(b.plan_nodes, Count(v, k, kMaxWorldDim));
      has_plan_nodes = true;
    } else if (k == "link_bandwidth") {
      SLUICE_ASSIGN_OR_RETURN(b.link_bandwidth, Bandwidth(v));
    }
  }
  if (has_step && rate) return Bad("consumer_rate", "and 'step_time' say the same thing: give one");
  if (has_plan_nodes && !b.plan_only) return Bad("plan_nodes", "applies to plan_only (--plan-only); a run plans every node");
  const int64_t limit = b.plan_only ? kMaxPlannedWorkers : kMaxProcesses;
  // Each factor is at most 2^20: the product fits.
  if (b.processes() > limit) {
    return Bad("nodes", "x ranks_per_node x workers_per_rank is " + std::to_string(b.processes()) +
                            (b.plan_only ? " workers to plan; at most " : " processes; at most ") +
                            std::to_string(limit) +
                            (b.plan_only ? "" : " (more with --plan-only, which starts none)"));
  }
  // A placeholder local lets the dataset parser check everything else; the
  // bench replaces it per node (ForRank).
  auto streams = std::find_if(dataset.begin(), dataset.end(),
                              [](const auto& kv) { return kv.first == "streams"; });
  if (streams == dataset.end()) {
    dataset.emplace_back("local", JsonValue{std::string("-")});
  } else if (auto* list = std::get_if<JsonValue::Array>(&streams->second.v)) {
    for (JsonValue& s : *list) {
      if (auto* so = std::get_if<Object>(&s.v)) so->emplace_back("local", JsonValue{std::string("-")});
    }
  }
  if (!has_prefetch) dataset.emplace_back("prefetch_next_epoch", JsonValue{false});
  auto text = DumpPyJson(JsonValue{dataset}, false);
  if (!text.ok()) return text.status();
  auto ds = ParseDatasetOptions(*text);
  if (!ds.ok()) return ds.status();
  b.dataset = std::move(*ds);
  for (size_t i = 0; i < b.dataset.streams.size(); ++i) {
    if (!b.dataset.streams[i].has_remote()) {
      return Bad(b.dataset.streams.size() == 1 ? std::string("remote")
                                               : "streams[" + std::to_string(i) + "].remote",
                 "must be set: the dataset folder or URL the bench streams from");
    }
    b.dataset.streams[i].local.clear();
  }
  if (rate) b.step_time_s = static_cast<double>(b.dataset.batch_size()) / *rate;
  return b;
}

}  // namespace sluice::bench
