#include "stores/http/body_placement.h"

#include <string>

#include "stores/http/content_range.h"

namespace sluice::http_detail {

namespace {

// The object's size as this response states it, if it does.
std::optional<uint64_t> StatedObjectSize(const ResponseHead& head,
                                         const std::optional<ContentRange>& cr) {
  if (head.status == 206) return cr ? cr->total : std::nullopt;
  if (head.status == 200) return head.content_length;
  return std::nullopt;
}

Status RemoteChanged(const Transfer& t, uint64_t stated, uint64_t expected) {
  return ObjectSizeChangedError(t.What(), stated, expected);
}

Result<BodyPlacement> PlacePartial(Transfer& t, const ResponseHead& head, const ContentRange& cr) {
  BodyPlacement out;
  const std::optional<ByteRange>& range = t.request.range;
  // A signed range is asked again whole (HttpRequest::range_signed): the
  // bytes delivered before are skipped in this body.
  const bool again = t.request.range_signed && t.abs_first;
  uint64_t want_first = again        ? *t.abs_first
                        : t.abs_first ? *t.abs_first + t.delivered
                                      : (range && !range->is_suffix ? range->first : cr.first);
  if (cr.first != want_first) {
    return CorruptError(t.What() + ": Content-Range '" + std::string(head.content_range) +
                        "' does not start at the requested byte " + std::to_string(want_first));
  }
  if (!t.abs_first) {
    t.abs_first = cr.first;
    t.abs_last = cr.last;
  }
  if (head.content_length && *head.content_length != cr.last - cr.first + 1) {
    return CorruptError(t.What() + ": Content-Length " + std::to_string(*head.content_length) +
                        " disagrees with Content-Range '" + std::string(head.content_range) +
                        "'");
  }
  if (again) {
    if (cr.last != *t.abs_last) {
      return CorruptError(t.What() + ": Content-Range '" + std::string(head.content_range) +
                          "' does not end at byte " + std::to_string(*t.abs_last) +
                          " as the first answer to the same range did");
    }
    out.skip = t.delivered;
    out.limit = *t.abs_last - (*t.abs_first + t.delivered) + 1;
    return out;
  }
  out.limit = *t.abs_last - want_first + 1;
  return out;
}

Result<BodyPlacement> PlaceWhole(Transfer& t, const ResponseHead& head) {
  BodyPlacement out;
  if (t.delivered > 0 && head.sent_if_range) {
    return UnavailableError(t.What() + ": the object changed during the download (ETag " +
                            t.etag + " no longer matches; the server sent it whole)");
  }
  // The whole object (a server without ranges, or none asked for).
  const std::optional<ByteRange>& range = t.request.range;
  const std::optional<uint64_t>& length = head.content_length;
  if (range && range->is_suffix) {
    if (!length && !t.abs_first) {
      return IoError(t.What() + ": suffix range answered with a body of unknown length");
    }
    if (!t.abs_first) {
      uint64_t total = *length;
      t.abs_first = total > range->suffix ? total - range->suffix : 0;
      if (total > 0) t.abs_last = total - 1;
    }
  } else if (!t.abs_first) {
    t.abs_first = range ? range->first : 0;
    if (range && t.request.if_range_ignored != HttpRequest::IgnoredRange::kToEnd) {
      t.abs_last = range->last;
    }
    if (length && *length > 0 && (!t.abs_last || *t.abs_last >= *length)) {
      t.abs_last = *length - 1;
    }
  }
  uint64_t start = t.abs_first.value_or(0) + t.delivered;
  out.skip = start;
  if (t.abs_last) out.limit = *t.abs_last + 1 > start ? *t.abs_last + 1 - start : 0;
  return out;
}

}  // namespace

Result<BodyPlacement> PlaceBody(Transfer& t, const ResponseHead& head) {
  std::optional<ContentRange> cr;
  if (head.status == 206) {
    cr = ParseContentRange(head.content_range);
    if (!cr) {
      return CorruptError(t.What() + ": " + std::string(head.status_line) +
                          " with malformed Content-Range '" +
                          std::string(head.content_range) + "'");
    }
  }
  for (std::optional<uint64_t> n : {head.content_length, cr ? cr->total : std::nullopt,
                                     cr ? std::optional<uint64_t>(cr->last) : std::nullopt}) {
    if (n && *n >= kMaxStatedObjectBytes) {
      return CorruptError(t.What() + ": " + std::string(head.status_line) + " states " +
                          std::to_string(*n) + " bytes, beyond any object a store holds (2^48)");
    }
  }
  const std::optional<uint64_t> expected = t.request.expected_object_size;
  const std::optional<uint64_t> stated = StatedObjectSize(head, cr);
  if (expected && stated && *stated != *expected) return RemoteChanged(t, *stated, *expected);
  if (expected && cr && cr->last >= *expected) {
    return RemoteChanged(t, cr->last + 1, *expected);
  }
  Result<BodyPlacement> placed = cr ? PlacePartial(t, head, *cr) : PlaceWhole(t, head);
  if (!placed.ok()) return placed;
  if (!t.have_response) t.response.object_size = stated;
  if (expected) {
    // Never deliver past the expected size, whatever bounds this body: no
    // length and no range end, or a Content-Length that states no object
    // size (a 2xx other than 200 and 206) and so was not checked above.
    uint64_t start = t.abs_first.value_or(0) + t.delivered;
    uint64_t room = *expected > start ? *expected - start : 0;
    if (!placed->limit || *placed->limit > room) {
      placed->limit = room;
      placed->strict_limit = true;
    }
  }
  return placed;
}

}  // namespace sluice::http_detail
