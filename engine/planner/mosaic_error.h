// Errors that Mosaic raises, carried as Status(kInvalidArgument) whose
// message starts with Mosaic's Python exception type: "ValueError: ...".
// The C ABI / CLI split it back into {"type", "message"}.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace sluice::planner {

// Status(code, "<type>: <message>"), e.g. type "ValueError". The type
// stays at the very start of the message, where bindings read it: code that
// passes such an error on adds no context (see WithContextUnlessMosaic).
Status MosaicError(std::string_view type, std::string_view message,
                   StatusCode code = StatusCode::kInvalidArgument);
inline Status MosaicValueError(std::string_view message) {
  return MosaicError("ValueError", message);
}

// KeyError for an unknown registry name: message "'name'" as Python prints it.
Status MosaicKeyError(std::string_view name);

// Whether `status` is one of Mosaic's errors: its message starts with one
// of the Python exception types MosaicError is given.
bool IsMosaicError(const Status& status);
// status.WithContext(context), except for Mosaic's errors, which keep the
// type at the start of the message (their text names what they are about).
Status WithContextUnlessMosaic(const Status& status, std::string_view context);

struct SplitError {
  std::string type;     // "ValueError", "KeyError", ...; "Error" if unknown
  std::string message;  // the text after "<type>: "
};
// Splits a planner Status message back into Mosaic's type and message.
SplitError SplitMosaicError(const Status& status);

}  // namespace sluice::planner
