#include "engine/planner/mosaic_error.h"

namespace sluice::planner {

Status MosaicError(std::string_view type, std::string_view message) {
  std::string text(type);
  text += ": ";
  text += message;
  return InvalidArgumentError(std::move(text));
}

Status MosaicKeyError(std::string_view name) {
  std::string quoted;
  quoted.reserve(name.size() + 2);
  quoted.push_back('\'');
  quoted.append(name);
  quoted.push_back('\'');
  return MosaicError("KeyError", quoted);
}

SplitError SplitMosaicError(const Status& status) {
  const std::string& m = status.message();
  size_t colon = m.find(": ");
  if (colon != std::string::npos && colon > 0) {
    bool word = true;
    for (size_t i = 0; i < colon; ++i) {
      char c = m[i];
      if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) word = false;
    }
    if (word) return {m.substr(0, colon), m.substr(colon + 2)};
  }
  return {"Error", m};
}

}  // namespace sluice::planner
