#include "stores/http/body_reader.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <tuple>
#include <type_traits>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/beast/http/read.hpp>

#include "stores/http/http_failures.h"

namespace sluice::http_detail {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using asio::awaitable;

namespace {

constexpr size_t kMaxErrorBody = 64 * 1024;

// The one sink call that may run while the next buffer is received.
struct PendingSink {
  explicit PendingSink(asio::any_io_executor executor)
      : done(std::move(executor), asio::steady_timer::time_point::max()) {}
  asio::steady_timer done;  // cancelled when the call ends
  bool busy = false;
  size_t bytes = 0;
  Status status;
};

// Starts (*t.sink)(data) on its own coroutine; `data` must stay valid
// until AwaitSink() returns.
void StartSink(const ExchangeContext& ctx, PendingSink& p, Transfer& t, std::string_view data) {
  p.busy = true;
  p.bytes = data.size();
  asio::co_spawn(ctx.executor, (*t.sink)(data), [&p](std::exception_ptr e, Status s) {
    p.status = e ? InternalError("HTTP body sink threw an exception") : std::move(s);
    p.busy = false;
    p.done.cancel();
  });
}

// Waits for the pending sink call, if any, and counts its bytes as
// delivered. False: the sink failed (`result` says why).
awaitable<bool> AwaitSink(PendingSink& p, Transfer& t, AttemptResult& result) {
  while (p.busy) co_await p.done.async_wait(NoCancel());
  if (p.bytes == 0) co_return true;
  if (!p.status.ok()) {
    result = AttemptResult::Fail(p.status);
    p.bytes = 0;
    co_return false;
  }
  t.delivered += p.bytes;
  t.response.body_bytes = t.delivered;
  p.bytes = 0;
  co_return true;
}

// Drops the first `skip` bytes (a server that ignored the Range) and
// anything past `limit`, and counts what is left against `limit`. Bytes past
// a strict limit fail `result` instead (the object is larger than the
// caller expects).
bool Trim(const Transfer& t, std::string_view& data, BodyPlacement& p, AttemptResult& result) {
  if (p.skip > 0) {
    size_t drop = static_cast<size_t>(std::min<uint64_t>(p.skip, data.size()));
    data.remove_prefix(drop);
    p.skip -= drop;
  }
  if (p.limit && data.size() > *p.limit) {
    if (p.strict_limit) {
      result = AttemptResult::Fail(CorruptError(
          t.What() + ": the body goes on past the expected object size of " +
          std::to_string(*t.request.expected_object_size) +
          " bytes (the remote changed since it was indexed?)"));
      return false;
    }
    data = data.substr(0, static_cast<size_t>(*p.limit));
  }
  if (p.limit) *p.limit -= data.size();
  return true;
}

// Appends to the buffered body. False: over max_buffered_body.
bool Append(const ExchangeContext& ctx, Transfer& t, std::string_view data,
            AttemptResult& result) {
  if (t.request.body_into != nullptr) {
    // The caller's memory at the body's offset; what would pass its end is
    // dropped (HttpRequest::body_into).
    const uint64_t room = t.request.body_into_size - std::min(t.delivered, t.request.body_into_size);
    const size_t n = static_cast<size_t>(std::min<uint64_t>(room, data.size()));
    if (n > 0) std::memcpy(t.request.body_into + t.delivered, data.data(), n);
    t.delivered += n;
    t.response.body_bytes = t.delivered;
    t.TellInto(t.delivered, false);
    return true;
  }
  if (t.buffer->size() + data.size() > ctx.options.max_buffered_body) {
    result = AttemptResult::Fail(OutOfRangeError(
        t.What() + ": body larger than max_buffered_body (" +
        std::to_string(ctx.options.max_buffered_body) + " bytes); stream it to a sink"));
    return false;
  }
  t.buffer->append(data);
  t.delivered += data.size();
  t.response.body_bytes = t.delivered;
  return true;
}

// Hands body bytes on, in order, after Trim(): appends to the buffered body
// or awaits the sink. False: `result` says why.
awaitable<bool> Deliver(const ExchangeContext& ctx, Transfer& t, std::string_view data,
                        BodyPlacement& placement, AttemptResult& result) {
  if (!Trim(t, data, placement, result)) co_return false;
  if (data.empty()) co_return true;
  if (t.buffer != nullptr) co_return Append(ctx, t, data, result);
  Status s = co_await (*t.sink)(data);
  if (!s.ok()) {
    result = AttemptResult::Fail(std::move(s));
    co_return false;
  }
  t.delivered += data.size();
  t.response.body_bytes = t.delivered;
  co_return true;
}

// The end of a body read in full: short of the span is a truncation, else
// the connection goes back to the pool if the server keeps it.
AttemptResult Finish(Lease& lease, ResponseParser& parser, const Transfer& t,
                     const BodyPlacement& placement) {
  if (placement.limit && *placement.limit > 0) return ShortBody(t, *placement.limit);
  lease.Release(parser.keep_alive() && lease.conn->buffer.size() == 0);
  AttemptResult done;
  done.outcome = Outcome::kDone;
  return done;
}

// ReadSizedBody's body kept in memory whose every byte is kept (nothing to
// skip, no limit short of it): received from the socket straight into the
// buffered body at its place, in reads of up to kBodyBufferBytes, with no
// pooled buffer between (one copy, the kernel's, where the pool made two:
// a shard received whole, the single-pass mode). The body's memory is
// reserved once; it is zero-filled (a std::string cannot grow
// uninitialized) a read ahead at a time, not whole at the first byte (a
// 64 MiB shard's fill and faults at once, on the loop's thread, likely
// held up its other downloads: through the delaying proxy, single-pass
// epochs were 6-22% slower than the pooled path's in 3 runs of 3; filled a
// read ahead, as fast). It is cut back to what arrived at the end, so that
// a resumed attempt appends.
template <typename Stream>
awaitable<AttemptResult> ReadSizedBodyInPlace(const ExchangeContext& ctx, Stream& stream,
                                              Lease& lease, ResponseParser& parser, Transfer& t,
                                              BodyPlacement& placement, ScopedCancel& cancel,
                                              uint64_t wire_left) {
  Connection& conn = *lease.conn;
  // The caller's memory (HttpRequest::body_into, checked to hold the whole
  // body) is written as it is: no reservation, no fill.
  char* const into = t.request.body_into != nullptr ? t.request.body_into + t.delivered : nullptr;
  const size_t start = into != nullptr ? 0 : t.buffer->size();
  const size_t total = static_cast<size_t>(wire_left);
  if (into == nullptr) t.buffer->reserve(start + total);
  // Body bytes Beast read together with the header.
  size_t got = std::min(conn.buffer.size(), total);
  if (into == nullptr) t.buffer->resize(start + got);
  asio::buffer_copy(asio::buffer((into != nullptr ? into : t.buffer->data() + start), got),
                    conn.buffer.data());
  conn.buffer.consume(got);
  conn.lowest().expires_never();
  Watchdog dog(ctx.executor, conn, ctx.options.idle_timeout, t.deadline);
  boost::system::error_code rec;
  while (got < total) {
    size_t want = std::min(total - got, kBodyBufferBytes);
    // Within the reservation: no reallocation, `out` stays.
    if (into == nullptr && t.buffer->size() < start + got + want) {
      t.buffer->resize(start + got + want);
    }
    char* out = into != nullptr ? into : t.buffer->data() + start;
    size_t n = 0;
    if constexpr (std::is_same_v<Stream, beast::tcp_stream>) {
      // The socket itself: Beast's stream would add a timer per read.
      std::tie(rec, n) = co_await conn.lowest().socket().async_read_some(
          asio::buffer(out + got, want), NoCancel());
    } else {
      std::tie(rec, n) = co_await stream.async_read_some(asio::buffer(out + got, want), NoCancel());
    }
    got += n;
    if (n > 0) dog.Progress();
    if (into != nullptr) t.TellInto(t.delivered + got, false);
    if (rec) break;
    cancel.Arm();
  }
  if (into == nullptr) t.buffer->resize(start + got);
  t.delivered += got;
  t.response.body_bytes = t.delivered;
  if (placement.limit) *placement.limit -= got;
  if (rec) {
    if (dog.fired()) rec = beast::error::timeout;
    bool closed = rec == asio::error::eof || rec == asio::ssl::error::stream_truncated;
    co_return BodyFailure(t, ctx.options, closed, rec);
  }
  co_return Finish(lease, parser, t, placement);
}

// A body of known Content-Length (the common case: every ranged GET).
// Beast only parsed the header; the body is read straight from the stream
// into large pooled buffers (no parser copy, no per-read timer: a Watchdog
// enforces the idle and overall timeouts) and handed on one full buffer at
// a time; a sink writes one buffer while the next one is received.
template <typename Stream>
awaitable<AttemptResult> ReadSizedBody(const ExchangeContext& ctx, Stream& stream, Lease& lease,
                                       ResponseParser& parser, Transfer& t,
                                       BodyPlacement& placement, ScopedCancel& cancel) {
  Connection& conn = *lease.conn;
  AttemptResult result;
  uint64_t wire_left = *parser.content_length();
  const bool fits = t.request.body_into != nullptr
                        ? t.delivered + wire_left <= t.request.body_into_size
                        : t.buffer != nullptr &&
                              t.buffer->size() + wire_left <= ctx.options.max_buffered_body;
  if (t.sink == nullptr && t.buffer != nullptr && wire_left > 0 && placement.skip == 0 &&
      (!placement.limit || *placement.limit >= wire_left) && fits) {
    co_return co_await ReadSizedBodyInPlace(ctx, stream, lease, parser, t, placement, cancel,
                                            wire_left);
  }
  // A body kept in memory is allocated once, at its length (bounded as
  // Append bounds it): growing it by doubling copies it again and touches
  // fresh pages each time.
  if (t.sink == nullptr && t.buffer != nullptr && t.request.body_into == nullptr &&
      t.buffer->size() + wire_left <= ctx.options.max_buffered_body) {
    t.buffer->reserve(static_cast<size_t>(t.buffer->size() + wire_left));
  }
  conn.lowest().expires_never();
  Watchdog dog(ctx.executor, conn, ctx.options.idle_timeout, t.deadline);
  // Two buffers: while a sink writes one, the next is received.
  BodyBufferPool::Buffer buf_a(ctx.buffers), buf_b(ctx.buffers);
  char* buf = buf_a.data();
  char* spare = buf_b.data();
  PendingSink pending(ctx.executor);
  // Body bytes Beast read together with the header.
  size_t fill = static_cast<size_t>(
      std::min<uint64_t>({conn.buffer.size(), wire_left, kBodyBufferBytes}));
  asio::buffer_copy(asio::buffer(buf, fill), conn.buffer.data());
  conn.buffer.consume(fill);
  wire_left -= fill;
  boost::system::error_code rec;
  bool ok = true;
  for (;;) {
    while (fill < kBodyBufferBytes && wire_left > 0) {
      size_t want = static_cast<size_t>(std::min<uint64_t>(kBodyBufferBytes - fill, wire_left));
      size_t n = 0;
      if constexpr (std::is_same_v<Stream, beast::tcp_stream>) {
        // The socket itself: Beast's stream would add a timer per read.
        std::tie(rec, n) =
            co_await conn.lowest().socket().async_read_some(asio::buffer(buf + fill, want),
                                                            NoCancel());
      } else {
        std::tie(rec, n) = co_await stream.async_read_some(asio::buffer(buf + fill, want),
                                                           NoCancel());
      }
      fill += n;
      wire_left -= n;
      if (n > 0) dog.Progress();
      if (rec) break;
    }
    std::string_view data(buf, fill);
    ok = Trim(t, data, placement, result);
    if (!ok) break;
    // In order: the previous buffer's sink call ends before this one starts.
    ok = co_await AwaitSink(pending, t, result);
    if (!ok) break;
    if (t.sink != nullptr && !data.empty()) {
      StartSink(ctx, pending, t, data);
      std::swap(buf, spare);
    } else if (!data.empty()) {
      ok = Append(ctx, t, data, result);
      if (!ok) break;
    }
    fill = 0;
    if (rec || wire_left == 0) break;
    cancel.Arm();
  }
  if (!co_await AwaitSink(pending, t, result) || !ok) co_return result;
  if (rec) {
    if (dog.fired()) rec = beast::error::timeout;
    bool closed = rec == asio::error::eof || rec == asio::ssl::error::stream_truncated;
    co_return BodyFailure(t, ctx.options, closed, rec);
  }
  co_return Finish(lease, parser, t, placement);
}

// Chunked or until-close bodies: Beast parses, into a pooled buffer.
template <typename Stream>
awaitable<AttemptResult> ReadParsedBody(const ExchangeContext& ctx, Stream& stream,
                                        Lease& lease, ResponseParser& parser, Transfer& t,
                                        BodyPlacement& placement, ScopedCancel& cancel) {
  Connection& conn = *lease.conn;
  AttemptResult result;
  BodyBufferPool::Buffer chunk(ctx.buffers);
  while (!parser.is_done()) {
    parser.get().body().data = chunk.data();
    parser.get().body().size = kBodyBufferBytes;
    conn.lowest().expires_at(std::min(Clock::now() + ctx.options.idle_timeout, t.deadline));
    cancel.Arm();
    auto [rec, rn] = co_await bhttp::async_read(stream, conn.buffer, parser, NoCancel());
    if (rec == bhttp::error::need_buffer) rec = {};
    size_t got = kBodyBufferBytes - parser.get().body().size;
    if (!co_await Deliver(ctx, t, std::string_view(chunk.data(), got), placement, result)) {
      co_return result;
    }
    if (rec) co_return BodyFailure(t, ctx.options, rec == bhttp::error::partial_message, rec);
  }
  co_return Finish(lease, parser, t, placement);
}

}  // namespace

template <typename Stream>
awaitable<AttemptResult> ReadBody(const ExchangeContext& ctx, Stream& stream, Lease& lease,
                                  ResponseParser& parser, Transfer& t, BodyPlacement placement,
                                  ScopedCancel& cancel) {
  if (t.request.method == HttpMethod::kHead || parser.is_done()) {
    co_return Finish(lease, parser, t, BodyPlacement{});
  }
  // Not a conditional expression with a co_await in each arm: GCC 12
  // built the result wrong (a free() of a bad pointer at its destruction).
  AttemptResult result;
  if (parser.content_length().has_value() && !parser.chunked()) {
    result = co_await ReadSizedBody(ctx, stream, lease, parser, t, placement, cancel);
  } else {
    result = co_await ReadParsedBody(ctx, stream, lease, parser, t, placement, cancel);
  }
  // The rest of body_into's bytes, also when the attempt failed: what came
  // is what the server sent, and stays (a next attempt goes on after it).
  t.TellInto(t.delivered, true);
  co_return result;
}

template <typename Stream>
awaitable<std::string> ReadErrorBody(const ExchangeContext& ctx, Stream& stream, Connection& conn,
                                     ResponseParser& parser, const Transfer& t) {
  std::string out;
  if (t.request.method == HttpMethod::kHead) co_return out;
  ScopedCancel cancel(co_await CurrentState(), conn);
  std::string buf(kMaxErrorBody, '\0');
  while (!parser.is_done() && out.size() < kMaxErrorBody) {
    parser.get().body().data = buf.data();
    parser.get().body().size = buf.size() - out.size();
    conn.lowest().expires_at(std::min(Clock::now() + ctx.options.idle_timeout, t.deadline));
    cancel.Arm();
    auto [ec, n] = co_await bhttp::async_read(stream, conn.buffer, parser, NoCancel());
    size_t got = buf.size() - out.size() - parser.get().body().size;
    out.append(buf.data(), got);
    if (ec && ec != bhttp::error::need_buffer) break;
  }
  co_return out;
}

template awaitable<AttemptResult> ReadBody(const ExchangeContext&, beast::tcp_stream&, Lease&,
                                           ResponseParser&, Transfer&, BodyPlacement,
                                           ScopedCancel&);
template awaitable<AttemptResult> ReadBody(const ExchangeContext&, TlsStream&, Lease&,
                                           ResponseParser&, Transfer&, BodyPlacement,
                                           ScopedCancel&);
template awaitable<std::string> ReadErrorBody(const ExchangeContext&, beast::tcp_stream&,
                                              Connection&, ResponseParser&, const Transfer&);
template awaitable<std::string> ReadErrorBody(const ExchangeContext&, TlsStream&, Connection&,
                                              ResponseParser&, const Transfer&);

}  // namespace sluice::http_detail
