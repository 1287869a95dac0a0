// Finds where each top-level member's value text lies inside a JSON object
// text, without decoding the values: JSONL samples hand out per-column views
// into the stored line this way.
// Pure function; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace sluice {

// For `{"a": 1, "b": [2, 3]}` yields {("a", "1"), ("b", "[2, 3]")}: decoded
// keys and views of the value texts (into `text`). Trailing whitespace and
// newlines after the object are allowed. Malformed text -> kCorrupt naming
// `what` and the byte offset.
Result<std::vector<std::pair<std::string, std::string_view>>> JsonObjectMemberSpans(
    std::string_view text, std::string_view what);

}  // namespace sluice
