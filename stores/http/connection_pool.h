// The HTTP client's connections: per-host keep-alive pools under a cap,
// connecting (resolve, TCP, TLS handshake with verification) and handing
// connections out as Leases that go back to the pool, or are closed, when
// released.
//
// Internal to stores/http. Runs on the client's executor, one thread at a
// time (the pool is not locked); the counters are readable from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "base/status.h"
#include "stores/http/http_client.h"
#include "stores/http/http_connection.h"
#include "stores/http/url.h"

namespace sluice::http_detail {

class ConnectionPool;

// A connection taken from the pool. Destroyed unreleased, it is closed (its
// exchange did not finish cleanly); Release(true) pools it again.
class Lease {
 public:
  Lease(ConnectionPool* pool, std::string key) : pool_(pool), key_(std::move(key)) {}
  Lease(Lease&& other) noexcept
      : pool_(std::exchange(other.pool_, nullptr)),
        key_(std::move(other.key_)),
        conn(std::move(other.conn)),
        reused(other.reused) {}
  Lease& operator=(Lease&&) = delete;
  ~Lease() { Release(false); }
  // Gives the connection back: pooled when `reusable`, else closed.
  void Release(bool reusable);

 private:
  ConnectionPool* pool_;
  std::string key_;

 public:
  std::unique_ptr<Connection> conn;
  bool reused = false;  // taken from the pool rather than newly connected
};

class ConnectionPool {
 public:
  // `options` must outlive the pool.
  ConnectionPool(boost::asio::any_io_executor executor, const HttpClientOptions& options);
  ~ConnectionPool();
  ConnectionPool(const ConnectionPool&) = delete;
  ConnectionPool& operator=(const ConnectionPool&) = delete;

  // Chooses the CA bundle (options.ca_file, else $SSL_CERT_FILE, else the
  // system's) and checks a named one can be opened; errors name the file.
  // The TLS context and the bundle are made at the first TLS connection
  // (TlsContext): the system's bundle takes tens of milliseconds to parse,
  // and OpenSSL 3's context milliseconds to make, which a process reading
  // only http:// (or a loopback S3) should not pay before its first sample.
  Status InitTls();

  // A pooled connection to `url`'s host (unless `fresh_only`), or a new one
  // counting toward max_connections_per_host; at the cap, waits for a slot
  // until `deadline`. Errors: kDeadlineExceeded (connect_timeout or the
  // deadline), kPermissionDenied (TLS verification), kCancelled, kIoError.
  boost::asio::awaitable<Result<Lease>> Acquire(const Url& url, Clock::time_point deadline,
                                                bool fresh_only);

  // A pooled connection turned out closed by the server when reused.
  void CountStale() { ++stale_; }

  // Connections to all hosts handed out and not yet returned.
  int active() const { return active_.load(); }
  uint64_t opened() const { return opened_.load(); }
  uint64_t reused() const { return reused_.load(); }
  uint64_t stale() const { return stale_.load(); }

 private:
  friend class Lease;
  struct HostPool {
    std::vector<std::unique_ptr<Connection>> idle;
    int active = 0;
    std::deque<std::shared_ptr<boost::asio::steady_timer>> waiters;
  };

  void Return(const std::string& key, std::unique_ptr<Connection> conn, bool reusable);
  // The TLS client context, made (and the chosen CA bundle parsed, unless
  // verify_tls is off) at the first call; later calls give the first
  // outcome. Owned by the pool.
  Result<SSL_CTX*> TlsContext();
  boost::asio::awaitable<Result<std::unique_ptr<Connection>>> Connect(
      const Url& url, Clock::time_point deadline);

  boost::asio::any_io_executor executor_;
  const HttpClientOptions& options_;
  std::string ca_file_;                           // empty: the system's bundle
  std::optional<boost::asio::ssl::context> ssl_;  // TlsContext makes it
  std::optional<Status> tls_status_;              // TlsContext's outcome, once run
  std::unordered_map<std::string, HostPool> pools_;
  std::atomic<uint64_t> opened_{0}, reused_{0}, stale_{0};
  std::atomic<int> active_{0};  // the sum of the pools' `active`
};

}  // namespace sluice::http_detail
