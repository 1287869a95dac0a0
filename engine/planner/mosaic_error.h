// Errors that Mosaic raises, carried as Status(kInvalidArgument) whose
// message starts with Mosaic's Python exception type: "ValueError: ...".
// The C ABI / CLI split it back into {"type", "message"}.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace sluice::planner {

// Status(kInvalidArgument, "<type>: <message>"), e.g. type "ValueError".
Status MosaicError(std::string_view type, std::string_view message);
inline Status MosaicValueError(std::string_view message) {
  return MosaicError("ValueError", message);
}

// KeyError for an unknown registry name: message "'name'" as Python prints it.
Status MosaicKeyError(std::string_view name);

struct SplitError {
  std::string type;     // "ValueError", "KeyError", ...; "Error" if unknown
  std::string message;  // the text after "<type>: "
};
// Splits a planner Status message back into Mosaic's type and message.
SplitError SplitMosaicError(const Status& status);

}  // namespace sluice::planner
