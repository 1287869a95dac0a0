#include "engine/planner/mosaic_error.h"

namespace sluice::planner {

namespace {
// The exception types Mosaic's errors carry (the ones the engine raises).
constexpr std::string_view kTypes[] = {"ValueError", "TypeError", "RuntimeError", "KeyError"};
}  // namespace

Status MosaicError(std::string_view type, std::string_view message, StatusCode code) {
  std::string text(type);
  text += ": ";
  text += message;
  return Status(code, std::move(text));
}

bool IsMosaicError(const Status& status) {
  const std::string& m = status.message();
  for (std::string_view type : kTypes) {
    if (m.size() >= type.size() + 2 && m.compare(0, type.size(), type) == 0 &&
        m.compare(type.size(), 2, ": ") == 0) {
      return true;
    }
  }
  return false;
}

Status WithContextUnlessMosaic(const Status& status, std::string_view context) {
  return IsMosaicError(status) ? status : status.WithContext(context);
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
