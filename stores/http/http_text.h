// Small text helpers of the HTTP client's messages. Internal to stores/http.
#pragma once

#include <chrono>
#include <string>

namespace sluice::http_detail {

using Clock = std::chrono::steady_clock;

// "1500 ms".
inline std::string Ms(std::chrono::milliseconds d) { return std::to_string(d.count()) + " ms"; }

}  // namespace sluice::http_detail
