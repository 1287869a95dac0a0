// Where a 2xx response's body sits in the object the request is fetching:
// which leading bytes to skip (a server that ignored Range), how many to
// deliver, and whether the response agrees with what earlier attempts saw
// (resumption) and with the object size the caller expects.
//
// Internal to stores/http. Pure logic over a Transfer; no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "base/status.h"
#include "stores/http/http_transfer.h"

namespace sluice::http_detail {

struct BodyPlacement {
  uint64_t skip = 0;              // body bytes before the wanted span
  std::optional<uint64_t> limit;  // bytes to deliver; nullopt: to the end
  // Bytes past `limit` are an error (the object is larger than expected),
  // not trimmed: set when only HttpRequest::expected_object_size bounds it.
  bool strict_limit = false;
};

// The largest object a response may state (Content-Length, or a
// Content-Range's total or end): 256 TiB, above any store's largest object
// (S3 and GCS 5 TiB, an Azure block blob 190.7 TiB). A larger one is a
// broken or hostile server, refused before any span is computed from it.
inline constexpr uint64_t kMaxStatedObjectBytes = uint64_t{1} << 48;

// The facts of a 2xx response head that placement needs.
struct ResponseHead {
  int status = 200;
  std::string_view status_line;            // "HTTP 206 Partial Content"
  std::string_view content_range;          // empty when absent
  std::optional<uint64_t> content_length;  // of this body on the wire
  bool sent_if_range = false;              // the request carried If-Range
};

// Places `head`'s body in `t` (a GET or HEAD after one or more attempts;
// a 200 to a ranged GET per t.request.if_range_ignored, kHeadOnly placed as
// kTrim since the caller stops before the body):
// sets t.abs_first/abs_last on the first response and, on the first, the
// response's object_size. Errors (every one final, not retried):
// kCorrupt for a malformed or inconsistent Content-Range / Content-Length
// or one stating more than kMaxStatedObjectBytes;
// kUnavailable when the object changed under a resumed download; kCorrupt
// naming both sizes when the object's size is not
// t.request.expected_object_size ("the remote changed").
Result<BodyPlacement> PlaceBody(Transfer& t, const ResponseHead& head);

}  // namespace sluice::http_detail
