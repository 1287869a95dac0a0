#include "engine/planner/plan_json.h"

#include <simdjson.h>

#include <charconv>
#include <string>

#include "engine/planner/mosaic_error.h"

namespace sluice::planner {
namespace {

using simdjson::dom::element;

Status TypeError(std::string_view key, std::string_view expected) {
  return MosaicValueError("config key '" + std::string(key) + "': expected " + std::string(expected));
}

// Absent or null -> nullopt.
Result<std::optional<element>> Member(element obj, std::string_view key) {
  element v;
  if (obj[key].get(v) != simdjson::SUCCESS || v.is_null()) return std::optional<element>();
  return std::optional<element>(v);
}

Result<std::optional<int64_t>> OptInt(element obj, std::string_view key) {
  SLUICE_ASSIGN_OR_RETURN(auto v, Member(obj, key));
  if (!v) return std::optional<int64_t>();
  int64_t out;
  if (v->get_int64().get(out) != simdjson::SUCCESS) return TypeError(key, "an integer");
  return std::optional<int64_t>(out);
}

Result<std::optional<double>> OptDouble(element obj, std::string_view key) {
  SLUICE_ASSIGN_OR_RETURN(auto v, Member(obj, key));
  if (!v) return std::optional<double>();
  double out;
  if (v->is_int64()) return std::optional<double>(double(int64_t(*v)));
  if (v->is_uint64()) return std::optional<double>(double(uint64_t(*v)));
  if (v->get_double().get(out) != simdjson::SUCCESS) return TypeError(key, "a number");
  return std::optional<double>(out);
}

Result<std::optional<std::string_view>> OptString(element obj, std::string_view key) {
  SLUICE_ASSIGN_OR_RETURN(auto v, Member(obj, key));
  if (!v) return std::optional<std::string_view>();
  std::string_view out;
  if (v->get_string().get(out) != simdjson::SUCCESS) return TypeError(key, "a string");
  return std::optional<std::string_view>(out);
}

// `key` and `key`_interpolation of `obj` (absent or null -> none). Shape
// only; QuantizeMixture checks the values.
Result<std::optional<MixtureSchedule>> MixtureOf(element obj, const std::string& key) {
  SLUICE_ASSIGN_OR_RETURN(auto mixture, Member(obj, key));
  SLUICE_ASSIGN_OR_RETURN(auto interpolation, OptString(obj, key + "_interpolation"));
  if (!mixture) {
    if (interpolation) return TypeError(key + "_interpolation", "a '" + key + "' beside it");
    return std::optional<MixtureSchedule>();
  }
  constexpr char kShape[] = "a list of [samples seen, [weights]] points";
  if (!mixture->is_array()) return TypeError(key, kShape);
  MixtureSchedule m;
  for (element point : mixture->get_array()) {
    MixturePoint p;
    simdjson::dom::array pair, weights;
    if (point.get_array().get(pair) != simdjson::SUCCESS || pair.size() != 2 ||
        pair.at(0).get_int64().get(p.at) != simdjson::SUCCESS ||
        pair.at(1).get_array().get(weights) != simdjson::SUCCESS) {
      return TypeError(key, kShape);
    }
    for (element w : weights) {
      double d;
      if (w.is_int64()) {
        d = double(int64_t(w));
      } else if (w.get_double().get(d) != simdjson::SUCCESS) {
        return TypeError(key, kShape);
      }
      p.weights.push_back(d);
    }
    m.points.push_back(std::move(p));
  }
  if (interpolation) {
    SLUICE_ASSIGN_OR_RETURN(m.interpolation, ParseMixtureInterpolation(*interpolation));
  }
  return std::optional<MixtureSchedule>(std::move(m));
}

template <typename T>
void SetIf(T& target, const std::optional<T>& v) {
  if (v) target = *v;
}

Result<PlanRequest> FromConfig(element cfg) {
  if (!cfg.is_object()) return MosaicValueError("the plan config must be a JSON object");
  PlanRequest q;
  PlanConfig& c = q.config;
  SLUICE_ASSIGN_OR_RETURN(c.num_canonical_nodes, OptInt(cfg, "num_canonical_nodes"));
  SLUICE_ASSIGN_OR_RETURN(c.batch_size, OptInt(cfg, "batch_size"));
  SLUICE_ASSIGN_OR_RETURN(c.shuffle_block_size, OptInt(cfg, "shuffle_block_size"));
  SLUICE_ASSIGN_OR_RETURN(c.replication, OptInt(cfg, "replication"));
  SLUICE_ASSIGN_OR_RETURN(c.initial_physical_nodes, OptInt(cfg, "initial_physical_nodes"));
  SLUICE_ASSIGN_OR_RETURN(auto granularity, OptInt(cfg, "sampling_granularity"));
  SetIf(c.sampling_granularity, granularity);
  SLUICE_ASSIGN_OR_RETURN(auto epoch, OptInt(cfg, "epoch"));
  SetIf(q.epoch, epoch);
  SLUICE_ASSIGN_OR_RETURN(auto sie, OptInt(cfg, "sample_in_epoch"));
  SetIf(q.sample_in_epoch, sie);

  SLUICE_ASSIGN_OR_RETURN(auto shuffle, Member(cfg, "shuffle"));
  if (shuffle && shuffle->get_bool().get(c.shuffle) != simdjson::SUCCESS) return TypeError("shuffle", "true or false");
  SLUICE_ASSIGN_OR_RETURN(auto seed, Member(cfg, "shuffle_seed"));
  if (seed && seed->get_uint64().get(c.shuffle_seed) != simdjson::SUCCESS)
    return TypeError("shuffle_seed", "a non-negative integer below 2^64");

  SLUICE_ASSIGN_OR_RETURN(auto salgo, OptString(cfg, "shuffle_algo"));
  if (salgo) {
    SLUICE_ASSIGN_OR_RETURN(c.shuffle_algo, ParseShuffleAlgo(*salgo));
  }
  SLUICE_ASSIGN_OR_RETURN(auto palgo, OptString(cfg, "partition_algo"));
  if (palgo) {
    SLUICE_ASSIGN_OR_RETURN(c.partition_algo, ParsePartitionAlgo(*palgo));
  }
  SLUICE_ASSIGN_OR_RETURN(auto bm, OptString(cfg, "batching_method"));
  if (bm) {
    SLUICE_ASSIGN_OR_RETURN(c.batching_method, ParseBatchingMethod(*bm));
  }
  SLUICE_ASSIGN_OR_RETURN(auto sm, OptString(cfg, "sampling_method"));
  if (sm) {
    SLUICE_ASSIGN_OR_RETURN(c.sampling_method, ParseSamplingMethod(*sm));
  }

  SLUICE_ASSIGN_OR_RETURN(auto es, Member(cfg, "epoch_size"));
  if (es) {
    std::string_view text;
    int64_t n;
    if (es->get_int64().get(n) == simdjson::SUCCESS) {
      c.epoch_size = n;
    } else if (es->get_string().get(text) == simdjson::SUCCESS) {
      SLUICE_ASSIGN_OR_RETURN(c.epoch_size, ParseEpochSize(text));
    } else {
      return TypeError("epoch_size", "null, an integer or a string such as \"1.5k\"");
    }
  }

  SLUICE_ASSIGN_OR_RETURN(c.mixture, MixtureOf(cfg, "mixture"));
  SLUICE_ASSIGN_OR_RETURN(auto rule, OptString(cfg, "mixture_rule"));
  if (rule) {
    if (!c.mixture) return TypeError("mixture_rule", "a 'mixture' beside it");
    SLUICE_ASSIGN_OR_RETURN(c.mixture->rule, ParseMixtureRule(*rule));
  }
  SLUICE_ASSIGN_OR_RETURN(auto past, Member(cfg, "mixture_past"));
  if (past) {
    constexpr char kPast[] = "a list of {\"epoch\", \"until\", \"mixture\", \"mixture_interpolation\"}";
    if (!past->is_array() || !c.mixture) return TypeError("mixture_past", kPast);
    for (element entry : past->get_array()) {
      if (!entry.is_object()) return TypeError("mixture_past", kPast);
      PlanConfig::MixtureChange change;
      SLUICE_ASSIGN_OR_RETURN(auto epoch, OptInt(entry, "epoch"));
      SLUICE_ASSIGN_OR_RETURN(auto until, OptInt(entry, "until"));
      SLUICE_ASSIGN_OR_RETURN(auto schedule, MixtureOf(entry, "mixture"));
      if (!epoch || !until || !schedule) return TypeError("mixture_past", kPast);
      c.mixture_past.push_back({*epoch, *until, std::move(*schedule)});
    }
  }

  SLUICE_ASSIGN_OR_RETURN(auto world, Member(cfg, "world"));
  if (world) {
    if (!world->is_object()) return TypeError("world", "an object");
    SLUICE_ASSIGN_OR_RETURN(auto v, OptInt(*world, "num_nodes"));
    SetIf(q.world.num_nodes, v);
    SLUICE_ASSIGN_OR_RETURN(v, OptInt(*world, "ranks_per_node"));
    SetIf(q.world.ranks_per_node, v);
    SLUICE_ASSIGN_OR_RETURN(v, OptInt(*world, "workers_per_rank"));
    SetIf(q.world.workers_per_rank, v);
    SLUICE_ASSIGN_OR_RETURN(q.world.node, OptInt(*world, "node"));
    SLUICE_ASSIGN_OR_RETURN(q.world.rank, OptInt(*world, "rank"));
    SLUICE_ASSIGN_OR_RETURN(q.world.worker, OptInt(*world, "worker"));
  }

  SLUICE_ASSIGN_OR_RETURN(auto streams, Member(cfg, "streams"));
  if (!streams || !streams->is_array()) return TypeError("streams", "a list of streams");
  for (element s : streams->get_array()) {
    if (!s.is_object()) return TypeError("streams", "objects with shard_sizes");
    StreamSpec spec;
    SLUICE_ASSIGN_OR_RETURN(auto sizes, Member(s, "shard_sizes"));
    if (!sizes || !sizes->is_array()) return TypeError("shard_sizes", "a list of integers");
    for (element z : sizes->get_array()) {
      int64_t n;
      if (z.get_int64().get(n) != simdjson::SUCCESS) return TypeError("shard_sizes", "a list of integers");
      spec.shard_sizes.push_back(n);
    }
    SLUICE_ASSIGN_OR_RETURN(spec.weight.proportion, OptDouble(s, "proportion"));
    SLUICE_ASSIGN_OR_RETURN(spec.weight.repeat, OptDouble(s, "repeat"));
    SLUICE_ASSIGN_OR_RETURN(spec.weight.choose, OptInt(s, "choose"));
    q.streams.push_back(std::move(spec));
  }
  return q;
}

void AppendInt(std::string& out, int64_t v) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  (void)ec;
  out.append(buf, end);
}

void AppendJsonString(std::string& out, std::string_view s) {
  out += '"';
  for (unsigned char ch : s) {
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (ch < 0x20) {
          static const char kHex[] = "0123456789abcdef";
          out += "\\u00";
          out += kHex[ch >> 4];
          out += kHex[ch & 15];
        } else {
          out += char(ch);
        }
    }
  }
  out += '"';
}

}  // namespace

Result<PlanRequest> ParsePlanRequest(std::string_view json) {
  simdjson::dom::parser parser;
  simdjson::padded_string padded(json);
  element doc;
  if (auto err = parser.parse(padded).get(doc); err != simdjson::SUCCESS) {
    return MosaicValueError(std::string("the plan config is not valid JSON: ") + simdjson::error_message(err));
  }
  element inner;
  if (doc.is_object() && doc["config"].get(inner) == simdjson::SUCCESS) return FromConfig(inner);
  return FromConfig(doc);
}

std::string RenderWork(const WorkArray& work) {
  std::string out;
  out.reserve(work.ids.size() * 8 + 64);
  out += "{\"work\":";
  const auto& s = work.shape;
  // Nested brackets; an empty axis gives "[]" at that level.
  size_t at = 0;
  auto rec = [&](auto&& self, int axis) -> void {
    out += '[';
    for (int64_t i = 0; i < s[size_t(axis)]; ++i) {
      if (i) out += ',';
      if (axis == 4) {
        AppendInt(out, work.ids[at++]);
      } else {
        self(self, axis + 1);
      }
    }
    out += ']';
  };
  rec(rec, 0);
  out += ",\"work_shape\":[";
  for (size_t i = 0; i < 5; ++i) {
    if (i) out += ',';
    AppendInt(out, s[i]);
  }
  out += "]}";
  return out;
}

std::string PlanToJson(std::string_view config_json) {
  auto request = ParsePlanRequest(config_json);
  if (!request.ok()) return RenderError(request.status());
  auto work = PlanEpoch(*request);
  if (!work.ok()) return RenderError(work.status());
  return RenderWork(*work);
}

std::string RenderError(const Status& status) {
  const SplitError e = SplitMosaicError(status);
  std::string out = "{\"error\":{\"message\":";
  AppendJsonString(out, e.message);
  out += ",\"type\":";
  AppendJsonString(out, e.type);
  out += "}}";
  return out;
}

}  // namespace sluice::planner
