// Timestamps in the forms request signers put on the wire. Pure functions;
// thread-safe. Times are Unix seconds (UTC); only years 1970..9999 are
// representable, which IsSigningTimeValid checks.
#pragma once

#include <cstdint>
#include <string>

namespace sluice {

// Largest accepted time: 9999-12-31T23:59:59Z.
inline constexpr int64_t kMaxSigningTime = 253402300799;

// True when 0 <= unix_seconds <= kMaxSigningTime.
bool IsSigningTimeValid(int64_t unix_seconds);

// ISO 8601 basic format used by SigV4 (X-Amz-Date): "20150830T123600Z".
// Requires IsSigningTimeValid(unix_seconds).
std::string FormatAmzDate(int64_t unix_seconds);

// IMF-fixdate (RFC 9110 section 5.6.7) used by Azure's x-ms-date:
// "Sun, 30 Aug 2015 12:36:00 GMT". Requires IsSigningTimeValid(unix_seconds).
std::string FormatHttpDate(int64_t unix_seconds);

}  // namespace sluice
