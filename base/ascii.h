// ASCII case folding for protocol text (header names, URL schemes, hosts),
// independent of the C locale. Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace sluice {

// `s` with A-Z folded to a-z; other bytes unchanged.
std::string AsciiToLower(std::string_view s);

// Equal under AsciiToLower.
bool AsciiEqualsIgnoreCase(std::string_view a, std::string_view b);

// True when `s` begins with `prefix` under AsciiToLower.
bool AsciiStartsWithIgnoreCase(std::string_view s, std::string_view prefix);

}  // namespace sluice
