#include "engine/dataset/resume_state.h"

#include "formats/json/py_json.h"

namespace sluice {

std::string ResumeStateToJson(const ResumeState& s) {
  std::string out = "{\"epoch\": " + std::to_string(s.epoch) +
                    ", \"sample_in_epoch\": " + std::to_string(s.sample_in_epoch) +
                    ", \"num_canonical_nodes\": " + std::to_string(s.num_canonical_nodes) +
                    ", \"shuffle_seed\": " + std::to_string(s.shuffle_seed) +
                    ", \"initial_physical_nodes\": " + std::to_string(s.initial_physical_nodes);
  if (s.order) {
    // A record's strings are UTF-8 (parsed JSON) or hex: DumpPyJson takes them.
    auto order = DumpPyJson(OrderRecordJson(*s.order), /*sort_keys=*/false);
    out += ", \"sluice_order\": " + (order.ok() ? *order : std::string("null"));
  }
  return out + "}";
}

Result<ResumeState> ResumeStateFromJson(std::string_view json) {
  auto parsed = ParsePyJson(json);
  if (!parsed.ok()) return InvalidArgumentError("resume state: " + parsed.status().message());
  const JsonValue::Object* obj = std::get_if<JsonValue::Object>(&parsed->v);
  if (!obj) return InvalidArgumentError("resume state: must be a JSON object");
  auto get = [&](std::string_view key, bool required, int64_t* out) -> Status {
    const JsonValue* v = JsonMember(*parsed, key);
    if (!v || std::holds_alternative<std::nullptr_t>(v->v)) {
      if (!required) return Status::Ok();
      return InvalidArgumentError("resume state: field '" + std::string(key) + "' is missing");
    }
    const int64_t* i = std::get_if<int64_t>(&v->v);
    if (!i || *i < 0) {
      return InvalidArgumentError("resume state: field '" + std::string(key) +
                                  "' must be a non-negative integer");
    }
    *out = *i;
    return Status::Ok();
  };
  ResumeState s;
  int64_t seed = 0;
  SLUICE_RETURN_IF_ERROR(get("epoch", true, &s.epoch));
  SLUICE_RETURN_IF_ERROR(get("sample_in_epoch", true, &s.sample_in_epoch));
  SLUICE_RETURN_IF_ERROR(get("num_canonical_nodes", true, &s.num_canonical_nodes));
  SLUICE_RETURN_IF_ERROR(get("shuffle_seed", true, &seed));
  SLUICE_RETURN_IF_ERROR(get("initial_physical_nodes", false, &s.initial_physical_nodes));
  s.shuffle_seed = static_cast<uint64_t>(seed);
  const JsonValue* order = JsonMember(*parsed, "sluice_order");
  if (order && !std::holds_alternative<std::nullptr_t>(order->v)) {
    SLUICE_ASSIGN_OR_RETURN(s.order, ParseOrderRecord(*order));
  }
  return s;
}

namespace {

Status ReadRanges(const JsonValue* v, const char* key, StepRanges* out) {
  if (!v || std::holds_alternative<std::nullptr_t>(v->v)) return Status::Ok();
  const auto* list = std::get_if<JsonValue::Array>(&v->v);
  auto bad = [&] {
    return InvalidArgumentError(std::string("resume options: '") + key +
                                "' must be a list of [first, last] integer pairs");
  };
  if (!list) return bad();
  for (const JsonValue& pair : *list) {
    const auto* two = std::get_if<JsonValue::Array>(&pair.v);
    if (!two || two->size() != 2) return bad();
    const int64_t* a = std::get_if<int64_t>(&(*two)[0].v);
    const int64_t* b = std::get_if<int64_t>(&(*two)[1].v);
    if (!a || !b) return bad();
    out->emplace_back(*a, *b);
  }
  return Status::Ok();
}

}  // namespace

Result<ResumeOptions> ResumeOptionsFromJson(std::string_view json) {
  auto parsed = ParsePyJson(json);
  if (!parsed.ok()) return InvalidArgumentError("resume options: " + parsed.status().message());
  const JsonValue::Object* obj = std::get_if<JsonValue::Object>(&parsed->v);
  if (!obj) return InvalidArgumentError("resume options: must be a JSON object");
  for (const auto& [key, value] : *obj) {
    if (key != "adapt" && key != "skip_steps" && key != "skip_samples" &&
        key != "skip_sample_ids" && key != "steps_of") {
      return InvalidArgumentError(
          "resume options: unknown key '" + key +
          "' (the keys are adapt, skip_steps, skip_samples, skip_sample_ids, steps_of)");
    }
  }
  ResumeOptions o;
  if (const JsonValue* adapt = JsonMember(*parsed, "adapt");
      adapt && !std::holds_alternative<std::nullptr_t>(adapt->v)) {
    const auto* list = std::get_if<JsonValue::Array>(&adapt->v);
    if (!list) return InvalidArgumentError("resume options: 'adapt' must be a list of part names");
    for (const JsonValue& name : *list) {
      const auto* text = std::get_if<std::string>(&name.v);
      if (!text) {
        return InvalidArgumentError("resume options: 'adapt' must be a list of part names");
      }
      o.adapt.push_back(*text);
    }
  }
  SLUICE_RETURN_IF_ERROR(
      ReadRanges(JsonMember(*parsed, "skip_steps"), "skip_steps", &o.skip_steps));
  SLUICE_RETURN_IF_ERROR(
      ReadRanges(JsonMember(*parsed, "skip_samples"), "skip_samples", &o.skip_samples));
  if (const JsonValue* ids = JsonMember(*parsed, "skip_sample_ids");
      ids && !std::holds_alternative<std::nullptr_t>(ids->v)) {
    const auto* list = std::get_if<JsonValue::Array>(&ids->v);
    auto bad = [] {
      return InvalidArgumentError(
          "resume options: 'skip_sample_ids' must be a list of sample ids (integers >= 0)");
    };
    if (!list) return bad();
    for (const JsonValue& id : *list) {
      const int64_t* v = std::get_if<int64_t>(&id.v);
      if (!v || *v < 0) return bad();
      o.skip_sample_ids.push_back(*v);
    }
  }
  if (const JsonValue* of = JsonMember(*parsed, "steps_of");
      of && !std::holds_alternative<std::nullptr_t>(of->v)) {
    const JsonValue* batch = JsonMember(*of, "batch_size");
    const JsonValue* ranks = JsonMember(*of, "ranks");
    const int64_t* b = batch ? std::get_if<int64_t>(&batch->v) : nullptr;
    const int64_t* r = ranks ? std::get_if<int64_t>(&ranks->v) : nullptr;
    if (!b || !r || *b < 1 || *r < 1 || *b > (int64_t{1} << 30) || *r > (int64_t{1} << 20)) {
      return InvalidArgumentError(
          "resume options: 'steps_of' must be {\"batch_size\": 1..2^30, \"ranks\": 1..2^20}");
    }
    if (!o.skip_steps.empty() || !o.skip_samples.empty() || !o.skip_sample_ids.empty()) {
      return InvalidArgumentError(
          "resume options: no steps can be skipped with 'steps_of' (the state's skips are "
          "another world's steps; new ones would be this world's)");
    }
    o.steps_of = std::make_pair(*b, *r);
  }
  return o;
}

}  // namespace sluice
