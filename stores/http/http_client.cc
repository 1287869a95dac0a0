// The client: one logical request across its attempts (HttpRetryPolicy),
// redirects (redirect_policy.h) and stale pooled connections; each attempt
// is one exchange (http_exchange.h) on a connection from the pool
// (connection_pool.h).
#include "stores/http/http_client.h"

#include <algorithm>
#include <exception>
#include <mutex>
#include <optional>
#include <string>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "base/ascii.h"
#include "base/asio/co_status.h"
#include "stores/http/body_buffers.h"
#include "stores/http/connection_pool.h"
#include "stores/http/host_stats.h"
#include "stores/http/http_exchange.h"
#include "stores/http/http_transfer.h"
#include "stores/http/redirect_policy.h"
#include "stores/http/retry_policy.h"

namespace sluice {

namespace asio = boost::asio;
using asio::awaitable;
using http_detail::AttemptResult;
using http_detail::Clock;
using http_detail::Failure;
using http_detail::Outcome;
using http_detail::Transfer;

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

class HttpClient::Impl {
 public:
  Impl(asio::any_io_executor executor, HttpClientOptions options)
      : executor_(std::move(executor)),
        options_(std::move(options)),
        pool_(executor_, options_),
        retry_(options_.download_retry, options_.download_timeout, options_.backoff_base,
               options_.backoff_max) {}

  Status Init() { return pool_.InitTls(); }

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
        result = CancelledError("request cancelled");
      } else {
        result = InternalError(std::string("HTTP request failed: ") + e.what());
      }
    }
    co_await asio::this_coro::throw_if_cancelled(throw_before);
    co_return result;
  }

  bool LocalLink() const { return first_byte_.Below(options_.local_first_byte); }

  HttpClientStats Stats() const {
    return {pool_.opened(), pool_.reused(), pool_.stale(), retries_.load()};
  }

  std::pair<int, std::shared_ptr<void>> ClaimConnections(
      const std::function<int(int free)>& decide) {
    std::lock_guard<std::mutex> lock(claims_mu_);
    // The claims' parts hold connections once they run, so the larger count
    // is the one that knows more: promised and not yet taken, or taken by
    // requests that claimed nothing.
    const int used = std::max(claimed_, pool_.active());
    const int n = std::max(decide(std::max(options_.max_connections_per_host - used, 0)), 1);
    claimed_ += n;
    std::shared_ptr<void> hold(static_cast<void*>(this), [n](void* impl) {
      Impl* self = static_cast<Impl*>(impl);
      std::lock_guard<std::mutex> lock(self->claims_mu_);
      self->claimed_ -= n;
    });
    return {n, std::move(hold)};
  }

  asio::any_io_executor executor_;
  const HttpClientOptions options_;

 private:
  static Status CheckRequest(const Transfer& t) {
    const std::optional<ByteRange>& range = t.request.range;
    if (range && range->last && *range->last < range->first) {
      return InvalidArgumentError(t.What() + ": range end " + std::to_string(*range->last) +
                                  " before its start " + std::to_string(range->first));
    }
    if (range && t.request.method != HttpMethod::kGet) {
      return InvalidArgumentError(t.What() + ": a byte range needs GET");
    }
    return Status::Ok();
  }

  // One attempt: a connection, then one exchange on it.
  awaitable<AttemptResult> Attempt(Transfer& t, bool fresh_only) {
    Result<http_detail::Lease> lease = co_await pool_.Acquire(t.url, t.deadline, fresh_only);
    if (lease.ok()) co_return co_await http_detail::Exchange(context_, *lease, t);
    AttemptResult result;
    result.failure.status = lease.status();
    result.failure.timed_out = IsDeadlineExceeded(lease.status());
    result.failure.retryable = HttpRetryPolicy::IsRetryableConnectFailure(lease.status());
    if (!result.failure.retryable) {
      result = AttemptResult::Fail(Status(lease.status().code(),
                                          t.What() + ": " + lease.status().message()));
    }
    co_return result;
  }

  // One logical request in its host's counters (host_stats.h): begun,
  // in flight until it ends, then its bytes, and its transfer time when it
  // succeeded or its failure.
  struct RequestCount {
    explicit RequestCount(const Transfer& t) : t(t), start(Clock::now()) {
      t.host_stats->requests.fetch_add(1, std::memory_order_relaxed);
      t.host_stats->in_flight.fetch_add(1, std::memory_order_relaxed);
    }
    ~RequestCount() {
      HostStats& s = *t.host_stats;
      s.in_flight.fetch_sub(1, std::memory_order_relaxed);
      s.bytes.fetch_add(t.delivered, std::memory_order_relaxed);
      const auto took = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start);
      s.busy_us.fetch_add(static_cast<uint64_t>(took.count()), std::memory_order_relaxed);
      if (succeeded) {
        s.transfer.Record(took);
      } else {
        s.failed.fetch_add(1, std::memory_order_relaxed);
      }
    }
    const Transfer& t;
    const Clock::time_point start;
    bool succeeded = false;
  };

  // Counts an attempt that was sent (not a stale pooled connection's) and
  // what it failed with.
  static void CountAttempt(const Transfer& t, const AttemptResult& result) {
    if (result.outcome == Outcome::kStale) return;
    HostStats& s = *t.host_stats;
    s.attempts.fetch_add(1, std::memory_order_relaxed);
    if (result.outcome != Outcome::kRetry && result.outcome != Outcome::kFail) return;
    const Failure& f = result.failure;
    if (f.status.code() == StatusCode::kCancelled) return;
    const int http = f.http_status;
    if (http == 429) s.throttles_429.fetch_add(1, std::memory_order_relaxed);
    if (http == 503) s.throttles_503.fetch_add(1, std::memory_order_relaxed);
    HttpErrorKind kind = HttpErrorKind::kOther;
    if (http == 429 || http == 503) {
      kind = HttpErrorKind::kThrottled;
    } else if (http >= 500 || http == 408) {
      kind = HttpErrorKind::kServer;
    } else if (http >= 400) {
      kind = HttpErrorKind::kClient;
    } else if (f.timed_out || f.status.code() == StatusCode::kDeadlineExceeded) {
      kind = HttpErrorKind::kTimeout;
    } else if (f.status.code() == StatusCode::kIoError) {
      kind = HttpErrorKind::kConnection;
    }
    s.CountError(kind);
  }

  awaitable<Result<HttpResponse>> SendImpl(HttpRequest request, BodySink* sink) {
    Transfer t;
    SLUICE_CO_ASSIGN_OR_RETURN(t.url, ParseUrl(request.url));
    t.request = std::move(request);
    t.sink = sink;
    std::string buffered;
    if (sink == nullptr) t.buffer = &buffered;
    t.deadline = Clock::now() + options_.download_timeout;
    SLUICE_CO_RETURN_IF_ERROR(CheckRequest(t));
    t.host_stats = HostStatsFor(t.url.PoolKey());
    RequestCount counted(t);

    int attempts = 0;        // counted attempts (not stale or redirected ones)
    int redirects = 0;
    int stale_retries = 0;
    bool fresh_only = false;  // after a stale connection: a new one
    Failure last;
    for (;;) {
      SLUICE_CO_RETURN_IF_ERROR(retry_.CheckDeadline(t.What(), attempts, last.status, t.deadline));
      ++attempts;
      AttemptResult result = co_await Attempt(t, std::exchange(fresh_only, false));
      t.response.attempts = attempts;
      CountAttempt(t, result);
      // A cancelled operation looks like a transport error; do not retry it.
      // (Callers may have turned off throw_if_cancelled, so check.)
      asio::cancellation_state state = co_await asio::this_coro::cancellation_state;
      if (state.cancelled() != asio::cancellation_type::none) {
        co_return CancelledError(t.What() + ": cancelled");
      }
      switch (result.outcome) {
        case Outcome::kDone:
          counted.succeeded = true;
          t.response.final_url = t.url.Redacted();
          if (t.buffer != nullptr) t.response.body = std::move(buffered);
          co_return std::move(t.response);
        case Outcome::kFail:
          co_return result.failure.status;
        case Outcome::kStale:
          // The server closed a pooled connection as we reused it: not the
          // server's fault, not counted; go again on a fresh connection.
          --attempts;
          pool_.CountStale();
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
          SLUICE_CO_RETURN_IF_ERROR(PrepareRedirect(t.request, t.url, result.redirect));
          t.url = result.redirect;
          continue;
        case Outcome::kRetry:
          break;
      }
      last = result.failure;
      Result<std::chrono::milliseconds> delay = retry_.NextDelay(
          t.What(), attempts, last.status, last.timed_out, last.retry_after, t.deadline);
      if (!delay.ok()) co_return delay.status();
      ++retries_;
      t.host_stats->retries.fetch_add(1, std::memory_order_relaxed);
      asio::steady_timer timer(executor_, *delay);
      auto [ec] = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
      if (ec) co_return CancelledError(t.What() + ": cancelled");
    }
  }

  http_detail::ConnectionPool pool_;
  http_detail::BodyBufferPool buffers_;
  http_detail::FirstByteTime first_byte_;
  http_detail::ExchangeContext context_{executor_, options_, buffers_, first_byte_};
  HttpRetryPolicy retry_;
  std::atomic<uint64_t> retries_{0};
  std::mutex claims_mu_;
  int claimed_ = 0;  // connections promised to claims still held (claims_mu_)
};

Status ObjectSizeChangedError(std::string_view object, uint64_t stated, uint64_t expected,
                              bool at_least) {
  return CorruptError(std::string(object) + ": the object is " + (at_least ? "at least " : "") +
                      std::to_string(stated) + " bytes, index.json says " +
                      std::to_string(expected) + " (the remote changed since it was indexed?)")
      .WithMark(StatusMark::kSourceChanged);
}

Status ObjectVersionChangedError(std::string_view object, std::string_view listed,
                                 std::string_view now, uint64_t offset, uint64_t length) {
  return CorruptError(std::string(object) + ": changed since it was listed (ETag " +
                      std::string(now) + ", listed " + std::string(listed) + "); bytes " +
                      std::to_string(offset) + ".." + std::to_string(offset + length) +
                      " not read")
      .WithMark(StatusMark::kSourceChanged);
}

Status AnswerIsOfVersion(std::string_view object, std::string_view asked, std::string_view now,
                         uint64_t offset, uint64_t length) {
  if (asked.empty() || now.empty() || SameEtag(now, asked)) return Status::Ok();
  return ObjectVersionChangedError(object, asked, now, offset, length);
}

bool IsObjectChangedError(const Status& s) {
  return IsCorrupt(s) && s.mark() == StatusMark::kSourceChanged;
}

bool SameEtag(std::string_view a, std::string_view b) {
  auto bare = [](std::string_view e) {
    if (e.size() >= 2 && e.front() == '"' && e.back() == '"') e = e.substr(1, e.size() - 2);
    return e;
  };
  return bare(a) == bare(b);
}

std::string HttpResponse::Header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (AsciiEqualsIgnoreCase(key, name)) return value;
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
  SLUICE_RETURN_IF_ERROR(impl->Init());
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

HttpClientStats HttpClient::stats() const { return impl_->Stats(); }
std::pair<int, std::shared_ptr<void>> HttpClient::ClaimConnections(
    const std::function<int(int free)>& decide) {
  return impl_->ClaimConnections(decide);
}
bool HttpClient::LocalLink() const { return impl_->LocalLink(); }
const HttpClientOptions& HttpClient::options() const { return impl_->options_; }
asio::any_io_executor HttpClient::executor() const { return impl_->executor_; }

}  // namespace sluice
