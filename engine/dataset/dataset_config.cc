#include "engine/dataset/dataset_config.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <set>

#include "engine/dataset/byte_size.h"
#include "engine/planner/partition.h"
#include "engine/planner/shuffle.h"
#include "engine/planner/size_check.h"
#include "engine/planner/weights.h"
#include "formats/json/py_json.h"

namespace sluice {
namespace {

using Object = JsonValue::Object;

Status Bad(std::string_view key, std::string_view what) {
  return InvalidArgumentError("dataset config: '" + std::string(key) + "' " + std::string(what));
}

bool IsNull(const JsonValue& v) { return std::holds_alternative<std::nullptr_t>(v.v); }

Result<int64_t> GetInt(const JsonValue& v, std::string_view key) {
  if (const int64_t* i = std::get_if<int64_t>(&v.v)) return *i;
  return Bad(key, "must be an integer");
}

Result<double> GetNumber(const JsonValue& v, std::string_view key) {
  if (const int64_t* i = std::get_if<int64_t>(&v.v)) return static_cast<double>(*i);
  if (const double* d = std::get_if<double>(&v.v)) {
    if (std::isfinite(*d)) return *d;
  }
  return Bad(key, "must be a finite number");
}

Result<bool> GetBool(const JsonValue& v, std::string_view key) {
  if (const bool* b = std::get_if<bool>(&v.v)) return *b;
  return Bad(key, "must be true or false");
}

Result<std::string> GetString(const JsonValue& v, std::string_view key) {
  if (const std::string* s = std::get_if<std::string>(&v.v)) return *s;
  return Bad(key, "must be a string");
}

Result<std::vector<std::string>> GetStringList(const JsonValue& v, std::string_view key) {
  const JsonValue::Array* list = std::get_if<JsonValue::Array>(&v.v);
  if (list == nullptr) return Bad(key, "must be a list of strings");
  std::vector<std::string> out;
  for (const JsonValue& item : *list) {
    std::string where = std::string(key) + "[" + std::to_string(out.size()) + "]";
    SLUICE_ASSIGN_OR_RETURN(std::string s, GetString(item, where));
    out.push_back(std::move(s));
  }
  return out;
}

template <typename T>
Status SetOpt(const JsonValue& v, std::string_view key, std::optional<T>* out,
              Result<T> (*get)(const JsonValue&, std::string_view)) {
  if (IsNull(v)) {
    out->reset();
    return Status::Ok();
  }
  SLUICE_ASSIGN_OR_RETURN(*out, get(v, key));
  return Status::Ok();
}

}  // namespace

// "mixture": [[samples seen, [weight per stream, ...]], ...]. Only the
// shape is checked here; the planner checks the values (QuantizeMixture).
Result<planner::MixtureSchedule> ParseMixturePoints(const JsonValue& v, std::string_view key) {
  const JsonValue::Array* points = std::get_if<JsonValue::Array>(&v.v);
  if (points == nullptr) return Bad(key, "must be a list of [samples seen, [weights]] points");
  planner::MixtureSchedule out;
  for (size_t k = 0; k < points->size(); ++k) {
    const std::string where = std::string(key) + "[" + std::to_string(k) + "]";
    const JsonValue::Array* pair = std::get_if<JsonValue::Array>(&(*points)[k].v);
    if (pair == nullptr || pair->size() != 2) return Bad(where, "must be a pair [samples seen, [weights]]");
    planner::MixturePoint point;
    SLUICE_ASSIGN_OR_RETURN(point.at, GetInt((*pair)[0], where + "[0]"));
    const JsonValue::Array* weights = std::get_if<JsonValue::Array>(&(*pair)[1].v);
    if (weights == nullptr) return Bad(where + "[1]", "must be a list of numbers, one per stream");
    for (size_t i = 0; i < weights->size(); ++i) {
      const JsonValue& w = (*weights)[i];
      if (const int64_t* n = std::get_if<int64_t>(&w.v)) {
        point.weights.push_back(static_cast<double>(*n));
      } else if (const double* d = std::get_if<double>(&w.v)) {
        point.weights.push_back(*d);
      } else {
        return Bad(where + "[1][" + std::to_string(i) + "]", "must be a number");
      }
    }
    out.points.push_back(std::move(point));
  }
  return out;
}

namespace {

bool IsStreamKey(std::string_view k) {
  static const std::set<std::string_view> keys = {
      "remote", "local", "split", "proportion", "repeat", "choose",
      "download_retry", "download_timeout", "read_timeout", "validate_hash", "keep_zip",
      "single_pass", "single_pass_part_size", "files", "parquet"};
  return keys.count(k) > 0;
}

// "files" or "parquet": null/false (not such a stream), true (every file
// the key's format takes), or {"glob": "*.jpg" | ["*.jpg", ...],
// "manifest": "files.txt"}; "parquet" also {"columns": ["a", ...]}.
Status ApplyFileSelectionKey(std::string_view k, const JsonValue& v,
                             std::optional<FileDatasetOptions>* out) {
  const std::string field(k);
  out->reset();
  if (IsNull(v)) return Status::Ok();
  if (const bool* b = std::get_if<bool>(&v.v)) {
    if (*b) out->emplace();
    return Status::Ok();
  }
  const Object* object = std::get_if<Object>(&v.v);
  const bool parquet = k == "parquet";
  if (object == nullptr) {
    return Bad(field, parquet ? "must be true, null or an object {glob, manifest, columns}"
                              : "must be true, null or an object {glob, manifest}");
  }
  FileDatasetOptions files;
  for (const auto& [key, value] : *object) {
    const std::string where = field + "." + key;
    if (key == "glob") {
      if (IsNull(value)) continue;
      if (const std::string* one = std::get_if<std::string>(&value.v)) {
        files.selection.globs.push_back(*one);
        continue;
      }
      const JsonValue::Array* list = std::get_if<JsonValue::Array>(&value.v);
      if (list == nullptr) return Bad(where, "must be a string or a list of strings");
      for (const JsonValue& g : *list) {
        SLUICE_ASSIGN_OR_RETURN(std::string glob, GetString(g, where));
        files.selection.globs.push_back(std::move(glob));
      }
    } else if (key == "manifest") {
      if (IsNull(value)) continue;
      SLUICE_ASSIGN_OR_RETURN(files.manifest, GetString(value, where));
      if (files.manifest.empty()) return Bad(where, "must not be empty");
    } else if (key == "columns" && parquet) {
      if (IsNull(value)) continue;
      const JsonValue::Array* list = std::get_if<JsonValue::Array>(&value.v);
      if (list == nullptr || list->empty()) return Bad(where, "must be a non-empty list of names");
      for (const JsonValue& c : *list) {
        SLUICE_ASSIGN_OR_RETURN(std::string name, GetString(c, where));
        if (std::find(files.columns.begin(), files.columns.end(), name) != files.columns.end()) {
          return Bad(where, "names \"" + name + "\" twice");
        }
        files.columns.push_back(std::move(name));
      }
    } else {
      return Bad(where, parquet ? "is not a known key (glob, manifest, columns)"
                                : "is not a known key (glob, manifest)");
    }
  }
  for (const std::string& g : files.selection.globs) {
    if (g.empty()) return Bad(field + ".glob", "must not hold an empty pattern");
  }
  *out = std::move(files);
  return Status::Ok();
}

Status ApplyStreamKey(std::string_view k, const JsonValue& v, StreamOptions* s) {
  if (k == "remote" || k == "local" || k == "split") {
    std::string text;
    if (!IsNull(v)) {
      SLUICE_ASSIGN_OR_RETURN(text, GetString(v, k));
    }
    (k == "remote" ? s->remote : k == "local" ? s->local : s->split) = text;
  } else if (k == "proportion") {
    SLUICE_RETURN_IF_ERROR(SetOpt<double>(v, k, &s->weight.proportion, GetNumber));
  } else if (k == "repeat") {
    SLUICE_RETURN_IF_ERROR(SetOpt<double>(v, k, &s->weight.repeat, GetNumber));
  } else if (k == "choose") {
    SLUICE_RETURN_IF_ERROR(SetOpt<int64_t>(v, k, &s->weight.choose, GetInt));
  } else if (k == "download_retry") {
    if (!IsNull(v)) {
      SLUICE_ASSIGN_OR_RETURN(int64_t n, GetInt(v, k));
      if (n < 0 || n > 100) return Bad(k, "must be in [0, 100]");
      s->download_retry = static_cast<int>(n);
    }
  } else if (k == "download_timeout") {
    if (!IsNull(v)) {
      SLUICE_ASSIGN_OR_RETURN(s->download_timeout_s, GetNumber(v, k));
      if (s->download_timeout_s <= 0) return Bad(k, "must be positive");
    }
  } else if (k == "read_timeout") {
    if (!IsNull(v)) {
      SLUICE_ASSIGN_OR_RETURN(s->read_timeout_s, GetNumber(v, k));
      if (s->read_timeout_s <= 0) return Bad(k, "must be positive");
    }
  } else if (k == "validate_hash") {
    SLUICE_RETURN_IF_ERROR(SetOpt<std::string>(v, k, &s->validate_hash, GetString));
  } else if (k == "keep_zip") {
    if (!IsNull(v)) {
      SLUICE_ASSIGN_OR_RETURN(s->keep_zip, GetBool(v, k));
    }
  } else if (k == "single_pass") {
    if (!IsNull(v)) {
      SLUICE_ASSIGN_OR_RETURN(s->single_pass, GetBool(v, k));
    }
  } else if (k == "single_pass_part_size") {
    if (!IsNull(v)) {
      SLUICE_ASSIGN_OR_RETURN(int64_t bytes, GetInt(v, k));
      if (bytes < 0) return Bad(k, "must be a number of bytes, 0 or more");
      s->single_pass_part_size = static_cast<uint64_t>(bytes);
    }
  } else if (k == "files") {
    SLUICE_RETURN_IF_ERROR(ApplyFileSelectionKey(k, v, &s->files));
  } else if (k == "parquet") {
    SLUICE_RETURN_IF_ERROR(ApplyFileSelectionKey(k, v, &s->parquet));
  }
  return Status::Ok();
}

// The "world" object: {"rank", "world_size", "local_rank", "local_world_size"},
// each an integer or null (= from the environment).
Status ApplyWorldObject(const JsonValue& v, WorldOptions* world) {
  const Object* w = std::get_if<Object>(&v.v);
  if (!w) return Bad("world", "must be an object");
  for (const auto& [wk, wv] : *w) {
    std::optional<int64_t>* slot = wk == "rank"               ? &world->rank
                                   : wk == "world_size"       ? &world->world_size
                                   : wk == "local_rank"       ? &world->local_rank
                                   : wk == "local_world_size" ? &world->local_world_size
                                                              : nullptr;
    if (!slot) return Bad("world." + wk, "is not a known key");
    SLUICE_RETURN_IF_ERROR(SetOpt<int64_t>(wv, "world." + wk, slot, GetInt));
  }
  return Status::Ok();
}

Status ApplyGlobalKey(std::string_view k, const JsonValue& v, DatasetOptions* o) {
  planner::PlanConfig& p = o->plan;
  if (k == "mixture") {
    SLUICE_RETURN_IF_ERROR(SetOpt<planner::MixtureSchedule>(v, k, &p.mixture, ParseMixturePoints));
  } else if (k == "epoch_size") {
    if (IsNull(v)) {
      p.epoch_size.reset();
    } else if (const std::string* s = std::get_if<std::string>(&v.v)) {
      SLUICE_ASSIGN_OR_RETURN(p.epoch_size, planner::ParseEpochSize(*s));
    } else {
      SLUICE_ASSIGN_OR_RETURN(p.epoch_size, GetInt(v, k));
    }
  } else if (k == "predownload") {
    SLUICE_RETURN_IF_ERROR(SetOpt<int64_t>(v, k, &o->predownload, GetInt));
    if (o->predownload && *o->predownload < 0) return Bad(k, "must not be negative");
  } else if (k == "cache_limit") {
    if (IsNull(v)) {
      o->cache_limit.reset();
    } else if (const std::string* s = std::get_if<std::string>(&v.v)) {
      SLUICE_ASSIGN_OR_RETURN(o->cache_limit, ParseByteSize(*s));
    } else {
      SLUICE_ASSIGN_OR_RETURN(double d, GetNumber(v, k));
      if (d < 0 || d > std::ldexp(1.0, 63)) return Bad(k, "must be a byte count");
      o->cache_limit = static_cast<uint64_t>(d);
    }
  } else if (k == "sampling_method") {
    SLUICE_ASSIGN_OR_RETURN(std::string s, GetString(v, k));
    SLUICE_ASSIGN_OR_RETURN(p.sampling_method, planner::ParseSamplingMethod(s));
  } else if (k == "sampling_granularity") {
    SLUICE_ASSIGN_OR_RETURN(p.sampling_granularity, GetInt(v, k));
  } else if (k == "partition_algo") {
    SLUICE_ASSIGN_OR_RETURN(std::string s, GetString(v, k));
    SLUICE_ASSIGN_OR_RETURN(p.partition_algo, planner::ParsePartitionAlgo(s));
  } else if (k == "num_canonical_nodes") {
    SLUICE_RETURN_IF_ERROR(SetOpt<int64_t>(v, k, &p.num_canonical_nodes, GetInt));
  } else if (k == "batch_size") {
    SLUICE_RETURN_IF_ERROR(SetOpt<int64_t>(v, k, &p.batch_size, GetInt));
    if (p.batch_size && *p.batch_size <= 0) return Bad(k, "must be positive");
  } else if (k == "shuffle") {
    SLUICE_ASSIGN_OR_RETURN(p.shuffle, GetBool(v, k));
  } else if (k == "shuffle_algo") {
    SLUICE_ASSIGN_OR_RETURN(std::string s, GetString(v, k));
    SLUICE_ASSIGN_OR_RETURN(p.shuffle_algo, planner::ParseShuffleAlgo(s));
  } else if (k == "shuffle_seed") {
    SLUICE_ASSIGN_OR_RETURN(int64_t seed, GetInt(v, k));
    if (seed < 0) return Bad(k, "must not be negative");
    p.shuffle_seed = static_cast<uint64_t>(seed);
  } else if (k == "shuffle_block_size") {
    SLUICE_RETURN_IF_ERROR(SetOpt<int64_t>(v, k, &p.shuffle_block_size, GetInt));
  } else if (k == "batching_method") {
    SLUICE_ASSIGN_OR_RETURN(std::string s, GetString(v, k));
    SLUICE_ASSIGN_OR_RETURN(p.batching_method, planner::ParseBatchingMethod(s));
  } else if (k == "replication") {
    SLUICE_RETURN_IF_ERROR(SetOpt<int64_t>(v, k, &p.replication, GetInt));
  } else if (k == "allow_unsafe_types") {
    SLUICE_ASSIGN_OR_RETURN(o->allow_unsafe_types, GetBool(v, k));
  } else if (k == "custom_encodings") {
    SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> names, GetStringList(v, k));
    o->custom_encodings.names = {names.begin(), names.end()};
  } else if (k == "mosaic_cache_limit_checks") {
    SLUICE_ASSIGN_OR_RETURN(o->mosaic_cache_limit_checks, GetBool(v, k));
  } else if (k == "any_custom_encoding") {
    SLUICE_ASSIGN_OR_RETURN(o->custom_encodings.any, GetBool(v, k));
  } else if (k == "wait_timeout") {
    SLUICE_ASSIGN_OR_RETURN(double s, GetNumber(v, k));
    if (s <= 0 || s > 1e6) return Bad(k, "must be in (0, 1e6] seconds");
    o->wait_timeout = std::chrono::milliseconds(static_cast<int64_t>(s * 1000));
  } else if (k == "prefetch_next_epoch") {
    SLUICE_ASSIGN_OR_RETURN(o->prefetch_next_epoch, GetBool(v, k));
  } else if (k == "pass_window_ids") {
    SLUICE_ASSIGN_OR_RETURN(o->pass_window_ids, GetInt(v, k));
    if (o->pass_window_ids < 1) return Bad(k, "must be at least 1");
  } else if (k == "peek_first_sample") {
    SLUICE_ASSIGN_OR_RETURN(o->peek_first_sample, GetBool(v, k));
  } else if (k == "guess_first_shard") {
    SLUICE_ASSIGN_OR_RETURN(o->guess_first_shard, GetBool(v, k));
  } else if (k == "serve_in_flight") {
    SLUICE_ASSIGN_OR_RETURN(o->serve_in_flight, GetBool(v, k));
  } else if (k == "single_pass_memory") {
    if (IsNull(v)) {
      o->single_pass_memory.reset();
    } else if (const std::string* s = std::get_if<std::string>(&v.v)) {
      Result<uint64_t> bytes = ParseByteSize(*s);
      if (!bytes.ok()) {
        return Bad(k, "must be a number of bytes, 0 or more, or a size such as \"4gb\" (" +
                          std::string(bytes.status().message()) + ")");
      }
      o->single_pass_memory = *bytes;
    } else {
      SLUICE_ASSIGN_OR_RETURN(int64_t bytes, GetInt(v, k));
      if (bytes < 0) return Bad(k, "must be a number of bytes, 0 or more");
      o->single_pass_memory = static_cast<uint64_t>(bytes);
    }
  } else if (k == "skip_corrupt_shards") {
    SLUICE_ASSIGN_OR_RETURN(o->skip_corrupt_shards, GetBool(v, k));
  } else if (k == "skip_missing_files") {
    SLUICE_ASSIGN_OR_RETURN(o->skip_missing_files, GetBool(v, k));
  } else if (k == "fetch_concurrency") {
    SLUICE_RETURN_IF_ERROR(SetOpt<int64_t>(v, k, &o->fetch_concurrency, GetInt));
    if (o->fetch_concurrency && (*o->fetch_concurrency < 1 || *o->fetch_concurrency > 256)) {
      return Bad(k, "must be in [1, 256]");
    }
  } else if (k == "metrics_retention_s") {
    SLUICE_RETURN_IF_ERROR(SetOpt<int64_t>(v, k, &o->metrics_retention_s, GetInt));
    if (o->metrics_retention_s && *o->metrics_retention_s < 0) {
      return Bad(k, "must be a number of seconds, 0 or more");
    }
  } else if (k == "world") {
    SLUICE_RETURN_IF_ERROR(ApplyWorldObject(v, &o->world));
  } else {
    return Bad(k, "is not a known key");
  }
  return Status::Ok();
}

// An integer from the environment; unset or empty = nullopt. Anything
// else than a decimal integer is an error, as int() raises in Mosaic.
Result<std::optional<int64_t>> EnvInt(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::optional<int64_t>();
  char* end = nullptr;
  errno = 0;
  long long n = std::strtoll(v, &end, 10);
  if (*end != '\0' || errno == ERANGE) {
    return InvalidArgumentError(std::string("world: environment variable ") + name + " '" + v +
                                "' is not an integer");
  }
  return std::optional<int64_t>(n);
}

}  // namespace

uint64_t DatasetOptions::single_pass_memory_bytes(uint64_t readers) const {
  if (single_pass_memory) return *single_pass_memory;
  const uint64_t limit = planner::ProcessMemoryLimit();
  const uint64_t node = limit == 0 ? uint64_t{4} << 30 : limit / 4;
  return std::min(node / std::max<uint64_t>(readers, 1), kSinglePassMemoryCap);
}

bool ReadsInSinglePass(const StreamOptions& stream) {
  return stream.single_pass && stream.has_remote();
}

Result<DatasetOptions> ParseDatasetOptions(std::string_view json) {
  auto parsed = ParsePyJson(json);
  if (!parsed.ok()) return InvalidArgumentError("dataset config: " + parsed.status().message());
  const Object* top = std::get_if<Object>(&parsed->v);
  if (!top) return InvalidArgumentError("dataset config: must be a JSON object");
  DatasetOptions o;
  const JsonValue* streams = nullptr;
  StreamOptions single;
  bool has_single = false;
  std::optional<planner::MixtureInterpolation> interpolation;
  for (const auto& [k, v] : *top) {
    if (k == "streams") {
      if (!IsNull(v)) streams = &v;
    } else if (k == "mixture_interpolation") {
      if (IsNull(v)) continue;
      SLUICE_ASSIGN_OR_RETURN(std::string name, GetString(v, k));
      SLUICE_ASSIGN_OR_RETURN(interpolation, planner::ParseMixtureInterpolation(name));
    } else if (IsStreamKey(k)) {
      SLUICE_RETURN_IF_ERROR(ApplyStreamKey(k, v, &single));
      has_single = true;
    } else {
      SLUICE_RETURN_IF_ERROR(ApplyGlobalKey(k, v, &o));
    }
  }
  if (interpolation) {
    if (!o.plan.mixture) return Bad("mixture_interpolation", "is set without a 'mixture'");
    o.plan.mixture->interpolation = *interpolation;
  }
  if (streams) {
    const JsonValue::Array* arr = std::get_if<JsonValue::Array>(&streams->v);
    if (!arr || arr->empty()) return Bad("streams", "must be a non-empty array");
    for (size_t i = 0; i < arr->size(); ++i) {
      const Object* so = std::get_if<Object>(&(*arr)[i].v);
      std::string where = "streams[" + std::to_string(i) + "]";
      if (!so) return Bad(where, "must be an object");
      // Dataset-level download options are every stream's defaults (Mosaic).
      StreamOptions s = single;
      s.remote = s.local = s.split = "";
      s.weight = {};
      for (const auto& [k, v] : *so) {
        if (!IsStreamKey(k)) return Bad(where + "." + k, "is not a known key");
        SLUICE_RETURN_IF_ERROR(ApplyStreamKey(k, v, &s).WithContext(where));
      }
      o.streams.push_back(std::move(s));
    }
  } else if (has_single) {
    o.streams.push_back(std::move(single));
  } else {
    return InvalidArgumentError("dataset config: needs 'streams' or 'local'/'remote'");
  }
  for (size_t i = 0; i < o.streams.size(); ++i) {
    if (o.streams[i].local.empty()) {
      return Bad("streams[" + std::to_string(i) + "].local",
                 "must be set (the cache folder, or the dataset folder when there is no remote)");
    }
    if (o.streams[i].files && o.streams[i].parquet) {
      return Bad("streams[" + std::to_string(i) + "].parquet",
                 "cannot be set beside \"files\" (a stream is raw files or Parquet files)");
    }
  }
  return o;
}

Result<WorldOptions> ParseWorldOptions(std::string_view json) {
  auto parsed = ParsePyJson(json);
  if (!parsed.ok()) return InvalidArgumentError("dataset config: " + parsed.status().message());
  WorldOptions world;
  SLUICE_RETURN_IF_ERROR(ApplyWorldObject(*parsed, &world));
  return world;
}

// Mosaic's rule (streaming.base.world.World.detect with
// streaming.base.distributed): RANK (0), WORLD_SIZE (1), LOCAL_WORLD_SIZE
// (1: without it every rank is a node of its own); Mosaic never reads
// LOCAL_RANK, so it is only checked against rank % local_world_size, and
// only when the local world size was given too (a LOCAL_RANK beside a
// missing LOCAL_WORLD_SIZE counts ranks on some other notion of a node).
Result<ResolvedWorld> ResolveWorld(const WorldOptions& w) {
  // A world given (any field) is the caller's alone: torchrun's variables
  // describe this process's own place, which a caller naming another (a Ray
  // task reading partition i of n inside a torchrun job) has left, so
  // mixing the two would make a third world. Fields not given then take
  // the defaults below.
  const bool given = w.rank || w.world_size || w.local_rank || w.local_world_size;
  auto pick = [given](const std::optional<int64_t>& value,
                      const char* env) -> Result<std::optional<int64_t>> {
    if (given) return value;
    return EnvInt(env);
  };
  SLUICE_ASSIGN_OR_RETURN(std::optional<int64_t> rank_given, pick(w.rank, "RANK"));
  SLUICE_ASSIGN_OR_RETURN(std::optional<int64_t> world_size_given,
                          pick(w.world_size, "WORLD_SIZE"));
  SLUICE_ASSIGN_OR_RETURN(std::optional<int64_t> local_ws_given,
                          pick(w.local_world_size, "LOCAL_WORLD_SIZE"));
  const int64_t rank = rank_given.value_or(0);
  const int64_t world_size = world_size_given.value_or(1);
  const int64_t local_ws = local_ws_given.value_or(1);
  int64_t local_rank = local_ws > 0 ? rank % local_ws : 0;
  if (w.local_rank || local_ws_given) {
    SLUICE_ASSIGN_OR_RETURN(std::optional<int64_t> local_rank_given,
                            pick(w.local_rank, "LOCAL_RANK"));
    if (local_rank_given) local_rank = *local_rank_given;
  }
  std::string text = "world: rank " + std::to_string(rank) + ", world_size " +
                     std::to_string(world_size) + ", local_rank " + std::to_string(local_rank) +
                     ", local_world_size " + std::to_string(local_ws);
  if (world_size < 1 || local_ws < 1 || rank < 0 || rank >= world_size || local_rank < 0 ||
      local_rank >= local_ws || world_size % local_ws != 0 || rank % local_ws != local_rank) {
    return InvalidArgumentError(text + ": inconsistent (need 0 <= rank < world_size, world_size "
                                       "a multiple of local_world_size, local_rank = rank % "
                                       "local_world_size)");
  }
  ResolvedWorld r;
  r.num_nodes = world_size / local_ws;
  r.ranks_per_node = local_ws;
  r.node = rank / local_ws;
  r.rank_in_node = local_rank;
  r.global_rank = rank;
  r.world_size = world_size;
  if (world_size > 1 && !rank_given && !w.world_size) {
    r.unranked_warning =
        "world: WORLD_SIZE is " + std::to_string(world_size) +
        " but RANK is not set, so this process takes itself for rank 0 and reads the same "
        "samples as every other process started this way (PyTorch Lightning's own launcher "
        "sets WORLD_SIZE and LOCAL_RANK but not RANK). Launch with torchrun, which sets RANK, "
        "WORLD_SIZE, LOCAL_RANK and LOCAL_WORLD_SIZE for every process, or set RANK in each "
        "process.";
  }
  return r;
}

}  // namespace sluice
