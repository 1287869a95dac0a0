// A TCP proxy for tests that sits between the client and nginx and misbehaves
// on a schedule: one Fault per accepted connection, in order, then kPass.
// Plain POSIX sockets and one thread per connection; Stop() (and the
// destructor) closes everything and joins.
#pragma once

#include <atomic>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace sluice::testing {

struct Fault {
  enum Kind {
    kPass,          // forward both ways until either side closes
    kReset,         // forward `bytes` response bytes, then reset (RST)
    kTruncate,      // forward `bytes` response bytes, then close (FIN)
    kStall,         // read the request, never answer
    kRaw,           // read the request, answer `raw`, close
    kRawThenDrop,   // answer `raw` (keep-alive), then close on the next request
  };
  Kind kind = kPass;
  size_t bytes = 0;
  std::string raw;

  static Fault Pass() { return {}; }
  static Fault Reset(size_t after) { return {kReset, after, ""}; }
  static Fault Truncate(size_t after) { return {kTruncate, after, ""}; }
  static Fault Stall() { return {kStall, 0, ""}; }
  static Fault Raw(std::string raw) { return {kRaw, 0, std::move(raw)}; }
  static Fault RawThenDrop(std::string raw) { return {kRawThenDrop, 0, std::move(raw)}; }
  // "HTTP/1.1 <status> X", Content-Length, Connection: close, optional
  // Retry-After, and `body`.
  static Fault Status(int status, const std::string& retry_after = "",
                      const std::string& body = "");
};

class FaultProxy {
 public:
  explicit FaultProxy(int upstream_port);
  ~FaultProxy();
  void Schedule(std::vector<Fault> faults);
  int port() const { return port_; }
  int connections() const { return connections_.load(); }
  void Stop();

 private:
  void AcceptLoop();
  void Serve(int client, Fault fault);

  int upstream_port_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> connections_{0};
  std::mutex mu_;
  std::deque<Fault> schedule_;
  std::vector<std::thread> workers_;
  std::thread acceptor_;
};

}  // namespace sluice::testing
