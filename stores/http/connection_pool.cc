#include "stores/http/connection_pool.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <variant>

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/this_coro.hpp>

#include "base/env.h"
#include "stores/http/http_text.h"

namespace sluice::http_detail {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace ssl = boost::asio::ssl;
using tcp = boost::asio::ip::tcp;
using asio::awaitable;

namespace {
constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);
}  // namespace

void Lease::Release(bool reusable) {
  if (pool_ != nullptr) pool_->Return(key_, std::move(conn), reusable);
  pool_ = nullptr;
}

ConnectionPool::ConnectionPool(asio::any_io_executor executor, const HttpClientOptions& options)
    : executor_(std::move(executor)), options_(options) {}

ConnectionPool::~ConnectionPool() { pools_.clear(); }

Status ConnectionPool::InitTls() {
  ca_file_ = options_.ca_file;
  if (ca_file_.empty()) {
    const char* env = std::getenv("SSL_CERT_FILE");
    if (env != nullptr) ca_file_ = env;
  }
  // Only that the file can be opened: parsing it waits for the first TLS
  // connection (TlsContext), but a wrong path is a mistake worth naming now.
  if (!ca_file_.empty()) {
    auto opened = Env::Default()->Open(ca_file_, OpenMode::kRead);
    if (!opened.ok()) {
      return InvalidArgumentError("cannot load TLS CA file '" + ca_file_ +
                                  "': " + std::strerror(opened.status().os_error()));
    }
  }
  return Status::Ok();
}

Result<SSL_CTX*> ConnectionPool::TlsContext() {
  if (!tls_status_.has_value()) {
    ssl_.emplace(ssl::context::tls_client);
    ssl_->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                      ssl::context::no_sslv3 | ssl::context::no_tlsv1 |
                      ssl::context::no_tlsv1_1);
    boost::system::error_code ec;
    if (!options_.verify_tls) {
      tls_status_ = Status::Ok();  // nothing to verify against
    } else if (!ca_file_.empty()) {
      ssl_->load_verify_file(ca_file_, ec);
      tls_status_ = ec ? InvalidArgumentError("cannot load TLS CA file '" + ca_file_ + "': " +
                                              ec.message())
                       : Status::Ok();
    } else {
      ssl_->set_default_verify_paths(ec);
      tls_status_ = ec ? IoError("cannot load the system CA certificates: " + ec.message())
                       : Status::Ok();
    }
  }
  if (!tls_status_->ok()) return *tls_status_;
  return ssl_->native_handle();
}

void ConnectionPool::Return(const std::string& key, std::unique_ptr<Connection> conn,
                            bool reusable) {
  auto it = pools_.find(key);
  if (it == pools_.end()) return;
  HostPool& pool = it->second;
  --pool.active;
  --active_;
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

awaitable<Result<Lease>> ConnectionPool::Acquire(const Url& url, Clock::time_point deadline,
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
      ++active_;
      ++reused_;
      Lease lease(this, key);
      lease.conn = std::move(conn);
      lease.reused = true;
      co_return lease;
    }
    if (pool.active < options_.max_connections_per_host) {
      ++pool.active;
      ++active_;
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
      co_return CancelledError("cancelled while waiting for a connection to " + key);
    }
    if (Clock::now() >= deadline) {
      co_return DeadlineExceededError("waited download_timeout for a free connection to " + key);
    }
  }
}

awaitable<Result<std::unique_ptr<Connection>>> ConnectionPool::Connect(
    const Url& url, Clock::time_point deadline) {
  using namespace asio::experimental::awaitable_operators;
  auto conn = std::make_unique<Connection>();
  conn->key = url.PoolKey();
  conn->host_port = url.Authority();
  if (!url.explicit_port) conn->host_port += ":" + std::to_string(url.port);
  Clock::time_point connect_deadline = std::min(Clock::now() + options_.connect_timeout, deadline);
  auto timed_out = [&](const std::string& what) {
    return DeadlineExceededError(what + " " + conn->host_port + " timed out after " +
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
    auto result = co_await (resolver.async_resolve(url.host, std::to_string(url.port), kTuple) ||
                            timer.async_wait(kTuple));
    if (result.index() == 1) co_return timed_out("resolving");
    auto [rec, results] = std::get<0>(std::move(result));
    if (rec) co_return IoError("cannot resolve host '" + url.host + "': " + rec.message());
    for (const auto& entry : results) endpoints.push_back(entry.endpoint());
  }

  conn->tcp = std::make_unique<beast::tcp_stream>(executor_);
  asio::cancellation_state cancel_state = co_await CurrentState();
  conn->tcp->expires_at(connect_deadline);
  std::optional<ScopedCancel> cancel_connect(std::in_place, cancel_state, *conn);
  auto [cec, endpoint] = co_await conn->tcp->async_connect(endpoints, NoCancel());
  cancel_connect.reset();
  if (cec == beast::error::timeout) co_return timed_out("connecting to");
  if (cec) co_return IoError("cannot connect to " + conn->host_port + ": " + cec.message());
  conn->tcp->socket().set_option(tcp::no_delay(true), ec);

  if (url.is_tls()) {
    Result<SSL_CTX*> context = TlsContext();
    if (!context.ok()) co_return context.status();
    Result<std::unique_ptr<TlsStream>> tls =
        TlsStream::Create(std::move(*conn->tcp), *context, kTlsReceiveBytes);
    if (!tls.ok()) co_return tls.status();
    conn->tls = std::move(*tls);
    conn->tcp.reset();
    conn->tls->SetPeer(url.host, is_ip_literal, options_.verify_tls);
    conn->lowest().expires_at(connect_deadline);
    ScopedCancel cancel_handshake(cancel_state, *conn);
    auto [hec] = co_await conn->tls->async_handshake(NoCancel());
    if (hec == beast::error::timeout) co_return timed_out("TLS handshake with");
    if (hec) {
      if (!conn->tls->verify_error().empty()) {
        co_return PermissionDeniedError("TLS certificate verification failed for " +
                                        conn->host_port + ": " + conn->tls->verify_error());
      }
      co_return IoError("TLS handshake with " + conn->host_port + " failed: " + hec.message());
    }
  }
  conn->lowest().expires_never();
  co_return conn;
}

}  // namespace sluice::http_detail
