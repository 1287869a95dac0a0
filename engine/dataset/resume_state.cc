#include "engine/dataset/resume_state.h"

#include "formats/json/py_json.h"

namespace sluice {

std::string ResumeStateToJson(const ResumeState& s) {
  return "{\"epoch\": " + std::to_string(s.epoch) +
         ", \"sample_in_epoch\": " + std::to_string(s.sample_in_epoch) +
         ", \"num_canonical_nodes\": " + std::to_string(s.num_canonical_nodes) +
         ", \"shuffle_seed\": " + std::to_string(s.shuffle_seed) +
         ", \"initial_physical_nodes\": " + std::to_string(s.initial_physical_nodes) + "}";
}

Result<ResumeState> ResumeStateFromJson(std::string_view json) {
  auto parsed = ParsePyJson(json);
  if (!parsed.ok()) return InvalidArgumentError("resume state: " + parsed.status().message());
  const JsonValue::Object* obj = std::get_if<JsonValue::Object>(&parsed->v);
  if (!obj) return InvalidArgumentError("resume state: must be a JSON object");
  auto find = [&](std::string_view key) -> const JsonValue* {
    for (const auto& [k, v] : *obj) {
      if (k == key) return &v;
    }
    return nullptr;
  };
  auto get = [&](std::string_view key, bool required, int64_t* out) -> Status {
    const JsonValue* v = find(key);
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
  return s;
}

}  // namespace sluice
