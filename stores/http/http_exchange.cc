#include "stores/http/http_exchange.h"

#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>

#include <boost/asio/random_access_file.hpp>
#include <boost/asio/read_at.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

#include "base/ascii.h"
#include "base/env.h"
#include "stores/http/http_failures.h"

namespace sluice::http_detail {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using asio::awaitable;
using std::chrono::milliseconds;

namespace {

constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);
// Request bodies from files are sent in pieces this large.
constexpr size_t kChunkBytes = 256 * 1024;

Clock::time_point Until(milliseconds d, Clock::time_point deadline) {
  return std::min(Clock::now() + d, deadline);
}

bhttp::verb ToVerb(HttpMethod method) {
  switch (method) {
    case HttpMethod::kGet: return bhttp::verb::get;
    case HttpMethod::kHead: return bhttp::verb::head;
    case HttpMethod::kPut: return bhttp::verb::put;
    case HttpMethod::kPost: return bhttp::verb::post;
    case HttpMethod::kDelete: return bhttp::verb::delete_;
  }
  return bhttp::verb::get;
}

// The Range header for the next attempt: the caller's range, or after a
// first response the rest of the span from the first byte not delivered.
std::string RangeHeader(const Transfer& t) {
  if (t.request.method != HttpMethod::kGet) return {};
  if ((t.delivered > 0 || t.abs_first) && !t.request.range_signed) {
    uint64_t start = t.abs_first.value_or(0) + t.delivered;
    std::string out = "bytes=" + std::to_string(start) + "-";
    if (t.abs_last) out += std::to_string(*t.abs_last);
    return t.delivered > 0 || t.request.range ? out : std::string();
  }
  if (!t.request.range) return {};
  const ByteRange& r = *t.request.range;
  if (r.is_suffix) return "bytes=-" + std::to_string(r.suffix);
  std::string out = "bytes=" + std::to_string(r.first) + "-";
  if (r.last) out += std::to_string(*r.last);
  return out;
}

// Whether a request resuming `t` with `range` asks If-Range: only with a
// strong ETag from the first response (a weak one may not be used there).
bool ResumesWithIfRange(const Transfer& t, const std::string& range) {
  return !range.empty() && t.delivered > 0 && !t.etag.empty() && t.etag.substr(0, 2) != "W/";
}

// The request head: method, target, Host, User-Agent, Range (and If-Range
// when resuming), the caller's headers, Content-Length. kIoError when the
// body file cannot be read.
Result<bhttp::request<bhttp::empty_body>> RequestHead(const Transfer& t,
                                                      const HttpClientOptions& options,
                                                      const std::string& range) {
  bhttp::request<bhttp::empty_body> msg{ToVerb(t.request.method), t.url.target, 11};
  msg.set(bhttp::field::host, t.url.Authority());
  msg.set(bhttp::field::user_agent, options.user_agent);
  if (!range.empty()) msg.set(bhttp::field::range, range);
  if (ResumesWithIfRange(t, range)) msg.set(bhttp::field::if_range, t.etag);
  for (const auto& [name, value] : t.request.headers) msg.insert(name, value);
  uint64_t body_size = t.request.body.size();
  if (!t.request.body_file.empty()) {
    auto st = Env::Default()->Stat(t.request.body_file);
    if (!st.ok()) {
      return IoError(t.What() + ": cannot read body file '" + t.request.body_file +
                     "': " + std::strerror(st.status().os_error()));
    }
    body_size = static_cast<uint64_t>(st->st_size);
  }
  if (body_size > 0 || t.request.method == HttpMethod::kPut ||
      t.request.method == HttpMethod::kPost) {
    msg.set(bhttp::field::content_length, std::to_string(body_size));
  }
  return msg;
}

// Writes the request body (string or file) after the head. A file that
// cannot be read sets `file_error`.
template <typename Stream>
awaitable<boost::system::error_code> WriteBody(const ExchangeContext& ctx, Stream& stream,
                                               Connection& conn, const Transfer& t,
                                               std::string* file_error) {
  ScopedCancel cancel(co_await CurrentState(), conn);
  if (t.request.body_file.empty()) {
    if (t.request.body.empty()) co_return boost::system::error_code();
    conn.lowest().expires_at(Until(ctx.options.idle_timeout, t.deadline));
    cancel.Arm();
    auto [ec, n] = co_await asio::async_write(stream, asio::buffer(t.request.body), NoCancel());
    co_return ec;
  }
  // Opened through the Env, read through io_uring.
  asio::random_access_file file(ctx.executor);
  boost::system::error_code ec;
  auto opened = Env::Default()->Open(t.request.body_file, OpenMode::kRead);
  if (!opened.ok()) {
    const int err = opened.status().os_error();
    *file_error = "cannot open body file '" + t.request.body_file + "': " + std::strerror(err);
    co_return boost::system::error_code(err, boost::system::system_category());
  }
  file.assign(opened->Release(), ec);
  if (ec) {
    *file_error = "cannot open body file '" + t.request.body_file + "': " + ec.message();
    co_return ec;
  }
  uint64_t size = file.size(ec);
  std::unique_ptr<char[]> chunk(new char[kChunkBytes]);
  for (uint64_t offset = 0; offset < size;) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(kChunkBytes, size - offset));
    cancel.Arm();
    auto [rec, got] =
        co_await asio::async_read_at(file, offset, asio::buffer(chunk.get(), want), kTuple);
    if (rec) {
      *file_error = "cannot read body file '" + t.request.body_file + "': " + rec.message();
      co_return rec;
    }
    conn.lowest().expires_at(Until(ctx.options.idle_timeout, t.deadline));
    cancel.Arm();
    auto [wec, n] =
        co_await asio::async_write(stream, asio::buffer(chunk.get(), got), NoCancel());
    if (wec) co_return wec;
    offset += got;
  }
  co_return boost::system::error_code();
}

// Sends the head and body. A failure on a reused connection that the
// server closed is kStale (go again on a fresh one, uncounted).
template <typename Stream>
awaitable<AttemptResult> SendRequest(const ExchangeContext& ctx, Stream& stream, Lease& lease,
                                     Transfer& t, const std::string& range) {
  Connection& conn = *lease.conn;
  Result<bhttp::request<bhttp::empty_body>> msg = RequestHead(t, ctx.options, range);
  if (!msg.ok()) co_return AttemptResult::Fail(msg.status());
  ScopedCancel cancel(co_await CurrentState(), conn);
  bhttp::request_serializer<bhttp::empty_body> serializer{*msg};
  conn.lowest().expires_at(Until(ctx.options.idle_timeout, t.deadline));
  auto [ec, n] = co_await bhttp::async_write_header(stream, serializer, NoCancel());
  std::string file_error;
  if (!ec) ec = co_await WriteBody(ctx, stream, conn, t, &file_error);
  AttemptResult result;
  if (!file_error.empty()) co_return AttemptResult::Fail(IoError(t.What() + ": " + file_error));
  if (ec && lease.reused && IsConnectionLoss(ec)) {
    result.outcome = Outcome::kStale;
    result.failure.status = IoError(t.What() + ": sending the request: " + ec.message());
  } else if (ec) {
    result.failure = TransportFailure(t, ctx.options, "sending the request", ec,
                                      ctx.options.idle_timeout, "idle_timeout");
  } else {
    result.outcome = Outcome::kDone;
  }
  co_return result;
}

bool IsRedirect(int status) {
  return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

// Records the first successful response's status, headers and ETag.
void KeepFirstHead(Transfer& t, const ResponseParser& parser) {
  if (t.have_response) return;
  const auto& head = parser.get();
  t.have_response = true;
  t.response.status = static_cast<int>(head.result_int());
  for (const auto& field : head) {
    t.response.headers.emplace_back(AsciiToLower(field.name_string()),
                                    std::string(field.value()));
  }
  t.etag = std::string(head[bhttp::field::etag]);
}

template <typename Stream>
awaitable<AttemptResult> ExchangeOn(const ExchangeContext& ctx, Stream& stream, Lease& lease,
                                    Transfer& t) {
  Connection& conn = *lease.conn;
  const std::string range = RangeHeader(t);
  const bool sent_if_range = ResumesWithIfRange(t, range);
  const auto sent_at = std::chrono::steady_clock::now();
  AttemptResult sent = co_await SendRequest(ctx, stream, lease, t, range);
  if (sent.outcome != Outcome::kDone) co_return sent;

  ScopedCancel cancel(co_await CurrentState(), conn);
  ResponseParser parser;
  parser.body_limit(boost::none);
  parser.header_limit(64 * 1024);
  if (t.request.method == HttpMethod::kHead) parser.skip(true);
  conn.lowest().expires_at(Until(ctx.options.first_byte_timeout, t.deadline));
  cancel.Arm();
  auto [hec, hn] = co_await bhttp::async_read_header(stream, conn.buffer, parser, NoCancel());
  AttemptResult result;
  if (hec && lease.reused && IsConnectionLoss(hec) && hn == 0) {
    result.outcome = Outcome::kStale;
    result.failure.status = IoError(t.What() + ": reading the response: " + hec.message());
    co_return result;
  }
  if (hec) {
    result.failure = TransportFailure(t, ctx.options, "waiting for the response", hec,
                                      ctx.options.first_byte_timeout, "first_byte_timeout");
    co_return result;
  }
  const auto& head = parser.get();
  const int status = static_cast<int>(head.result_int());
  // A request with a body would count its upload as the server's delay; an
  // error or a redirect may come from a proxy beside the client (a sidecar,
  // a local gateway) rather than from the store that serves the data.
  if (t.request.body.empty() && t.request.body_file.empty() && status >= 200 && status < 300) {
    const auto took = std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::steady_clock::now() - sent_at);
    ctx.first_byte.Record(took);
    if (t.host_stats != nullptr) t.host_stats->first_byte.Record(took);
  }
  const std::string status_line =
      "HTTP " + std::to_string(status) + " " + std::string(head.reason());

  // A redirect without Location (S3's 301 PermanentRedirect for a bucket in
  // another region names it only in its body) is answered as an error, so
  // that the store reads the body.
  const std::string location(head[bhttp::field::location]);
  if (IsRedirect(status) && !location.empty() && !ctx.options.follow_redirects) {
    // The caller reads where it points (its status and Location), body unread.
    t.response.status = static_cast<int>(status);
    t.response.headers.emplace_back("location", location);
    result.outcome = Outcome::kDone;
    co_return result;
  }
  if (IsRedirect(status) && !location.empty() &&
      (t.request.method == HttpMethod::kGet || t.request.method == HttpMethod::kHead)) {
    Result<Url> target = ResolveRedirect(t.url, location);
    if (!target.ok()) {
      co_return AttemptResult::Fail(
          IoError(t.What() + ": " + status_line + ": " + target.status().message()));
    }
    result.outcome = Outcome::kRedirect;
    result.redirect = *target;
    co_return result;  // the lease closes the connection (body unread)
  }

  if (status < 200 || status > 299) {
    std::string body = co_await ReadErrorBody(ctx, stream, conn, parser, t);
    std::string detail = ctx.options.error_detail ? ctx.options.error_detail(body) : "";
    if (ctx.options.error_header_detail) {
      HttpHeaders headers;
      for (const auto& field : head) {
        headers.emplace_back(AsciiToLower(field.name_string()),
                             std::string(field.value()));
      }
      std::string more = ctx.options.error_header_detail(headers);
      if (!more.empty()) detail += (detail.empty() ? "" : "; ") + more;
    }
    result.failure = StatusFailure(t, status, status_line, range, detail,
                                   std::string(head[bhttp::field::retry_after]));
    if (!result.failure.retryable) result.outcome = Outcome::kFail;
    co_return result;
  }

  ResponseHead facts;
  facts.status = status;
  facts.status_line = status_line;
  const std::string content_range(head[bhttp::field::content_range]);
  facts.content_range = content_range;
  if (parser.content_length()) facts.content_length = *parser.content_length();
  facts.sent_if_range = sent_if_range;
  Result<BodyPlacement> placement = PlaceBody(t, facts);
  if (!placement.ok()) co_return AttemptResult::Fail(placement.status());
  KeepFirstHead(t, parser);
  if (status == 200 && !range.empty() && t.delivered == 0 &&
      t.request.if_range_ignored == HttpRequest::IgnoredRange::kHeadOnly) {
    result.outcome = Outcome::kDone;
    co_return result;  // the lease closes the connection (body unread)
  }
  if (t.request.on_answer && t.request.body_into != nullptr) {
    // The caller's word on this answer before a byte of it is written
    // (HttpRequest::on_answer); the connection closes with the body unread.
    Status answer = t.request.on_answer(t.response);
    if (!answer.ok()) co_return AttemptResult::Fail(std::move(answer));
  }
  co_return co_await ReadBody(ctx, stream, lease, parser, t, *placement, cancel);
}

}  // namespace

awaitable<AttemptResult> Exchange(const ExchangeContext& ctx, Lease& lease, Transfer& t) {
  if (lease.conn->tls) co_return co_await ExchangeOn(ctx, *lease.conn->tls, lease, t);
  co_return co_await ExchangeOn(ctx, *lease.conn->tcp, lease, t);
}

}  // namespace sluice::http_detail
