#include "engine/dataset/order_record.h"

#include <optional>
#include <string_view>

#include "engine/dataset/dataset_config.h"
#include "formats/codec/hashes.h"
#include "formats/raw/file_listing.h"
#include "stores/http/url.h"

namespace sluice {
namespace {

constexpr std::string_view kWhere = "resume state: sluice_order";

JsonValue Int(int64_t v) { return JsonValue{v}; }
JsonValue Str(std::string s) { return JsonValue{std::move(s)}; }
template <typename T>
JsonValue Opt(const std::optional<T>& v) {
  if (!v) return JsonValue{nullptr};
  return JsonValue{*v};
}

// The strings of a record come from parsed JSON (UTF-8) or are hex, so
// DumpPyJson cannot fail on them; nothing else is put in one.
std::string Dump(const JsonValue& v, bool sort_keys) {
  auto text = DumpPyJson(v, sort_keys);
  return text.ok() ? *text : std::string("?");
}

JsonValue PartsJson(const OrderRecord& r) {
  JsonValue::Array worlds, skips;
  for (const WorldShape& w : r.worlds) {
    worlds.push_back(JsonValue{JsonValue::Object{{"nodes", Int(w.nodes)},
                                                 {"ranks_per_node", Int(w.ranks_per_node)}}});
  }
  for (const SkipRange& s : r.skips) {
    skips.push_back(JsonValue{JsonValue::Array{Int(s.epoch), Int(s.begin), Int(s.end)}});
  }
  JsonValue::Object parts{{"streams", JsonValue{r.streams}},
                          {"sampling", JsonValue{r.sampling}},
                          {"worlds", JsonValue{std::move(worlds)}},
                          {"skips", JsonValue{std::move(skips)}}};
  if (!r.mixture_past.empty()) parts.emplace_back("mixture_past", JsonValue{r.mixture_past});
  return JsonValue{std::move(parts)};
}

std::string Digest(const JsonValue& parts) {
  auto hex = HashHex("xxh64", Dump(parts, /*sort_keys=*/true));
  return hex.ok() ? *hex : std::string();
}

Status Bad(std::string what) { return InvalidArgumentError(std::string(kWhere) + ": " + what); }

Result<int64_t> NonNegative(const JsonValue* v, const std::string& field) {
  const int64_t* i = v ? std::get_if<int64_t>(&v->v) : nullptr;
  if (!i || *i < 0) return Bad("'" + field + "' must be a non-negative integer");
  return *i;
}

JsonValue MixturePoints(const planner::MixtureSchedule& m) {
  JsonValue::Array points;
  for (const planner::MixturePoint& p : m.points) {
    JsonValue::Array weights;
    for (double w : p.weights) {
      weights.emplace_back();
      weights.back().v = w;  // (JsonValue{w} trips GCC 12's maybe-uninitialized)
    }
    points.push_back(JsonValue{JsonValue::Array{Int(p.at), JsonValue{std::move(weights)}}});
  }
  return JsonValue{std::move(points)};
}

JsonValue InterpolationName(const planner::MixtureSchedule& m) {
  return Str(m.interpolation == planner::MixtureInterpolation::kLinear ? "linear" : "step");
}

// A schedule recorded as "mixture" and "mixture_interpolation" beside it.
Result<planner::MixtureSchedule> RecordedSchedule(const JsonValue& holder, const std::string& where) {
  const JsonValue* points = JsonMember(holder, "mixture");
  const JsonValue* interpolation = JsonMember(holder, "mixture_interpolation");
  const std::string* name = interpolation ? std::get_if<std::string>(&interpolation->v) : nullptr;
  if (!points || !name) return Bad("'" + where + "' must hold 'mixture' and 'mixture_interpolation'");
  auto schedule = ParseMixturePoints(*points, where + ".mixture");
  if (!schedule.ok()) return schedule.status().WithContext(kWhere);
  auto parsed = planner::ParseMixtureInterpolation(*name);
  if (!parsed.ok()) return Bad("'" + where + ".mixture_interpolation' must be 'step' or 'linear'");
  schedule->interpolation = *parsed;
  return schedule;
}

bool IsMixtureKey(const std::string& k) { return k == "mixture" || k == "mixture_interpolation"; }

JsonValue::Object WithoutMixture(const JsonValue::Object& sampling) {
  JsonValue::Object out;
  for (const auto& [k, v] : sampling) {
    if (!IsMixtureKey(k)) out.emplace_back(k, v);
  }
  return out;
}

JsonValue::Object MixtureOnly(const JsonValue::Object& sampling) {
  JsonValue::Object out;
  for (const auto& [k, v] : sampling) {
    if (IsMixtureKey(k)) out.emplace_back(k, v);
  }
  return out;
}

std::string Describe(const WorldShape& w) {
  return std::to_string(w.nodes) + " nodes x " + std::to_string(w.ranks_per_node) +
         " ranks per node";
}

// Every key of `saved` or `now` whose values differ, as "<label> <key>
// changed: saved <old>, now <new>" ("absent" for a missing key).
void CompareObjects(const JsonValue& saved, const JsonValue& now, const std::string& label,
                    std::vector<std::string>* out) {
  auto keys_of = [](const JsonValue& v) {
    std::vector<std::string> keys;
    if (const auto* o = std::get_if<JsonValue::Object>(&v.v)) {
      for (const auto& [k, value] : *o) keys.push_back(k);
    }
    return keys;
  };
  std::vector<std::string> keys = keys_of(saved);
  for (const std::string& k : keys_of(now)) {
    if (!JsonMember(saved, k)) keys.push_back(k);
  }
  for (const std::string& k : keys) {
    const JsonValue* a = JsonMember(saved, k);
    const JsonValue* b = JsonMember(now, k);
    std::string old_text = a ? Dump(*a, true) : "absent";
    std::string new_text = b ? Dump(*b, true) : "absent";
    if (old_text != new_text) {
      out->push_back(label + " " + k + " changed: saved " + old_text + ", now " + new_text);
    }
  }
}

}  // namespace

std::string IndexFingerprint(const ShardTable& index) {
  ListingFingerprintBuilder files;
  std::string path;
  for (size_t i = 0; i < index.size(); ++i) {
    const ShardRef e = index.ref(i);
    if (e.row_group && !e.piece) {
      path.assign(e.raw_data.basename);
      path += "@" + std::to_string(*e.row_group);
      files.Add(path, e.raw_data.bytes);
    } else {
      files.Add(e.raw_data.basename, e.raw_data.bytes);
    }
  }
  return files.Finish();
}

JsonValue StreamOrderPart(const StreamOptions& stream, const ShardTable& index,
                          const std::string& fingerprint) {
  uint64_t samples = 0;
  for (size_t i = 0; i < index.size(); ++i) samples += index.samples(i);
  const planner::StreamWeight& w = stream.weight;
  return JsonValue{JsonValue::Object{
      {"remote", stream.has_remote() ? Str(RedactUrl(stream.remote)) : JsonValue{nullptr}},
      {"split", stream.split.empty() ? JsonValue{nullptr} : Str(stream.split)},
      {"proportion", Opt(w.proportion)},
      {"repeat", Opt(w.repeat)},
      {"choose", Opt(w.choose)},
      {"shards", Int(static_cast<int64_t>(index.size()))},
      // At most 2^48 (StreamingDataset counts them).
      {"samples", Int(static_cast<int64_t>(samples))},
      {"index", Str(fingerprint)}}};
}

JsonValue::Object SamplingOrderPart(const DatasetOptions& options, uint64_t shuffle_seed,
                                    int64_t num_canonical_nodes) {
  const planner::PlanConfig& c = options.plan;
  JsonValue::Object part{
      {"epoch_size", Opt(c.epoch_size)},
      {"sampling_method", Str(std::string(planner::SamplingMethodName(c.sampling_method)))},
      {"sampling_granularity", Int(c.sampling_granularity)},
      {"partition_algo", Str(std::string(planner::PartitionAlgoName(c.partition_algo)))},
      {"shuffle", JsonValue{c.shuffle}},
      {"shuffle_algo", Str(std::string(planner::ShuffleAlgoName(c.shuffle_algo)))},
      // Mosaic's states hold the seed as a (non-negative) Python int.
      {"shuffle_seed", Int(static_cast<int64_t>(shuffle_seed))},
      {"shuffle_block_size", Opt(c.shuffle_block_size)},
      {"batch_size", Opt(c.batch_size)},
      {"batching_method", Str(std::string(planner::BatchingMethodName(c.batching_method)))},
      {"num_canonical_nodes", Int(num_canonical_nodes)},
      {"replication", Opt(c.replication)}};
  // Only when set, so that the records (and digests) of plans without a
  // schedule stay as they were.
  if (c.mixture) {
    part.emplace_back("mixture", MixturePoints(*c.mixture));
    part.emplace_back("mixture_interpolation", InterpolationName(*c.mixture));
    SetRecordedMixtureRule(&part, c.mixture->rule);
  }
  return part;
}

Result<std::optional<planner::MixtureRule>> RecordedMixtureRule(const OrderRecord& saved) {
  const JsonValue sampling{saved.sampling};
  if (!JsonMember(sampling, "mixture")) return std::optional<planner::MixtureRule>();
  const JsonValue* rule = JsonMember(sampling, "mixture_rule");
  if (!rule) return std::optional<planner::MixtureRule>(planner::MixtureRule::kDeficit);
  const std::string* name = std::get_if<std::string>(&rule->v);
  if (name) {
    auto parsed = planner::ParseMixtureRule(*name);
    if (parsed.ok()) return std::optional<planner::MixtureRule>(*parsed);
  }
  return Bad("'parts.sampling.mixture_rule' must be 'tijdeman' or 'deficit' (the rules this Sluice draws "
             "schedules by)");
}

void SetRecordedMixtureRule(JsonValue::Object* sampling, planner::MixtureRule rule) {
  bool schedule = false;
  for (auto it = sampling->begin(); it != sampling->end();) {
    schedule = schedule || it->first == "mixture";
    it = it->first == "mixture_rule" ? sampling->erase(it) : it + 1;
  }
  if (schedule && rule != planner::MixtureRule::kDeficit) {
    sampling->emplace_back("mixture_rule", Str(std::string(planner::MixtureRuleName(rule))));
  }
}

JsonValue::Array MixturePastOrderPart(const planner::PlanConfig& plan, int64_t epoch) {
  JsonValue::Array out;
  for (const planner::PlanConfig::MixtureChange& change : plan.mixture_past) {
    if (change.epoch != epoch) continue;
    out.push_back(JsonValue{JsonValue::Object{{"epoch", Int(change.epoch)},
                                              {"until", Int(change.until)},
                                              {"mixture", MixturePoints(change.schedule)},
                                              {"mixture_interpolation", InterpolationName(change.schedule)}}});
  }
  return out;
}

Result<std::vector<planner::PlanConfig::MixtureChange>> ResumedMixturePast(const OrderRecord& saved,
                                                                          const OrderRecord& now, int64_t epoch,
                                                                          int64_t sample_in_epoch) {
  std::vector<planner::PlanConfig::MixtureChange> out;
  int64_t last = 0;
  for (size_t i = 0; i < saved.mixture_past.size(); ++i) {
    const std::string where = "parts.mixture_past[" + std::to_string(i) + "]";
    const JsonValue& entry = saved.mixture_past[i];
    planner::PlanConfig::MixtureChange change;
    SLUICE_ASSIGN_OR_RETURN(change.epoch, NonNegative(JsonMember(entry, "epoch"), where + ".epoch"));
    SLUICE_ASSIGN_OR_RETURN(change.until, NonNegative(JsonMember(entry, "until"), where + ".until"));
    SLUICE_ASSIGN_OR_RETURN(change.schedule, RecordedSchedule(entry, where));
    if (change.epoch != epoch) continue;
    last = change.until;
    out.push_back(std::move(change));
  }
  const JsonValue::Object was = MixtureOnly(saved.sampling), is = MixtureOnly(now.sampling);
  const bool changed = !was.empty() && !is.empty() &&
                       Dump(JsonValue{was}, true) != Dump(JsonValue{is}, true);
  if (changed && sample_in_epoch > last) {
    planner::PlanConfig::MixtureChange change{epoch, sample_in_epoch, {}};
    SLUICE_ASSIGN_OR_RETURN(change.schedule, RecordedSchedule(JsonValue{saved.sampling}, "parts.sampling"));
    out.push_back(std::move(change));
  }
  return out;
}

JsonValue OrderRecordJson(const OrderRecord& record) {
  JsonValue parts = PartsJson(record);
  std::string digest = Digest(parts);
  return JsonValue{JsonValue::Object{{"version", Int(kOrderRecordVersion)},
                                     {"digest", Str(std::move(digest))},
                                     {"parts", std::move(parts)}}};
}

Result<OrderRecord> ParseOrderRecord(const JsonValue& value) {
  if (!std::holds_alternative<JsonValue::Object>(value.v)) return Bad("must be a JSON object");
  const JsonValue* version = JsonMember(value, "version");
  const int64_t* v = version ? std::get_if<int64_t>(&version->v) : nullptr;
  if (!v) return Bad("'version' must be an integer");
  if (*v != kOrderRecordVersion) {
    return Bad("version " + std::to_string(*v) + " is not one this Sluice reads (" +
               std::to_string(kOrderRecordVersion) + ")");
  }
  const JsonValue* digest = JsonMember(value, "digest");
  const std::string* digest_text = digest ? std::get_if<std::string>(&digest->v) : nullptr;
  if (!digest_text) return Bad("'digest' must be a string");
  const JsonValue* parts = JsonMember(value, "parts");
  if (!parts || !std::holds_alternative<JsonValue::Object>(parts->v)) {
    return Bad("'parts' must be a JSON object");
  }
  OrderRecord r;
  const JsonValue* streams = JsonMember(*parts, "streams");
  const auto* stream_list = streams ? std::get_if<JsonValue::Array>(&streams->v) : nullptr;
  if (!stream_list) return Bad("'parts.streams' must be a list");
  for (const JsonValue& s : *stream_list) {
    if (!std::holds_alternative<JsonValue::Object>(s.v)) {
      return Bad("'parts.streams' must hold JSON objects");
    }
  }
  r.streams = *stream_list;
  const JsonValue* sampling = JsonMember(*parts, "sampling");
  const auto* sampling_obj = sampling ? std::get_if<JsonValue::Object>(&sampling->v) : nullptr;
  if (!sampling_obj) return Bad("'parts.sampling' must be a JSON object");
  r.sampling = *sampling_obj;
  const JsonValue* worlds = JsonMember(*parts, "worlds");
  const auto* world_list = worlds ? std::get_if<JsonValue::Array>(&worlds->v) : nullptr;
  if (!world_list || world_list->empty()) return Bad("'parts.worlds' must be a non-empty list");
  for (const JsonValue& w : *world_list) {
    WorldShape shape;
    SLUICE_ASSIGN_OR_RETURN(shape.nodes,
                            NonNegative(JsonMember(w, "nodes"), "parts.worlds[].nodes"));
    SLUICE_ASSIGN_OR_RETURN(shape.ranks_per_node, NonNegative(JsonMember(w, "ranks_per_node"),
                                                              "parts.worlds[].ranks_per_node"));
    if (shape.nodes < 1 || shape.ranks_per_node < 1) {
      return Bad("'parts.worlds' holds a world without nodes or ranks");
    }
    r.worlds.push_back(shape);
  }
  const JsonValue* skips = JsonMember(*parts, "skips");
  const auto* skip_list = skips ? std::get_if<JsonValue::Array>(&skips->v) : nullptr;
  if (!skip_list) return Bad("'parts.skips' must be a list");
  for (const JsonValue& s : *skip_list) {
    const auto* triple = std::get_if<JsonValue::Array>(&s.v);
    if (!triple || triple->size() != 3) return Bad("'parts.skips' must hold [epoch, begin, end]");
    SkipRange range;
    SLUICE_ASSIGN_OR_RETURN(range.epoch, NonNegative(&(*triple)[0], "parts.skips[][0]"));
    SLUICE_ASSIGN_OR_RETURN(range.begin, NonNegative(&(*triple)[1], "parts.skips[][1]"));
    SLUICE_ASSIGN_OR_RETURN(range.end, NonNegative(&(*triple)[2], "parts.skips[][2]"));
    if (range.end <= range.begin) return Bad("'parts.skips' holds an empty range");
    r.skips.push_back(range);
  }
  if (const JsonValue* past = JsonMember(*parts, "mixture_past")) {
    const auto* past_list = std::get_if<JsonValue::Array>(&past->v);
    if (!past_list) return Bad("'parts.mixture_past' must be a list");
    for (const JsonValue& entry : *past_list) {
      if (!std::holds_alternative<JsonValue::Object>(entry.v)) {
        return Bad("'parts.mixture_past' must hold JSON objects");
      }
    }
    r.mixture_past = *past_list;
  }
  const std::string expected = Digest(PartsJson(r));
  if (*digest_text != expected) {
    return Bad("its digest " + Dump(*digest, false) + " does not match its parts (\"" + expected +
               "\"): the state was edited or corrupted");
  }
  return r;
}

Result<AdaptParts> ParseAdaptParts(const std::vector<std::string>& names) {
  AdaptParts a;
  for (const std::string& n : names) {
    if (n == "world") {
      a.world = true;
    } else if (n == "streams") {
      a.streams = true;
    } else if (n == "sampling") {
      a.sampling = true;
    } else if (n == "schedule") {
      a.schedule = true;
    } else {
      return InvalidArgumentError("adapt: unknown part '" + n +
                                  "' (the parts are 'world', 'streams', 'sampling', 'schedule')");
    }
  }
  return a;
}

Status CompareOrder(const OrderRecord& saved, const OrderRecord& now, const AdaptParts& adapt,
                    const std::vector<std::string>& stream_names) {
  std::vector<std::string> diffs;
  bool streams_differ = false, sampling_differs = false, world_differs = false, schedule_differs = false;
  if (!adapt.streams) {
    const size_t before = diffs.size();
    if (saved.streams.size() != now.streams.size()) {
      diffs.push_back("streams changed: saved " + std::to_string(saved.streams.size()) +
                      " streams, now " + std::to_string(now.streams.size()));
    } else {
      for (size_t i = 0; i < now.streams.size(); ++i) {
        std::string label = "stream " + std::to_string(i);
        if (i < stream_names.size()) label += " (" + stream_names[i] + ")";
        CompareObjects(saved.streams[i], now.streams[i], label, &diffs);
      }
    }
    streams_differ = diffs.size() > before;
  }
  // With a schedule on both sides, a change of schedule is its own part.
  const bool schedules = !MixtureOnly(saved.sampling).empty() && !MixtureOnly(now.sampling).empty();
  if (!adapt.sampling) {
    size_t before = diffs.size();
    if (!schedules) {
      CompareObjects(JsonValue{saved.sampling}, JsonValue{now.sampling}, "sampling", &diffs);
      sampling_differs = diffs.size() > before;
    } else {
      CompareObjects(JsonValue{WithoutMixture(saved.sampling)}, JsonValue{WithoutMixture(now.sampling)},
                     "sampling", &diffs);
      sampling_differs = diffs.size() > before;
      before = diffs.size();
      if (!adapt.schedule) {
        CompareObjects(JsonValue{MixtureOnly(saved.sampling)}, JsonValue{MixtureOnly(now.sampling)}, "sampling",
                       &diffs);
      }
      schedule_differs = diffs.size() > before;
    }
  }
  if (!adapt.world && !saved.worlds.empty() && !now.worlds.empty() &&
      !(saved.worlds.back() == now.worlds.back())) {
    diffs.push_back("world changed: saved " + Describe(saved.worlds.back()) + ", now " +
                    Describe(now.worlds.back()));
    world_differs = true;
  }
  if (diffs.empty()) return Status::Ok();
  std::string text = "resume state does not match this dataset: ";
  for (size_t i = 0; i < diffs.size(); ++i) text += (i ? "; " : "") + diffs[i];
  std::string parts;
  for (auto [differs, name] : {std::pair{world_differs, "\"world\""},
                               std::pair{streams_differ, "\"streams\""},
                               std::pair{sampling_differs, "\"sampling\""},
                               std::pair{schedule_differs, "\"schedule\""}}) {
    if (differs) parts += (parts.empty() ? "" : ", ") + std::string(name);
  }
  return InvalidArgumentError(text + " (to resume anyway, adapt " + parts + ")");
}

}  // namespace sluice
