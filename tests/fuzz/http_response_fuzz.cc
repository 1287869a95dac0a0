// HTTP response heads and bodies as the client reads them
// (stores/http/http_exchange.cc + body_reader.cc): Beast's response_parser
// over a buffer_body, with the client's limits, fed the fuzzed bytes in
// pieces; the head's Content-Range / Content-Length then go through
// PlaceBody (stores/http/body_placement.h) for a fuzzed request, and the
// body (plain or chunked) is read to its end.
//
// Input: 4 control bytes (request shape), 3 u32 (range/expected size
// numbers), then the response bytes.
// Checks, for a first attempt whose range lies inside the expected object:
// a placement never reaches past the expected size (the "server claims
// 512 MiB" case), never computes a negative (wrapped) limit, and the body
// handed on is never longer than the placement allows.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/parser.hpp>

#include "stores/http/body_placement.h"
#include "stores/http/http_transfer.h"
#include "stores/http/url.h"
#include "tests/fuzz/fuzz_util.h"

namespace bhttp = boost::beast::http;
using sluice::http_detail::BodyPlacement;
using sluice::http_detail::ResponseHead;
using sluice::http_detail::Transfer;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sluice::fuzz::Input in(data, size);
  const uint8_t shape = in.Byte();
  const uint8_t step = static_cast<uint8_t>(in.Byte() | 1);  // bytes per put()
  in.Byte();
  in.Byte();
  const uint64_t a = in.U32(), b = in.U32(), expected = in.U32();

  Transfer t;
  t.url = *sluice::ParseUrl("https://example.com/bucket/shard.mds");
  t.request.method = sluice::HttpMethod::kGet;
  switch (shape & 3) {
    case 0: break;
    case 1: t.request.range = sluice::ByteRange::FromTo(std::min(a, b), std::max(a, b)); break;
    case 2: t.request.range = sluice::ByteRange::From(a); break;
    case 3: t.request.range = sluice::ByteRange::Suffix(a); break;
  }
  if (shape & 4) t.request.expected_object_size = expected;
  const bool first_attempt = (shape & 8) == 0;
  if (!first_attempt) {  // a resumed download: a consistent earlier state
    const uint64_t lo = std::min(a, b), hi = std::max(a, b);
    t.abs_first = lo;
    t.abs_last = hi;
    t.delivered = (hi - lo) / 2;
    t.etag = "\"e\"";
    t.have_response = true;
  }

  bhttp::response_parser<bhttp::buffer_body> parser;
  parser.body_limit(boost::none);
  parser.header_limit(64 * 1024);
  std::string_view wire = in.Rest();
  boost::beast::error_code ec;
  while (!parser.is_header_done()) {
    if (wire.empty()) return 0;  // truncated head
    size_t n = std::min<size_t>(wire.size(), step);
    size_t used = parser.put(boost::asio::buffer(wire.data(), n), ec);
    if (ec == bhttp::error::need_more) {
      if (n == wire.size()) return 0;
      // Beast wants the whole head in one buffer: offer more next time.
      used = parser.put(boost::asio::buffer(wire.data(), wire.size()), ec);
      if (ec == bhttp::error::need_more) return 0;
    }
    if (ec) return 0;
    wire.remove_prefix(used);
  }
  const auto& head = parser.get();
  const int status = static_cast<int>(head.result_int());
  if (status < 200 || status > 299) return 0;

  const std::string status_line = "HTTP " + std::to_string(status);
  const std::string content_range(head[bhttp::field::content_range]);
  ResponseHead facts;
  facts.status = status;
  facts.status_line = status_line;
  facts.content_range = content_range;
  if (parser.content_length()) facts.content_length = *parser.content_length();
  facts.sent_if_range = (shape & 16) != 0;
  sluice::Result<BodyPlacement> placed = sluice::http_detail::PlaceBody(t, facts);
  if (!placed.ok()) return 0;

  if (placed->limit) {
    FUZZ_CHECK(*placed->limit < (uint64_t{1} << 62), "wrapped limit %llu",
               static_cast<unsigned long long>(*placed->limit));
  }
  const auto& range = t.request.range;
  const bool range_inside =
      !range || range->is_suffix ||
      (range->last ? *range->last < expected : range->first < expected);
  if (first_attempt && (shape & 4) && range_inside) {
    FUZZ_CHECK(placed->limit.has_value(), "unbounded body for an expected size");
    const uint64_t start = status == 206 ? *t.abs_first : placed->skip;
    FUZZ_CHECK(*placed->limit == 0 || start + *placed->limit <= expected,
               "placement [%llu, +%llu) reaches past the expected %llu bytes",
               static_cast<unsigned long long>(start),
               static_cast<unsigned long long>(*placed->limit),
               static_cast<unsigned long long>(expected));
  }

  // The body, through the same buffer_body the client reads into.
  char buf[4096];
  uint64_t body_bytes = 0, handed_on = 0;
  while (!parser.is_done()) {
    parser.get().body().data = buf;
    parser.get().body().size = sizeof buf;
    size_t n = std::min<size_t>(wire.size(), step);
    size_t used = parser.put(boost::asio::buffer(wire.data(), n), ec);
    if (ec == bhttp::error::need_buffer) ec = {};
    if (ec == bhttp::error::need_more && n < wire.size()) {
      used = parser.put(boost::asio::buffer(wire.data(), wire.size()), ec);
      if (ec == bhttp::error::need_buffer) ec = {};
    }
    if (ec) break;
    const uint64_t got = sizeof buf - parser.get().body().size;
    if (used == 0 && got == 0) break;  // truncated: nothing more to parse
    wire.remove_prefix(used);
    // What the client hands on: past `skip`, at most `limit`.
    uint64_t lo = std::max<uint64_t>(body_bytes, placed->skip);
    uint64_t hi = body_bytes + got;
    if (hi > lo) {
      uint64_t take = hi - lo;
      if (placed->limit) take = std::min(take, *placed->limit - handed_on);
      handed_on += take;
    }
    body_bytes += got;
  }
  if (placed->limit) FUZZ_CHECK(handed_on <= *placed->limit);
  return 0;
}
