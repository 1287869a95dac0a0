// UTF-8 validation with the rules of Python's strict "utf-8" codec (no
// overlong forms, no surrogates, nothing above U+10FFFF). Pure; thread-safe.
#pragma once

#include <cstddef>
#include <string_view>

namespace sluice {

// True when `text` is valid UTF-8; otherwise false and *bad_offset = the
// byte offset of the first invalid sequence.
bool IsValidUtf8(std::string_view text, size_t* bad_offset);

}  // namespace sluice
