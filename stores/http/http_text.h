// Small text helpers of the HTTP client's messages. Internal to stores/http.
#pragma once

#include <charconv>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sluice::http_detail {

using Clock = std::chrono::steady_clock;

// "1500 ms".
inline std::string Ms(std::chrono::milliseconds d) { return std::to_string(d.count()) + " ms"; }

// A header field's digits as a number: plain decimal, no sign, at most 19
// digits (so it fits); nullopt otherwise.
inline std::optional<uint64_t> ParseDecimal(std::string_view s) {
  if (s.empty() || s.size() > 19) return std::nullopt;
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

// `s` without the optional whitespace (spaces and tabs) HTTP allows around
// a field value.
inline std::string_view TrimOws(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace sluice::http_detail
