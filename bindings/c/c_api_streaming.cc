// sluice_stream_*: the streaming dataset (engine/dataset) behind the C ABI.
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "bindings/c/c_api_internal.h"
#include "bindings/c/c_api_stream.h"
#include "engine/dataset/metrics_prometheus.h"
#include "engine/dataset/order_record.h"
#include "formats/json/py_json.h"


namespace {

using sluice::capi::Check;
using sluice::capi::Fail;
using sluice::capi::Guard;
using sluice::capi::NullArgument;

sluice_bytes Bytes(std::string_view v) {
  return sluice_bytes{reinterpret_cast<const uint8_t*>(v.data()), v.size()};
}

char* CopyString(const std::string& text) {
  char* out = static_cast<char*>(std::malloc(text.size() + 1));
  if (out) std::memcpy(out, text.c_str(), text.size() + 1);
  return out;
}

sluice_status LoadState(const char* fn, sluice_stream* s, const char* state_json,
                        const sluice::ResumeOptions& options, uint64_t* epoch,
                        uint64_t* sample_in_epoch) {
  if (s == nullptr) return NullArgument(fn, "s");
  if (state_json == nullptr) return NullArgument(fn, "state_json");
  s->batch_count = 0;
  s->masked.clear();
  auto state = sluice::ResumeStateFromJson(state_json);
  if (!state.ok()) return Fail(state.status());
  if (sluice::Status st = s->ds->LoadState(*state, options); !st.ok()) return Fail(st);
  if (epoch) *epoch = static_cast<uint64_t>(state->epoch);
  if (sample_in_epoch) *sample_in_epoch = static_cast<uint64_t>(state->sample_in_epoch);
  return SLUICE_OK;
}

}  // namespace

extern "C" {

sluice_status sluice_stream_open(const char* config_json, sluice_stream** out) {
  return Guard("sluice_stream_open", [&] {
    if (config_json == nullptr) return NullArgument("sluice_stream_open", "config_json");
    if (out == nullptr) return NullArgument("sluice_stream_open", "out");
    *out = nullptr;
    auto options = sluice::ParseDatasetOptions(config_json);
    if (!options.ok()) return Fail(options.status());
    auto ds = sluice::StreamingDataset::Open(std::move(*options));
    if (!ds.ok()) return Fail(ds.status());
    *out = new sluice_stream{std::move(*ds), {}, {}, 0, false, {}, false, {}};
    return SLUICE_OK;
  });
}

void sluice_stream_close(sluice_stream* s) { delete s; }

uint64_t sluice_stream_num_samples(const sluice_stream* s) { return s ? s->ds->num_samples() : 0; }

uint64_t sluice_stream_len(const sluice_stream* s) {
  return s ? static_cast<uint64_t>(s->ds->length()) : 0;
}

uint32_t sluice_stream_num_streams(const sluice_stream* s) {
  return s ? static_cast<uint32_t>(s->ds->num_streams()) : 0;
}

uint64_t sluice_stream_num_shards(const sluice_stream* s) { return s ? s->ds->num_shards() : 0; }

sluice_status sluice_stream_shard_info(const sluice_stream* s, uint64_t shard, uint64_t* samples,
                                       uint32_t* stream) {
  return Guard("sluice_stream_shard_info", [&] {
    if (s == nullptr) return NullArgument("sluice_stream_shard_info", "s");
    if (shard >= s->ds->num_shards()) {
      return Fail(sluice::OutOfRangeError("sluice_stream_shard_info: shard " +
                                          std::to_string(shard) + " of " +
                                          std::to_string(s->ds->num_shards())));
    }
    if (samples) *samples = s->ds->shard_samples(static_cast<size_t>(shard));
    if (stream) *stream = static_cast<uint32_t>(s->ds->stream_of_shard(static_cast<size_t>(shard)));
    return SLUICE_OK;
  });
}

sluice_status sluice_stream_evict_shard(sluice_stream* s, uint64_t shard) {
  return Guard("sluice_stream_evict_shard", [&] {
    if (s == nullptr) return NullArgument("sluice_stream_evict_shard", "s");
    if (shard >= s->ds->num_shards()) {
      return Fail(sluice::OutOfRangeError("sluice_stream_evict_shard: shard " +
                                          std::to_string(shard) + " of " +
                                          std::to_string(s->ds->num_shards())));
    }
    sluice::Status st = s->ds->EvictShard(static_cast<size_t>(shard));
    return st.ok() ? SLUICE_OK : Fail(st.WithContext("sluice_stream_evict_shard"));
  });
}

sluice_status sluice_stream_sample_path(const sluice_stream* s, uint64_t sample, char** out_path) {
  return Guard("sluice_stream_sample_path", [&] {
    if (s == nullptr) return NullArgument("sluice_stream_sample_path", "s");
    if (out_path == nullptr) return NullArgument("sluice_stream_sample_path", "out_path");
    *out_path = nullptr;
    if (sample >= s->ds->num_samples()) {
      return Fail(sluice::OutOfRangeError("sluice_stream_sample_path: sample " +
                                          std::to_string(sample) + " of " +
                                          std::to_string(s->ds->num_samples())));
    }
    sluice::Result<std::string> file = s->ds->shard_file(s->ds->shard_of_sample(sample));
    if (!file.ok()) return Fail(file.status().WithContext("sluice_stream_sample_path"));
    char* path = CopyString(*file);
    if (!path) return Fail(sluice::InternalError("sluice_stream_sample_path: out of memory"));
    *out_path = path;
    return SLUICE_OK;
  });
}

sluice_status sluice_stream_sample_origin(const sluice_stream* s, uint64_t sample, uint64_t* shard,
                                          uint64_t* index_in_shard) {
  return Guard("sluice_stream_sample_origin", [&] {
    if (s == nullptr) return NullArgument("sluice_stream_sample_origin", "s");
    if (sample >= s->ds->num_samples()) {
      return Fail(sluice::OutOfRangeError("sluice_stream_sample_origin: sample " +
                                          std::to_string(sample) + " of " +
                                          std::to_string(s->ds->num_samples())));
    }
    const auto [g, i] = s->ds->sample_origin(sample);
    if (shard) *shard = g;
    if (index_in_shard) *index_in_shard = i;
    return SLUICE_OK;
  });
}

sluice_status sluice_stream_shuffle_warning(const sluice_stream* s, char** out_text) {
  return Guard("sluice_stream_shuffle_warning", [&] {
    if (s == nullptr) return NullArgument("sluice_stream_shuffle_warning", "s");
    if (out_text == nullptr) return NullArgument("sluice_stream_shuffle_warning", "out_text");
    *out_text = nullptr;
    const std::optional<std::string>& warning = s->ds->shuffle_warning();
    if (!warning) return SLUICE_OK;
    char* text = CopyString(*warning);
    if (!text) return Fail(sluice::InternalError("sluice_stream_shuffle_warning: out of memory"));
    *out_text = text;
    return SLUICE_OK;
  });
}

const char* sluice_stream_format(const sluice_stream* s) {
  return s ? s->ds->format().c_str() : nullptr;
}

const char* sluice_stream_stream_format(const sluice_stream* s, uint32_t stream) {
  if (!s || stream >= s->ds->num_streams()) return nullptr;
  return s->ds->stream_format(stream).c_str();
}

const char* sluice_stream_stream_column_encoding(const sluice_stream* s, uint32_t stream,
                                                 uint32_t column) {
  if (!s || stream >= s->ds->num_streams()) return nullptr;
  const std::vector<std::string>& encodings = s->ds->stream_column_encodings(stream);
  if (column < encodings.size()) return encodings[column].c_str();
  // A stream without shards has no encodings.
  return column < s->ds->column_names().size() ? "" : nullptr;
}

uint32_t sluice_stream_stream_num_columns(const sluice_stream* s, uint32_t stream) {
  if (!s || stream >= s->ds->num_streams()) return 0;
  return static_cast<uint32_t>(s->ds->columns().stream_columns(stream).size());
}

uint32_t sluice_stream_stream_column(const sluice_stream* s, uint32_t stream, uint32_t k) {
  if (!s || stream >= s->ds->num_streams()) return UINT32_MAX;
  const std::vector<uint32_t>& columns = s->ds->columns().stream_columns(stream);
  return k < columns.size() ? columns[k] : UINT32_MAX;
}

uint32_t sluice_stream_num_columns(const sluice_stream* s) {
  return s ? static_cast<uint32_t>(s->ds->column_names().size()) : 0;
}

const char* sluice_stream_column_name(const sluice_stream* s, uint32_t column) {
  if (!s || column >= s->ds->column_names().size()) return nullptr;
  return s->ds->column_names()[column].c_str();
}

const char* sluice_stream_column_encoding(const sluice_stream* s, uint32_t column) {
  if (!s || column >= s->ds->column_encodings().size()) return nullptr;
  return s->ds->column_encodings()[column].c_str();
}

namespace {

// Appends sample k's fields holding a null element to s->masked (their
// columns found by the fields' data pointers: the engine may have moved
// the fields to the dataset's column order).
void CollectMasked(sluice_stream* s, uint32_t k, const sluice::SampleFields& f) {
  for (const sluice::parquet::MaskedField& m : f.masked) {
    const size_t c = sluice::ColumnOfField(f, m.field);
    if (c < f.fields.size()) s->masked.push_back({k, static_cast<uint32_t>(c), m.validity});
  }
}

// Appends sample k's fields handed out as their pieces to s->pieced.
void CollectPieced(sluice_stream* s, uint32_t k, const sluice::SampleFields& f) {
  for (const sluice::parquet::PiecedField& p : f.pieced) {
    const size_t c = sluice::ColumnOfField(f, p.field);
    if (c < f.fields.size()) s->pieced.push_back({k, static_cast<uint32_t>(c), &p});
  }
}

}  // namespace

sluice_status sluice_stream_read_masks(sluice_stream* s, int on) {
  return Guard("sluice_stream_read_masks", [&] {
    if (s == nullptr) return NullArgument("sluice_stream_read_masks", "s");
    if (on != 0 && on != 1) {
      return Fail(sluice::InvalidArgumentError("sluice_stream_read_masks: on is " +
                                               std::to_string(on) + ", not 0 or 1"));
    }
    s->read_masks = on == 1;
    return SLUICE_OK;
  });
}

uint32_t sluice_stream_num_masked(const sluice_stream* s) {
  return s == nullptr ? 0 : static_cast<uint32_t>(s->masked.size());
}

sluice_status sluice_stream_masked(const sluice_stream* s, uint32_t i, uint32_t* sample,
                                   uint32_t* column, sluice_bytes* validity) {
  return Guard("sluice_stream_masked", [&] {
    if (s == nullptr) return NullArgument("sluice_stream_masked", "s");
    if (sample == nullptr) return NullArgument("sluice_stream_masked", "sample");
    if (column == nullptr) return NullArgument("sluice_stream_masked", "column");
    if (validity == nullptr) return NullArgument("sluice_stream_masked", "validity");
    if (i >= s->masked.size()) {
      return Fail(sluice::OutOfRangeError("sluice_stream_masked: " + std::to_string(i) +
                                          " is past the last call's " +
                                          std::to_string(s->masked.size()) + " masked fields"));
    }
    *sample = s->masked[i].sample;
    *column = s->masked[i].column;
    *validity = Bytes(s->masked[i].validity);
    return SLUICE_OK;
  });
}

sluice_status sluice_stream_get(sluice_stream* s, uint64_t sample, sluice_bytes* fields,
                                uint32_t num_fields) {
  return Guard("sluice_stream_get", [&] {
    if (s == nullptr) return NullArgument("sluice_stream_get", "s");
    if (fields == nullptr) return NullArgument("sluice_stream_get", "fields");
    size_t columns = s->ds->column_names().size();
    if (num_fields != columns) {
      return Fail(sluice::InvalidArgumentError(
          "sluice_stream_get: num_fields is " + std::to_string(num_fields) + ", the dataset has " +
          std::to_string(columns) + " columns"));
    }
    s->batch_count = 0;  // the engine's Get ends the last batch's views
    s->masked.clear();
    s->one.wants_masks = s->read_masks;
    s->one.masked.clear();
    if (sluice::Status st = s->ds->Get(sample, &s->one); !st.ok()) return Fail(st);
    for (size_t c = 0; c < columns; ++c) fields[c] = Bytes(s->one.fields[c]);
    CollectMasked(s, 0, s->one);
    return SLUICE_OK;
  });
}

sluice_status sluice_stream_iter_begin(sluice_stream* s, uint64_t epoch, uint64_t sample_in_epoch,
                                       uint32_t worker_id, uint32_t num_workers) {
  return Guard("sluice_stream_iter_begin", [&] {
    if (s == nullptr) return NullArgument("sluice_stream_iter_begin", "s");
    if (epoch > (uint64_t{1} << 62) || sample_in_epoch > (uint64_t{1} << 62)) {
      return Fail(sluice::InvalidArgumentError("sluice_stream_iter_begin: epoch or sample_in_epoch too large"));
    }
    s->batch_count = 0;
    s->masked.clear();
    return Check(s->ds->IterBegin(static_cast<int64_t>(epoch), static_cast<int64_t>(sample_in_epoch),
                                  worker_id, num_workers));
  });
}

sluice_status sluice_stream_next_batch(sluice_stream* s, uint32_t max_samples, int64_t* ids,
                                       sluice_bytes* fields, uint32_t* count) {
  return Guard("sluice_stream_next_batch", [&] {
    if (s == nullptr) return NullArgument("sluice_stream_next_batch", "s");
    if (count == nullptr) return NullArgument("sluice_stream_next_batch", "count");
    *count = 0;
    s->batch_count = 0;
    s->masked.clear();
    if (max_samples == 0) return SLUICE_OK;
    if (ids == nullptr) return NullArgument("sluice_stream_next_batch", "ids");
    if (fields == nullptr) return NullArgument("sluice_stream_next_batch", "fields");
    s->masked.clear();
    // The engine grows the batch only: slots made here carry the switch,
    // and a slot's masks are cleared so that none outlives its sample.
    if (s->batch.size() < max_samples) s->batch.resize(max_samples);
    s->pieced.clear();
    for (sluice::SampleFields& f : s->batch) {
      f.wants_masks = s->read_masks;
      f.masked.clear();
      f.wants_pieces = s->read_pieces;
      f.pieced.clear();  // a slot the engine does not read into has none
    }
    auto n = s->ds->NextBatch(max_samples, ids, &s->batch);
    if (!n.ok()) return Fail(n.status());
    size_t columns = s->ds->column_names().size();
    for (size_t k = 0; k < *n; ++k) {
      for (size_t c = 0; c < columns; ++c) fields[k * columns + c] = Bytes(s->batch[k].fields[c]);
      if (s->read_masks) CollectMasked(s, static_cast<uint32_t>(k), s->batch[k]);
      if (s->read_pieces) CollectPieced(s, static_cast<uint32_t>(k), s->batch[k]);
    }
    *count = static_cast<uint32_t>(*n);
    s->batch_count = *count;
    return SLUICE_OK;
  });
}

sluice_status sluice_stream_next_ids(sluice_stream* s, uint32_t max_samples, int64_t* ids,
                                     uint32_t* count) {
  return Guard("sluice_stream_next_ids", [&] {
    if (s == nullptr) return NullArgument("sluice_stream_next_ids", "s");
    if (count == nullptr) return NullArgument("sluice_stream_next_ids", "count");
    *count = 0;
    s->batch_count = 0;
    s->masked.clear();  // the last next_batch's views end here, as with next_batch
    if (max_samples == 0) return SLUICE_OK;
    if (ids == nullptr) return NullArgument("sluice_stream_next_ids", "ids");
    auto n = s->ds->NextIds(max_samples, ids);
    if (!n.ok()) return Fail(n.status());
    *count = static_cast<uint32_t>(*n);
    return SLUICE_OK;
  });
}

void sluice_stream_release(sluice_stream* s) {
  if (!s) return;
  s->batch_count = 0;
  s->masked.clear();
  s->ds->Release();
}

sluice_status sluice_stream_state_json(const sluice_stream* s, uint64_t rank_samples, char** out_json) {
  return Guard("sluice_stream_state_json", [&] {
    if (s == nullptr) return NullArgument("sluice_stream_state_json", "s");
    if (out_json == nullptr) return NullArgument("sluice_stream_state_json", "out_json");
    *out_json = nullptr;
    if (rank_samples > (uint64_t{1} << 48)) {
      return Fail(sluice::InvalidArgumentError("sluice_stream_state_json: rank_samples too large"));
    }
    char* text = CopyString(sluice::ResumeStateToJson(s->ds->State(rank_samples)));
    if (!text) return Fail(sluice::InternalError("sluice_stream_state_json: out of memory"));
    *out_json = text;
    return SLUICE_OK;
  });
}

sluice_status sluice_stream_load_state(sluice_stream* s, const char* state_json, uint64_t* epoch,
                                       uint64_t* sample_in_epoch) {
  return Guard("sluice_stream_load_state", [&] {
    // As before the order record: a resume on another world is Mosaic's
    // elastic resume; other data or options are refused.
    sluice::ResumeOptions options;
    options.adapt = {"world"};
    return LoadState("sluice_stream_load_state", s, state_json, options, epoch, sample_in_epoch);
  });
}

sluice_status sluice_stream_load_state_with(sluice_stream* s, const char* state_json,
                                            const char* options_json, uint64_t* epoch,
                                            uint64_t* sample_in_epoch) {
  return Guard("sluice_stream_load_state_with", [&] {
    sluice::ResumeOptions options;
    if (options_json != nullptr) {
      auto parsed = sluice::ResumeOptionsFromJson(options_json);
      if (!parsed.ok()) return Fail(parsed.status());
      options = std::move(*parsed);
    }
    return LoadState("sluice_stream_load_state_with", s, state_json, options, epoch,
                     sample_in_epoch);
  });
}

sluice_status sluice_stream_state_with_order(const sluice_stream* s, const char* state_json,
                                             char** out_json) {
  return Guard("sluice_stream_state_with_order", [&] {
    if (s == nullptr) return NullArgument("sluice_stream_state_with_order", "s");
    if (state_json == nullptr) return NullArgument("sluice_stream_state_with_order", "state_json");
    if (out_json == nullptr) return NullArgument("sluice_stream_state_with_order", "out_json");
    *out_json = nullptr;
    auto state = sluice::ResumeStateFromJson(state_json);
    if (!state.ok()) return Fail(state.status());
    state->order = s->ds->Order(state->shuffle_seed, state->num_canonical_nodes, state->epoch);
    char* text = CopyString(sluice::ResumeStateToJson(*state));
    if (!text) return Fail(sluice::InternalError("sluice_stream_state_with_order: out of memory"));
    *out_json = text;
    return SLUICE_OK;
  });
}

sluice_status sluice_recorded_mixture_rule(const char* sampling_json, const char** out_rule) {
  return Guard("sluice_recorded_mixture_rule", [&] {
    if (sampling_json == nullptr) return NullArgument("sluice_recorded_mixture_rule", "sampling_json");
    if (out_rule == nullptr) return NullArgument("sluice_recorded_mixture_rule", "out_rule");
    *out_rule = nullptr;
    auto parsed = sluice::ParsePyJson(sampling_json);
    auto* object = parsed.ok() ? std::get_if<sluice::JsonValue::Object>(&parsed->v) : nullptr;
    if (object == nullptr) {
      return Fail(sluice::InvalidArgumentError(
          "sluice_recorded_mixture_rule: sampling_json must be a JSON object (a state's "
          "sluice_order.parts.sampling)" + (parsed.ok() ? std::string() : ": " + parsed.status().message())));
    }
    sluice::OrderRecord record;
    record.sampling = std::move(*object);
    auto rule = sluice::RecordedMixtureRule(record);
    if (!rule.ok()) return Fail(rule.status());
    // MixtureRuleName's views are of string literals: static and terminated.
    if (*rule) *out_rule = sluice::planner::MixtureRuleName(**rule).data();
    return SLUICE_OK;
  });
}

sluice_status sluice_stream_position_after(const sluice_stream* s, uint64_t epoch, uint64_t start,
                                           uint64_t consumed, uint64_t* position) {
  return Guard("sluice_stream_position_after", [&] {
    if (s == nullptr) return NullArgument("sluice_stream_position_after", "s");
    if (position == nullptr) return NullArgument("sluice_stream_position_after", "position");
    constexpr uint64_t kMax = uint64_t{1} << 48;
    if (epoch > kMax || start > kMax || consumed > kMax) {
      return Fail(sluice::InvalidArgumentError(
          "sluice_stream_position_after: epoch, start and consumed must be at most 2^48"));
    }
    *position = static_cast<uint64_t>(s->ds->PositionAfter(
        static_cast<int64_t>(epoch), static_cast<int64_t>(start), consumed));
    return SLUICE_OK;
  });
}

sluice_status sluice_stream_counters(const sluice_stream* s, sluice_stream_stats* out) {
  return Guard("sluice_stream_counters", [&] {
    if (s == nullptr) return NullArgument("sluice_stream_counters", "s");
    if (out == nullptr) return NullArgument("sluice_stream_counters", "out");
    sluice::DatasetCounters c = s->ds->counters();
    out->bytes_downloaded = c.bytes_downloaded;
    out->shards_downloaded = c.shards_downloaded;
    out->shards_evicted = c.shards_evicted;
    out->cache_hits = c.cache_hits;
    out->consumer_wait_ns = c.consumer_wait_ns;
    out->shards_skipped = c.shards_skipped;
    out->samples_skipped = c.samples_skipped;
    return SLUICE_OK;
  });
}

sluice_status sluice_stream_metrics_json(sluice_stream* s, char** out_json) {
  return Guard("sluice_stream_metrics_json", [&] {
    if (s == nullptr) return NullArgument("sluice_stream_metrics_json", "s");
    if (out_json == nullptr) return NullArgument("sluice_stream_metrics_json", "out_json");
    *out_json = nullptr;
    char* text = CopyString(s->ds->MetricsReport());
    if (!text) return Fail(sluice::InternalError("sluice_stream_metrics_json: out of memory"));
    *out_json = text;
    return SLUICE_OK;
  });
}

sluice_status sluice_stream_metrics_prometheus(const sluice_stream* s, const char* process,
                                               char** out_text) {
  return Guard("sluice_stream_metrics_prometheus", [&] {
    if (s == nullptr) return NullArgument("sluice_stream_metrics_prometheus", "s");
    if (process == nullptr) return NullArgument("sluice_stream_metrics_prometheus", "process");
    if (out_text == nullptr) return NullArgument("sluice_stream_metrics_prometheus", "out_text");
    *out_text = nullptr;
    char* text = CopyString(sluice::MetricsPrometheus(s->ds->Metrics(), process));
    if (!text) {
      return Fail(sluice::InternalError("sluice_stream_metrics_prometheus: out of memory"));
    }
    *out_text = text;
    return SLUICE_OK;
  });
}

sluice_status sluice_stream_metrics_json_scope(sluice_stream* s, const char* scope,
                                               char** out_json) {
  return Guard("sluice_stream_metrics_json_scope", [&] {
    if (s == nullptr) return NullArgument("sluice_stream_metrics_json_scope", "s");
    if (scope == nullptr) return NullArgument("sluice_stream_metrics_json_scope", "scope");
    if (out_json == nullptr) return NullArgument("sluice_stream_metrics_json_scope", "out_json");
    *out_json = nullptr;
    auto parsed = sluice::ParseMetricsScope(scope);
    if (!parsed.ok()) return Fail(parsed.status());
    auto report = s->ds->MetricsReport(*parsed);
    if (!report.ok()) return Fail(report.status());
    char* text = CopyString(*report);
    if (!text) return Fail(sluice::InternalError("sluice_stream_metrics_json_scope: out of memory"));
    *out_json = text;
    return SLUICE_OK;
  });
}

sluice_status sluice_stream_metrics_prometheus_scope(sluice_stream* s, const char* scope,
                                                     const char* process, char** out_text) {
  return Guard("sluice_stream_metrics_prometheus_scope", [&] {
    const char* fn = "sluice_stream_metrics_prometheus_scope";
    if (s == nullptr) return NullArgument(fn, "s");
    if (scope == nullptr) return NullArgument(fn, "scope");
    if (process == nullptr) return NullArgument(fn, "process");
    if (out_text == nullptr) return NullArgument(fn, "out_text");
    *out_text = nullptr;
    auto parsed = sluice::ParseMetricsScope(scope);
    if (!parsed.ok()) return Fail(parsed.status());
    auto m = s->ds->Metrics(*parsed);
    if (!m.ok()) return Fail(m.status());
    char* text = CopyString(sluice::MetricsPrometheus(*m, process));
    if (!text) return Fail(sluice::InternalError(std::string(fn) + ": out of memory"));
    *out_text = text;
    return SLUICE_OK;
  });
}

sluice_status sluice_stream_publish_metrics(sluice_stream* s) {
  return Guard("sluice_stream_publish_metrics", [&] {
    if (s == nullptr) return NullArgument("sluice_stream_publish_metrics", "s");
    return Check(s->ds->PublishMetrics());
  });
}

}  // extern "C"
