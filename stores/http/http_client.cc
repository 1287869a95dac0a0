// The one translation unit of the HTTP client that includes Beast's HTTP.
#include "stores/http/http_client.h"

#include <sys/socket.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <deque>
#include <exception>
#include <future>
#include <random>
#include <tuple>
#include <type_traits>
#include <unordered_map>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/random_access_file.hpp>
#include <boost/asio/read_at.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "base/asio/co_status.h"
#include "base/file.h"
#include "stores/http/retry_policy.h"
#include "stores/http/tls_stream.h"

namespace sluice {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace ssl = boost::asio::ssl;
using tcp = boost::asio::ip::tcp;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using asio::awaitable;
constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);
constexpr size_t kChunkBytes = 256 * 1024;
constexpr size_t kMaxErrorBody = 64 * 1024;
// Bodies are read in buffers this large and handed to sinks whole: few
// reads and sink calls per byte. A whole number of kPageCacheWriteBlock, so
// a file sink writes whole aligned blocks straight from it (see GetToFile).
constexpr size_t kBodyBufferBytes = 2 * 1024 * 1024;
static_assert(kBodyBufferBytes % kPageCacheWriteBlock == 0);
constexpr size_t kMaxPooledBodyBuffers = 32;

const char* HttpMethodName(HttpMethod method) {
  switch (method) {
    case HttpMethod::kGet: return "GET";
    case HttpMethod::kHead: return "HEAD";
    case HttpMethod::kPut: return "PUT";
    case HttpMethod::kPost: return "POST";
    case HttpMethod::kDelete: return "DELETE";
  }
  return "GET";
}

namespace {

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

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && Lower(a) == Lower(b);
}

std::string Ms(milliseconds d) { return std::to_string(d.count()) + " ms"; }

// "<Code>SlowDown</Code>" and its <Message> from an S3-style XML error body;
// other elements (StringToSign, SignatureProvided, ...) are never quoted.
std::string ErrorCodeFromBody(std::string_view body) {
  auto element = [&](std::string_view name) -> std::string {
    std::string open = "<" + std::string(name) + ">";
    std::string close = "</" + std::string(name) + ">";
    size_t a = body.find(open);
    if (a == std::string_view::npos) return {};
    a += open.size();
    size_t b = body.find(close, a);
    if (b == std::string_view::npos || b - a > 200) return {};
    std::string out(body.substr(a, b - a));
    for (char& c : out) {
      if (static_cast<unsigned char>(c) < 0x20) c = ' ';
    }
    return out;
  };
  std::string code = element("Code");
  if (code.empty()) return {};
  std::string message = element("Message");
  return message.empty() ? code : code + ": " + message;
}

// Why an attempt failed and what to do about it.
struct Failure {
  Status status;
  bool retryable = false;
  bool timed_out = false;
  std::optional<milliseconds> retry_after;
};

// TLS receives ciphertext in reads of up to this many bytes (see
// tls_stream.h).
constexpr size_t kTlsReceiveBytes = 256 * 1024;

struct Connection {
  std::string key;
  std::string host_port;  // "host:port" for messages
  std::unique_ptr<beast::tcp_stream> tcp;
  std::unique_ptr<TlsStream> tls;
  beast::flat_buffer buffer;
  Clock::time_point idle_since;

  beast::tcp_stream& lowest() { return tls ? tls->next_layer() : *tcp; }

  // A pooled connection is reusable only if the server has neither closed
  // it nor sent anything unsolicited: recv(MSG_PEEK) must find no data, and
  // neither may the TLS stream hold any received bytes.
  bool LooksAlive() {
    if (tls && tls->buffered() > 0) return false;
    char byte;
    ssize_t n = ::recv(lowest().socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  }
};

// Cancellation of socket work. Asio hands a cancellation to whichever
// operation last installed its handler in the coroutine's slot; inside a
// composed operation (Beast's reads, TLS records) the handler of an
// operation that already completed may still sit there, and the signal is
// lost. So socket operations here run with NoCancel() (they install
// nothing) and this guard's handler stays in the slot for its whole scope:
// it closes the socket, which ends any pending or later operation on it. A
// cancellation that arrived while something else held the slot (a sink's
// file write) is seen by Arm(), which checks the state first. A closed
// connection is never returned to the pool.
auto NoCancel() {
  return asio::as_tuple(asio::bind_cancellation_slot(asio::cancellation_slot(), asio::use_awaitable));
}

class ScopedCancel {
 public:
  ScopedCancel(asio::cancellation_state state, Connection& conn)
      : state_(state), slot_(state.slot()), conn_(&conn) {
    Arm();
  }
  // (Re)installs the handler, or closes at once if cancelled meanwhile.
  void Arm() {
    if (state_.cancelled() != asio::cancellation_type::none) {
      Close(conn_);
    } else if (slot_.is_connected()) {
      slot_.assign([c = conn_](asio::cancellation_type) { Close(c); });
    }
  }
  ~ScopedCancel() {
    if (slot_.is_connected()) slot_.clear();
  }
  ScopedCancel(const ScopedCancel&) = delete;
  ScopedCancel& operator=(const ScopedCancel&) = delete;

 private:
  static void Close(Connection* c) {
    boost::system::error_code ec;
    c->lowest().socket().close(ec);
  }
  asio::cancellation_state state_;
  asio::cancellation_slot slot_;
  Connection* conn_;
};

awaitable<asio::cancellation_state> CurrentState() {
  co_return co_await asio::this_coro::cancellation_state;
}

// The idle and overall timeouts while a body streams in: one timer for the
// whole body instead of one per read (Beast's expires_at arms and cancels a
// timer around every read_some). Reads call Progress(); when no byte came
// for `idle`, or `deadline` passed, the socket is closed and fired() is set.
class Watchdog {
 public:
  Watchdog(asio::any_io_executor executor, Connection& conn, milliseconds idle,
           Clock::time_point deadline)
      : state_(std::make_shared<State>(std::move(executor), conn, idle, deadline)) {
    state_->last = Clock::now();
    Arm(state_);
  }
  ~Watchdog() {
    state_->done = true;
    state_->timer.cancel();
  }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;
  void Progress() { state_->last = Clock::now(); }
  bool fired() const { return state_->fired; }

 private:
  struct State {
    State(asio::any_io_executor executor, Connection& c, milliseconds i, Clock::time_point d)
        : timer(std::move(executor)), conn(&c), idle(i), deadline(d) {}
    asio::steady_timer timer;
    Connection* conn;
    milliseconds idle;
    Clock::time_point deadline;
    Clock::time_point last;
    bool done = false;
    bool fired = false;
    Clock::time_point Due() const { return std::min(last + idle, deadline); }
  };
  static void Arm(std::shared_ptr<State> s) {
    s->timer.expires_at(s->Due());
    s->timer.async_wait([s](boost::system::error_code ec) {
      if (ec || s->done) return;
      if (Clock::now() < s->Due()) {
        Arm(s);
        return;
      }
      s->fired = true;
      boost::system::error_code ignored;
      s->conn->lowest().socket().close(ignored);
    });
  }
  std::shared_ptr<State> state_;
};

struct HostPool {
  std::vector<std::unique_ptr<Connection>> idle;
  int active = 0;
  std::deque<std::shared_ptr<asio::steady_timer>> waiters;
};

// The state of one logical request across attempts and redirects.
struct Transfer {
  HttpRequest request;
  Url url;
  BodySink* sink = nullptr;
  std::string* buffer = nullptr;  // when buffering instead of a sink
  Clock::time_point deadline;
  uint64_t delivered = 0;
  // The absolute byte span being fetched, known after the first response.
  std::optional<uint64_t> abs_first;
  std::optional<uint64_t> abs_last;
  std::string etag;
  bool have_response = false;
  HttpResponse response;

  std::string What() const {
    return std::string(HttpMethodName(request.method)) + " " + url.Redacted();
  }
};

enum class Outcome { kDone, kRetry, kStale, kRedirect, kFail };

struct AttemptResult {
  Outcome outcome = Outcome::kFail;
  Failure failure;
  Url redirect;
};

}  // namespace

class HttpClient::Impl {
 public:
  Impl(asio::any_io_executor executor, HttpClientOptions options)
      : executor_(std::move(executor)),
        options_(std::move(options)),
        ssl_(ssl::context::tls_client),
        rng_(std::random_device{}()) {}

  ~Impl() { pools_.clear(); }

  Status InitTls() {
    ssl_.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                     ssl::context::no_sslv3 | ssl::context::no_tlsv1 |
                     ssl::context::no_tlsv1_1);
    std::string ca = options_.ca_file;
    if (ca.empty()) {
      const char* env = std::getenv("SSL_CERT_FILE");
      if (env != nullptr) ca = env;
    }
    boost::system::error_code ec;
    if (!ca.empty()) {
      ssl_.load_verify_file(ca, ec);
      if (ec) {
        return InvalidArgumentError("cannot load TLS CA file '" + ca + "': " + ec.message());
      }
    } else {
      ssl_.set_default_verify_paths(ec);
      if (ec) return IoError("cannot load the system CA certificates: " + ec.message());
    }
    return Status::Ok();
  }

  awaitable<Result<HttpResponse>> Send(HttpRequest request, BodySink* sink) {
    // Awaits in here must not throw on cancellation: a sink call may still
    // run on one of this request's buffers. Cancellation is seen through the
    // cancellation state and the closed socket instead.
    bool throw_before = co_await asio::this_coro::throw_if_cancelled();
    co_await asio::this_coro::throw_if_cancelled(false);
    Result<HttpResponse> result = InternalError("HTTP request did not run");
    try {
      result = co_await SendImpl(std::move(request), sink);
    } catch (const boost::system::system_error& e) {
      if (e.code() == asio::error::operation_aborted) {
        result = Status(StatusCode::kCancelled, "request cancelled");
      } else {
        result = InternalError(std::string("HTTP request failed: ") + e.what());
      }
    }
    co_await asio::this_coro::throw_if_cancelled(throw_before);
    co_return result;
  }

  HttpClientStats Stats() const {
    return {opened_.load(), reused_.load(), stale_.load(), retries_.load()};
  }

  asio::any_io_executor executor_;
  const HttpClientOptions options_;

 private:
  // A kBodyBufferBytes buffer from the client's free list (the client runs
  // on one thread: no lock), returned to it on destruction.
  class BodyBuffer {
   public:
    explicit BodyBuffer(Impl* impl) : impl_(impl) {
      if (impl_->free_buffers_.empty()) {
        buf_.reset(new char[kBodyBufferBytes]);
      } else {
        buf_ = std::move(impl_->free_buffers_.back());
        impl_->free_buffers_.pop_back();
      }
    }
    ~BodyBuffer() {
      if (impl_->free_buffers_.size() < kMaxPooledBodyBuffers) {
        impl_->free_buffers_.push_back(std::move(buf_));
      }
    }
    BodyBuffer(const BodyBuffer&) = delete;
    BodyBuffer& operator=(const BodyBuffer&) = delete;
    char* data() { return buf_.get(); }

   private:
    Impl* impl_;
    std::unique_ptr<char[]> buf_;
  };

  class Lease {
   public:
    Lease(Impl* impl, std::string key) : impl_(impl), key_(std::move(key)) {}
    Lease(Lease&& other) noexcept
        : impl_(std::exchange(other.impl_, nullptr)),
          key_(std::move(other.key_)),
          conn(std::move(other.conn)),
          reused(other.reused) {}
    Lease& operator=(Lease&&) = delete;
    ~Lease() {
      if (impl_ != nullptr) impl_->Return(key_, std::move(conn), false);
    }
    void Release(bool reusable) {
      if (impl_ != nullptr) impl_->Return(key_, std::move(conn), reusable);
      impl_ = nullptr;
    }

   private:
    Impl* impl_;
    std::string key_;

   public:
    std::unique_ptr<Connection> conn;
    bool reused = false;
  };

  void Return(const std::string& key, std::unique_ptr<Connection> conn, bool reusable) {
    auto it = pools_.find(key);
    if (it == pools_.end()) return;
    HostPool& pool = it->second;
    --pool.active;
    if (conn && reusable) {
      conn->idle_since = Clock::now();
      pool.idle.push_back(std::move(conn));
      if (static_cast<int>(pool.idle.size()) > options_.max_connections_per_host) {
        pool.idle.erase(pool.idle.begin());
      }
    }
    if (!pool.waiters.empty()) {
      pool.waiters.front()->cancel();
      pool.waiters.pop_front();
    }
  }

  static Clock::time_point Until(milliseconds d, Clock::time_point deadline) {
    return std::min(Clock::now() + d, deadline);
  }

  // A pooled connection to `url`'s host, or a new one (counting toward the
  // per-host cap; waits for a slot when at the cap).
  awaitable<Result<Lease>> Acquire(const Url& url, Clock::time_point deadline,
                                   bool fresh_only) {
    std::string key = url.PoolKey();
    for (;;) {
      HostPool& pool = pools_[key];
      while (!fresh_only && !pool.idle.empty()) {
        std::unique_ptr<Connection> conn = std::move(pool.idle.back());
        pool.idle.pop_back();
        if (Clock::now() - conn->idle_since > options_.pool_idle_expiry) continue;
        if (!conn->LooksAlive()) {
          ++stale_;
          continue;
        }
        ++pool.active;
        ++reused_;
        Lease lease(this, key);
        lease.conn = std::move(conn);
        lease.reused = true;
        co_return lease;
      }
      if (pool.active < options_.max_connections_per_host) {
        ++pool.active;
        Lease lease(this, key);
        Result<std::unique_ptr<Connection>> conn = co_await Connect(url, deadline);
        if (!conn.ok()) co_return conn.status();
        ++opened_;
        lease.conn = std::move(conn).value();
        co_return lease;
      }
      auto timer = std::make_shared<asio::steady_timer>(executor_, deadline);
      pool.waiters.push_back(timer);
      co_await timer->async_wait(kTuple);
      auto& waiters = pools_[key].waiters;
      waiters.erase(std::remove(waiters.begin(), waiters.end(), timer), waiters.end());
      // A freed slot also cancels the timer: only the state tells them apart.
      asio::cancellation_state state = co_await asio::this_coro::cancellation_state;
      if (state.cancelled() != asio::cancellation_type::none) {
        co_return Status(StatusCode::kCancelled, "cancelled while waiting for a connection to " + key);
      }
      if (Clock::now() >= deadline) {
        co_return Status(StatusCode::kDeadlineExceeded,
                         "waited download_timeout for a free connection to " + key);
      }
    }
  }

  awaitable<Result<std::unique_ptr<Connection>>> Connect(const Url& url,
                                                          Clock::time_point deadline) {
    using namespace asio::experimental::awaitable_operators;
    auto conn = std::make_unique<Connection>();
    conn->key = url.PoolKey();
    conn->host_port = url.Authority();
    if (!url.explicit_port) conn->host_port += ":" + std::to_string(url.port);
    Clock::time_point connect_deadline = Until(options_.connect_timeout, deadline);
    auto timed_out = [&](const std::string& what) {
      return Status(StatusCode::kDeadlineExceeded,
                    what + " " + conn->host_port + " timed out after " +
                        Ms(options_.connect_timeout));
    };

    std::vector<tcp::endpoint> endpoints;
    boost::system::error_code ec;
    asio::ip::address literal = asio::ip::make_address(url.host, ec);
    const bool is_ip_literal = !ec;
    if (is_ip_literal) {
      endpoints.emplace_back(literal, url.port);
    } else {
      tcp::resolver resolver(executor_);
      asio::steady_timer timer(executor_, connect_deadline);
      auto result = co_await (
          resolver.async_resolve(url.host, std::to_string(url.port), kTuple) ||
          timer.async_wait(kTuple));
      if (result.index() == 1) co_return timed_out("resolving");
      auto [rec, results] = std::get<0>(std::move(result));
      if (rec) {
        co_return IoError("cannot resolve host '" + url.host + "': " + rec.message());
      }
      for (const auto& entry : results) endpoints.push_back(entry.endpoint());
    }

    conn->tcp = std::make_unique<beast::tcp_stream>(executor_);
    asio::cancellation_state cancel_state = co_await CurrentState();
    conn->tcp->expires_at(connect_deadline);
    std::optional<ScopedCancel> cancel1(std::in_place, cancel_state, *conn);
    auto [cec, endpoint] = co_await conn->tcp->async_connect(endpoints, NoCancel());
    cancel1.reset();
    if (cec == beast::error::timeout) co_return timed_out("connecting to");
    if (cec) {
      co_return IoError("cannot connect to " + conn->host_port + ": " + cec.message());
    }
    conn->tcp->socket().set_option(tcp::no_delay(true), ec);

    if (url.is_tls()) {
      Result<std::unique_ptr<TlsStream>> tls =
          TlsStream::Create(std::move(*conn->tcp), ssl_.native_handle(), kTlsReceiveBytes);
      if (!tls.ok()) co_return tls.status();
      conn->tls = std::move(*tls);
      conn->tcp.reset();
      conn->tls->SetPeer(url.host, is_ip_literal, options_.verify_tls);
      conn->lowest().expires_at(connect_deadline);
      ScopedCancel cancel2(cancel_state, *conn);
      auto [hec] = co_await conn->tls->async_handshake(NoCancel());
      if (hec == beast::error::timeout) co_return timed_out("TLS handshake with");
      if (hec) {
        if (!conn->tls->verify_error().empty()) {
          co_return Status(StatusCode::kPermissionDenied,
                           "TLS certificate verification failed for " + conn->host_port +
                               ": " + conn->tls->verify_error());
        }
        co_return IoError("TLS handshake with " + conn->host_port +
                          " failed: " + hec.message());
      }
    }
    conn->lowest().expires_never();
    co_return conn;
  }

  std::string RangeHeader(const Transfer& t) const {
    if (t.request.method != HttpMethod::kGet) return {};
    if (t.delivered > 0 || t.abs_first) {
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

  awaitable<Result<HttpResponse>> SendImpl(HttpRequest request, BodySink* sink) {
    Transfer t;
    SLUICE_CO_ASSIGN_OR_RETURN(t.url, ParseUrl(request.url));
    t.request = std::move(request);
    t.sink = sink;
    std::string buffered;
    if (sink == nullptr) t.buffer = &buffered;
    t.deadline = Clock::now() + options_.download_timeout;
    if (t.request.range && t.request.range->last &&
        *t.request.range->last < t.request.range->first) {
      co_return InvalidArgumentError(t.What() + ": range end " +
                                     std::to_string(*t.request.range->last) +
                                     " before its start " +
                                     std::to_string(t.request.range->first));
    }
    if (t.request.range && t.request.method != HttpMethod::kGet) {
      co_return InvalidArgumentError(t.What() + ": a byte range needs GET");
    }

    int attempts = 0;
    int redirects = 0;
    int stale_retries = 0;
    bool fresh_only = false;
    Failure last;
    for (;;) {
      if (Clock::now() >= t.deadline) {
        co_return Status(StatusCode::kDeadlineExceeded,
                         t.What() + ": download_timeout of " + Ms(options_.download_timeout) +
                             " exceeded after " + std::to_string(attempts) + " attempt(s)" +
                             (last.status.ok() ? "" : ": " + last.status.message()));
      }
      AttemptResult result;
      Result<Lease> lease = co_await Acquire(t.url, t.deadline, fresh_only);
      fresh_only = false;
      if (!lease.ok()) {
        ++attempts;
        result.outcome = Outcome::kRetry;
        result.failure.status = lease.status();
        result.failure.timed_out = lease.status().code() == StatusCode::kDeadlineExceeded;
        // A certificate or configuration problem does not heal on retry.
        result.failure.retryable = lease.status().code() != StatusCode::kPermissionDenied &&
                                   lease.status().code() != StatusCode::kInvalidArgument;
        if (!result.failure.retryable) {
          result.outcome = Outcome::kFail;
          result.failure.status = Status(lease.status().code(),
                                         t.What() + ": " + lease.status().message());
        }
      } else {
        ++attempts;
        if (lease->conn->tls) {
          result = co_await Attempt(*lease->conn->tls, *lease, t);
        } else {
          result = co_await Attempt(*lease->conn->tcp, *lease, t);
        }
      }
      t.response.attempts = attempts;
      // A cancelled operation looks like a transport error; do not retry it.
      // (Callers may have turned off throw_if_cancelled, so check.)
      asio::cancellation_state state = co_await asio::this_coro::cancellation_state;
      if (state.cancelled() != asio::cancellation_type::none) {
        co_return Status(StatusCode::kCancelled, t.What() + ": cancelled");
      }
      switch (result.outcome) {
        case Outcome::kDone: {
          t.response.final_url = t.url.Redacted();
          if (t.buffer != nullptr) t.response.body = std::move(buffered);
          co_return std::move(t.response);
        }
        case Outcome::kFail:
          co_return result.failure.status;
        case Outcome::kStale:
          // The server closed a pooled connection as we reused it: not the
          // server's fault, not counted; go again on a fresh connection.
          --attempts;
          ++stale_;
          fresh_only = true;
          if (++stale_retries > options_.max_connections_per_host + 1) {
            co_return IoError(t.What() + ": connections keep closing: " +
                              result.failure.status.message());
          }
          continue;
        case Outcome::kRedirect:
          --attempts;
          if (++redirects > options_.max_redirects) {
            co_return IoError(t.What() + ": more than " + std::to_string(options_.max_redirects) +
                              " redirects (max_redirects)");
          }
          if (t.url.PoolKey() != result.redirect.PoolKey()) {
            // Credentials are for the original host only.
            std::erase_if(t.request.headers, [](const auto& h) {
              return EqualsIgnoreCase(h.first, "authorization");
            });
          }
          t.url = result.redirect;
          continue;
        case Outcome::kRetry:
          break;
      }
      last = result.failure;
      if (attempts > options_.download_retry) {
        StatusCode code = last.timed_out ? StatusCode::kDeadlineExceeded : StatusCode::kUnavailable;
        co_return Status(code, t.What() + ": gave up after " + std::to_string(attempts) +
                                   " attempt(s) (download_retry=" +
                                   std::to_string(options_.download_retry) +
                                   "): " + last.status.message());
      }
      milliseconds delay = BackoffDelay(attempts, options_.backoff_base, options_.backoff_max,
                                        std::uniform_real_distribution<double>(0, 1)(rng_));
      if (last.retry_after) delay = *last.retry_after;
      if (Clock::now() + delay >= t.deadline) {
        co_return Status(StatusCode::kDeadlineExceeded,
                         t.What() + ": next retry in " + Ms(delay) +
                             " would pass download_timeout of " + Ms(options_.download_timeout) +
                             " (after " + std::to_string(attempts) +
                             " attempt(s)): " + last.status.message());
      }
      ++retries_;
      asio::steady_timer timer(executor_, delay);
      auto [ec] = co_await timer.async_wait(kTuple);
      if (ec) co_return Status(StatusCode::kCancelled, t.What() + ": cancelled");
    }
  }

  // Writes the request body (string or file) after the header.
  template <typename Stream>
  awaitable<boost::system::error_code> WriteBody(Stream& stream, Connection& conn,
                                                 const Transfer& t, std::string* file_error) {
    ScopedCancel cancel(co_await CurrentState(), conn);
    if (t.request.body_file.empty()) {
      if (t.request.body.empty()) co_return boost::system::error_code();
      conn.lowest().expires_at(Until(options_.idle_timeout, t.deadline));
      cancel.Arm();
      auto [ec, n] = co_await asio::async_write(stream, asio::buffer(t.request.body), NoCancel());
      co_return ec;
    }
    asio::random_access_file file(executor_);
    boost::system::error_code ec;
    file.open(t.request.body_file, asio::file_base::read_only, ec);
    if (ec) {
      *file_error = "cannot open body file '" + t.request.body_file + "': " + ec.message();
      co_return ec;
    }
    uint64_t size = file.size(ec);
    std::unique_ptr<char[]> chunk(new char[kChunkBytes]);
    for (uint64_t offset = 0; offset < size;) {
      size_t want = static_cast<size_t>(std::min<uint64_t>(kChunkBytes, size - offset));
      cancel.Arm();
      auto [rec, got] = co_await asio::async_read_at(file, offset, asio::buffer(chunk.get(), want), kTuple);
      if (rec) {
        *file_error = "cannot read body file '" + t.request.body_file + "': " + rec.message();
        co_return rec;
      }
      conn.lowest().expires_at(Until(options_.idle_timeout, t.deadline));
      cancel.Arm();
      auto [wec, n] = co_await asio::async_write(stream, asio::buffer(chunk.get(), got), NoCancel());
      if (wec) co_return wec;
      offset += got;
    }
    co_return boost::system::error_code();
  }

  Failure TransportFailure(const Transfer& t, const char* during,
                           const boost::system::error_code& ec, milliseconds timeout,
                           const char* timeout_name) {
    Failure f;
    f.retryable = true;
    if (ec == beast::error::timeout) {
      f.timed_out = true;
      bool overall = Clock::now() + milliseconds(5) >= t.deadline;
      f.status = Status(StatusCode::kDeadlineExceeded,
                        t.What() + ": " + during + ": no data for " +
                            (overall ? Ms(options_.download_timeout) + " (download_timeout)"
                                     : Ms(timeout) + " (" + timeout_name + ")"));
    } else {
      f.status = IoError(t.What() + ": " + during + ": " + ec.message());
    }
    return f;
  }

  static bool IsConnectionLoss(const boost::system::error_code& ec) {
    return ec == bhttp::error::end_of_stream || ec == asio::error::eof ||
           ec == asio::error::connection_reset || ec == asio::error::broken_pipe ||
           ec == asio::error::connection_aborted || ec == ssl::error::stream_truncated;
  }

  // One request/response exchange on `lease`'s connection.
  template <typename Stream>
  awaitable<AttemptResult> Attempt(Stream& stream, Lease& lease, Transfer& t) {
    Connection& conn = *lease.conn;
    AttemptResult result;
    result.outcome = Outcome::kRetry;

    bhttp::request<bhttp::empty_body> msg{ToVerb(t.request.method), t.url.target, 11};
    msg.set(bhttp::field::host, t.url.Authority());
    msg.set(bhttp::field::user_agent, options_.user_agent);
    std::string range = RangeHeader(t);
    if (!range.empty()) {
      msg.set(bhttp::field::range, range);
      if (t.delivered > 0 && !t.etag.empty() && t.etag.substr(0, 2) != "W/") {
        msg.set(bhttp::field::if_range, t.etag);
      }
    }
    for (const auto& [name, value] : t.request.headers) msg.insert(name, value);
    uint64_t body_size = t.request.body.size();
    if (!t.request.body_file.empty()) {
      struct stat st;
      if (::stat(t.request.body_file.c_str(), &st) != 0) {
        result.outcome = Outcome::kFail;
        result.failure.status = IoError(t.What() + ": cannot read body file '" +
                                        t.request.body_file + "': " + std::strerror(errno));
        co_return result;
      }
      body_size = static_cast<uint64_t>(st.st_size);
    }
    if (body_size > 0 || t.request.method == HttpMethod::kPut ||
        t.request.method == HttpMethod::kPost) {
      msg.set(bhttp::field::content_length, std::to_string(body_size));
    }

    ScopedCancel cancel(co_await CurrentState(), conn);
    bhttp::request_serializer<bhttp::empty_body> serializer{msg};
    conn.lowest().expires_at(Until(options_.idle_timeout, t.deadline));
    auto [wec, wn] = co_await bhttp::async_write_header(stream, serializer, NoCancel());
    std::string file_error;
    if (!wec) wec = co_await WriteBody(stream, conn, t, &file_error);
    if (!file_error.empty()) {
      result.outcome = Outcome::kFail;
      result.failure.status = IoError(t.What() + ": " + file_error);
      co_return result;
    }
    if (wec && lease.reused && IsConnectionLoss(wec)) {
      result.outcome = Outcome::kStale;
      result.failure.status = IoError(t.What() + ": sending the request: " + wec.message());
      co_return result;
    }
    if (wec) {
      result.failure = TransportFailure(t, "sending the request", wec, options_.idle_timeout,
                                        "idle_timeout");
      co_return result;
    }

    bhttp::response_parser<bhttp::buffer_body> parser;
    parser.body_limit(boost::none);
    parser.header_limit(64 * 1024);
    if (t.request.method == HttpMethod::kHead) parser.skip(true);
    conn.lowest().expires_at(Until(options_.first_byte_timeout, t.deadline));
    cancel.Arm();
    auto [hec, hn] = co_await bhttp::async_read_header(stream, conn.buffer, parser, NoCancel());
    if (hec && lease.reused && IsConnectionLoss(hec) && hn == 0) {
      result.outcome = Outcome::kStale;
      result.failure.status = IoError(t.What() + ": reading the response: " + hec.message());
      co_return result;
    }
    if (hec) {
      result.failure = TransportFailure(t, "waiting for the response", hec,
                                        options_.first_byte_timeout, "first_byte_timeout");
      co_return result;
    }

    auto& head = parser.get();
    int status = static_cast<int>(head.result_int());
    std::string status_line = "HTTP " + std::to_string(status) + " " +
                              std::string(head.reason());
    auto header = [&](bhttp::field f) { return std::string(head[f]); };

    bool redirect_status = status == 301 || status == 302 || status == 303 ||
                           status == 307 || status == 308;
    if (redirect_status && (t.request.method == HttpMethod::kGet ||
                            t.request.method == HttpMethod::kHead)) {
      Result<Url> target = ResolveRedirect(t.url, header(bhttp::field::location));
      if (!target.ok()) {
        result.outcome = Outcome::kFail;
        result.failure.status = IoError(t.What() + ": " + status_line + ": " +
                                        target.status().message());
        co_return result;
      }
      result.outcome = Outcome::kRedirect;
      result.redirect = *target;
      co_return result;  // the lease closes the connection (body unread)
    }

    if (status < 200 || status > 299) {
      std::string body;
      if (t.request.method != HttpMethod::kHead) {
        co_await ReadSmallBody(stream, conn, parser, t, &body);
      }
      std::string detail = ErrorCodeFromBody(body);
      std::string message = t.What() + ": " + status_line +
                            (detail.empty() ? "" : " (" + detail + ")") + ", expected " +
                            (range.empty() ? "2xx" : "206 for Range " + range);
      if (IsRetryableHttpStatus(status)) {
        result.failure.retryable = true;
        result.failure.status = Status(StatusCode::kUnavailable, message);
        std::string retry_after = header(bhttp::field::retry_after);
        if (!retry_after.empty()) {
          result.failure.retry_after = ParseRetryAfter(retry_after, std::time(nullptr));
        }
        co_return result;
      }
      StatusCode code = StatusCode::kIoError;
      if (status == 404 || status == 410) code = StatusCode::kNotFound;
      if (status == 401 || status == 403) code = StatusCode::kPermissionDenied;
      if (status == 416) code = StatusCode::kOutOfRange;
      result.outcome = Outcome::kFail;
      result.failure.status = Status(code, message);
      co_return result;
    }

    // 2xx: where in the object does this body start, what to skip, how much
    // to deliver.
    std::optional<uint64_t> content_length;
    if (parser.content_length()) content_length = *parser.content_length();
    uint64_t skip = 0;
    std::optional<uint64_t> limit;
    bool first_response = !t.have_response;
    if (status == 206) {
      auto cr = ParseContentRange(header(bhttp::field::content_range));
      if (!cr) {
        result.outcome = Outcome::kFail;
        result.failure.status = CorruptError(t.What() + ": " + status_line +
                                             " with malformed Content-Range '" +
                                             header(bhttp::field::content_range) + "'");
        co_return result;
      }
      uint64_t want_first = t.abs_first ? *t.abs_first + t.delivered
                                        : (t.request.range && !t.request.range->is_suffix
                                               ? t.request.range->first
                                               : cr->first);
      if (cr->first != want_first) {
        result.outcome = Outcome::kFail;
        result.failure.status = CorruptError(
            t.What() + ": Content-Range '" + header(bhttp::field::content_range) +
            "' does not start at the requested byte " + std::to_string(want_first));
        co_return result;
      }
      if (!t.abs_first) {
        t.abs_first = cr->first;
        t.abs_last = cr->last;
      }
      if (content_length && *content_length != cr->last - cr->first + 1) {
        result.outcome = Outcome::kFail;
        result.failure.status = CorruptError(
            t.What() + ": Content-Length " + std::to_string(*content_length) +
            " disagrees with Content-Range '" + header(bhttp::field::content_range) + "'");
        co_return result;
      }
      if (first_response) t.response.object_size = cr->total;
      limit = *t.abs_last - want_first + 1;
    } else {
      if (t.delivered > 0 && msg.count(bhttp::field::if_range) > 0) {
        result.outcome = Outcome::kFail;
        result.failure.status = Status(
            StatusCode::kUnavailable,
            t.What() + ": the object changed during the download (ETag " + t.etag +
                " no longer matches; the server sent it whole)");
        co_return result;
      }
      // The whole object (a server without ranges, or none asked for).
      if (first_response && status == 200) t.response.object_size = content_length;
      uint64_t start = 0;
      if (t.request.range && t.request.range->is_suffix) {
        if (!content_length && !t.abs_first) {
          result.outcome = Outcome::kFail;
          result.failure.status = IoError(t.What() + ": suffix range answered with a body "
                                          "of unknown length");
          co_return result;
        }
        if (!t.abs_first) {
          uint64_t total = *content_length;
          t.abs_first = total > t.request.range->suffix ? total - t.request.range->suffix : 0;
          if (total > 0) t.abs_last = total - 1;
        }
      } else if (!t.abs_first) {
        t.abs_first = t.request.range ? t.request.range->first : 0;
        if (t.request.range) t.abs_last = t.request.range->last;
        if (content_length && *content_length > 0 &&
            (!t.abs_last || *t.abs_last >= *content_length)) {
          t.abs_last = *content_length - 1;
        }
      }
      start = t.abs_first.value_or(0) + t.delivered;
      skip = start;
      if (t.abs_last) limit = *t.abs_last + 1 > start ? *t.abs_last + 1 - start : 0;
    }
    if (first_response) {
      t.have_response = true;
      t.response.status = status;
      for (const auto& field : head) {
        t.response.headers.emplace_back(Lower(field.name_string()), std::string(field.value()));
      }
      t.etag = header(bhttp::field::etag);
    }

    if (t.request.method == HttpMethod::kHead || parser.is_done()) {
      lease.Release(parser.keep_alive() && conn.buffer.size() == 0);
      result.outcome = Outcome::kDone;
      co_return result;
    }

    bool sized = parser.content_length().has_value() && !parser.chunked();
    if (sized) co_return co_await ReadSizedBody(stream, lease, parser, t, skip, limit, cancel);

    // Chunked or until-close bodies: Beast parses, into a pooled buffer.
    BodyBuffer chunk(this);
    while (!parser.is_done()) {
      parser.get().body().data = chunk.data();
      parser.get().body().size = kBodyBufferBytes;
      conn.lowest().expires_at(Until(options_.idle_timeout, t.deadline));
      cancel.Arm();
      auto [rec, rn] = co_await bhttp::async_read(stream, conn.buffer, parser, NoCancel());
      if (rec == bhttp::error::need_buffer) rec = {};
      size_t got = kBodyBufferBytes - parser.get().body().size;
      if (!co_await Deliver(t, std::string_view(chunk.data(), got), skip, limit, result)) {
        co_return result;
      }
      if (rec) {
        BodyError(t, rec == bhttp::error::partial_message, rec, result);
        co_return result;
      }
    }
    if (EndedShortOfTheRange(t, limit, result)) co_return result;
    lease.Release(parser.keep_alive() && conn.buffer.size() == 0);
    result.outcome = Outcome::kDone;
    co_return result;
  }

  // A body of known Content-Length (the common case: every ranged GET).
  // Beast only parsed the header; the body is read straight from the
  // stream into large pooled buffers (no parser copy, no per-read timer:
  // a Watchdog enforces the idle and overall timeouts) and handed on one
  // full buffer at a time; a sink writes one buffer while the next one is
  // received.
  template <typename Stream>
  awaitable<AttemptResult> ReadSizedBody(Stream& stream, Lease& lease,
                                         bhttp::response_parser<bhttp::buffer_body>& parser,
                                         Transfer& t, uint64_t skip,
                                         std::optional<uint64_t> limit, ScopedCancel& cancel) {
    Connection& conn = *lease.conn;
    AttemptResult result;
    result.outcome = Outcome::kRetry;
    uint64_t wire_left = *parser.content_length();
    conn.lowest().expires_never();
    Watchdog dog(executor_, conn, options_.idle_timeout, t.deadline);
    // Two buffers: while a sink writes one, the next is received.
    BodyBuffer buf_a(this), buf_b(this);
    char* buf = buf_a.data();
    char* spare = buf_b.data();
    PendingSink pending(executor_);
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
          std::tie(rec, n) = co_await conn.lowest().socket().async_read_some(
              asio::buffer(buf + fill, want), NoCancel());
        } else {
          std::tie(rec, n) = co_await stream.async_read_some(
              asio::buffer(buf + fill, want), NoCancel());
        }
        fill += n;
        wire_left -= n;
        if (n > 0) dog.Progress();
        if (rec) break;
      }
      std::string_view data = Trim(std::string_view(buf, fill), skip, limit);
      // In order: the previous buffer's sink call ends before this one starts.
      ok = co_await AwaitSink(pending, t, result);
      if (!ok) break;
      if (t.sink != nullptr && !data.empty()) {
        StartSink(pending, t, data);
        std::swap(buf, spare);
      } else if (!data.empty()) {
        ok = Append(t, data, result);
        if (!ok) break;
      }
      fill = 0;
      if (rec || wire_left == 0) break;
      cancel.Arm();
    }
    if (!co_await AwaitSink(pending, t, result) || !ok) co_return result;
    if (rec) {
      if (dog.fired()) rec = beast::error::timeout;
      bool closed = rec == asio::error::eof || rec == ssl::error::stream_truncated;
      BodyError(t, closed, rec, result);
      co_return result;
    }
    if (EndedShortOfTheRange(t, limit, result)) co_return result;
    lease.Release(parser.keep_alive() && conn.buffer.size() == 0);
    result.outcome = Outcome::kDone;
    co_return result;
  }

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
  void StartSink(PendingSink& p, Transfer& t, std::string_view data) {
    p.busy = true;
    p.bytes = data.size();
    asio::co_spawn(executor_, (*t.sink)(data), [&p](std::exception_ptr e, Status s) {
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
      result.outcome = Outcome::kFail;
      result.failure.status = p.status;
      p.bytes = 0;
      co_return false;
    }
    t.delivered += p.bytes;
    t.response.body_bytes = t.delivered;
    p.bytes = 0;
    co_return true;
  }

  // Drops the first `skip` bytes (a server that ignored the Range) and
  // anything past `limit`; counts what is left against `limit`.
  static std::string_view Trim(std::string_view data, uint64_t& skip,
                               std::optional<uint64_t>& limit) {
    if (skip > 0) {
      size_t drop = static_cast<size_t>(std::min<uint64_t>(skip, data.size()));
      data.remove_prefix(drop);
      skip -= drop;
    }
    if (limit && data.size() > *limit) data = data.substr(0, static_cast<size_t>(*limit));
    if (limit) *limit -= data.size();
    return data;
  }

  // Appends to the buffered body. False: over max_buffered_body.
  bool Append(Transfer& t, std::string_view data, AttemptResult& result) {
    if (t.buffer->size() + data.size() > options_.max_buffered_body) {
      result.outcome = Outcome::kFail;
      result.failure.status = OutOfRangeError(
          t.What() + ": body larger than max_buffered_body (" +
          std::to_string(options_.max_buffered_body) + " bytes); stream it to a sink");
      return false;
    }
    t.buffer->append(data);
    t.delivered += data.size();
    t.response.body_bytes = t.delivered;
    return true;
  }

  // Hands body bytes on, in order, after Trim(): appends to the buffered
  // body or awaits the sink. False: `result` says why.
  awaitable<bool> Deliver(Transfer& t, std::string_view data, uint64_t& skip,
                          std::optional<uint64_t>& limit, AttemptResult& result) {
    data = Trim(data, skip, limit);
    if (data.empty()) co_return true;
    if (t.buffer != nullptr) co_return Append(t, data, result);
    Status s = co_await (*t.sink)(data);
    if (!s.ok()) {
      result.outcome = Outcome::kFail;
      result.failure.status = s;
      co_return false;
    }
    t.delivered += data.size();
    t.response.body_bytes = t.delivered;
    co_return true;
  }

  // The failure of a body read that stopped early: `closed` when the
  // server closed the connection (truncation), else a transport error or
  // timeout. Only GETs can resume (by range) on the next attempt.
  // A body that ended cleanly but `limit` bytes before the requested range's
  // end: a retryable truncation (the retry resumes from the last byte).
  static bool EndedShortOfTheRange(const Transfer& t, std::optional<uint64_t> limit,
                                   AttemptResult& result) {
    if (!limit || *limit == 0) return false;
    result.failure.retryable = true;
    result.failure.status = IoError(t.What() + ": body ended " + std::to_string(*limit) +
                                    " bytes short of the requested range (truncated)");
    return true;
  }

  void BodyError(const Transfer& t, bool closed, const boost::system::error_code& ec,
                 AttemptResult& result) {
    std::string during = "reading the body (" + std::to_string(t.delivered) + " bytes";
    if (t.abs_last) {
      during += " of " + std::to_string(*t.abs_last - t.abs_first.value_or(0) + 1);
    }
    during += " received)";
    if (closed) {
      result.failure.retryable = true;
      result.failure.status = IoError(t.What() + ": " + during +
                                      ": connection closed before the end of the body "
                                      "(truncated)");
    } else {
      result.failure = TransportFailure(t, during.c_str(), ec, options_.idle_timeout,
                                        "idle_timeout");
    }
    if (t.request.method != HttpMethod::kGet) result.outcome = Outcome::kFail;
  }

  // Reads up to kMaxErrorBody bytes of an error response's body.
  template <typename Stream>
  awaitable<void> ReadSmallBody(Stream& stream, Connection& conn,
                                bhttp::response_parser<bhttp::buffer_body>& parser,
                                const Transfer& t, std::string* out) {
    ScopedCancel cancel(co_await CurrentState(), conn);
    std::string buf(kMaxErrorBody, '\0');
    while (!parser.is_done() && out->size() < kMaxErrorBody) {
      parser.get().body().data = buf.data();
      parser.get().body().size = buf.size() - out->size();
      conn.lowest().expires_at(Until(options_.idle_timeout, t.deadline));
      cancel.Arm();
      auto [ec, n] = co_await bhttp::async_read(stream, conn.buffer, parser, NoCancel());
      size_t got = buf.size() - out->size() - parser.get().body().size;
      out->append(buf.data(), got);
      if (ec && ec != bhttp::error::need_buffer) break;
    }
  }

  ssl::context ssl_;
  std::unordered_map<std::string, HostPool> pools_;
  std::mt19937_64 rng_;
  std::vector<std::unique_ptr<char[]>> free_buffers_;
  std::atomic<uint64_t> opened_{0}, reused_{0}, stale_{0}, retries_{0};
};

std::string HttpResponse::Header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (EqualsIgnoreCase(key, name)) return value;
  }
  return {};
}

HttpClient::HttpClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpClient::~HttpClient() = default;

Result<std::unique_ptr<HttpClient>> HttpClient::Create(asio::any_io_executor executor,
                                                       HttpClientOptions options) {
  if (options.download_retry < 0 || options.max_connections_per_host < 1 ||
      options.download_timeout.count() <= 0) {
    return InvalidArgumentError(
        "HTTP client options: download_retry must be >= 0, max_connections_per_host >= 1, "
        "download_timeout > 0");
  }
  auto impl = std::make_unique<Impl>(std::move(executor), std::move(options));
  Status tls = impl->InitTls();
  if (!tls.ok()) return tls;
  return std::unique_ptr<HttpClient>(new HttpClient(std::move(impl)));
}

awaitable<Result<HttpResponse>> HttpClient::Send(HttpRequest request) {
  return impl_->Send(std::move(request), nullptr);
}

awaitable<Result<HttpResponse>> HttpClient::Send(HttpRequest request, BodySink sink) {
  // The sink lives in this coroutine's frame for the whole request.
  auto run = [](Impl* impl, HttpRequest request, BodySink sink)
      -> awaitable<Result<HttpResponse>> {
    co_return co_await impl->Send(std::move(request), &sink);
  };
  return run(impl_.get(), std::move(request), std::move(sink));
}

namespace {
template <typename T>
awaitable<void> StoreInto(awaitable<T> task, std::shared_ptr<std::optional<T>> out) {
  out->emplace(co_await std::move(task));
}

template <typename T>
T RunBlocking(asio::any_io_executor executor, awaitable<T> task) {
  auto out = std::make_shared<std::optional<T>>();
  auto done = std::make_shared<std::promise<std::exception_ptr>>();
  std::future<std::exception_ptr> future = done->get_future();
  asio::co_spawn(executor, StoreInto<T>(std::move(task), out),
                 [done](std::exception_ptr e) { done->set_value(e); });
  try {
    std::exception_ptr e = future.get();
    if (!e && out->has_value()) return std::move(**out);
    return InternalError("HTTP request ended without a result");
  } catch (const std::future_error&) {
    return Status(StatusCode::kCancelled, "the event loop stopped before the request finished");
  }
}
}  // namespace

Result<HttpResponse> HttpClient::SendBlocking(HttpRequest request) {
  return RunBlocking(impl_->executor_, Send(std::move(request)));
}

Result<HttpResponse> HttpClient::GetToFileBlocking(std::string url, std::string path,
                                                   GetToFileOptions options,
                                                   HttpHeaders extra_headers) {
  return RunBlocking(impl_->executor_, GetToFile(std::move(url), std::move(path), options,
                                                 std::move(extra_headers)));
}

HttpClientStats HttpClient::stats() const { return impl_->Stats(); }
const HttpClientOptions& HttpClient::options() const { return impl_->options_; }
asio::any_io_executor HttpClient::executor() const { return impl_->executor_; }

}  // namespace sluice
