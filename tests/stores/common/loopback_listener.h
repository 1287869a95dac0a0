// The listening half of the tests' hand-written HTTP servers
// (FakeHttpServer, and engine/dataset's StallingFileServer and
// TailHoldingServer): a socket on 127.0.0.1 at a free port, a thread that
// accepts, and one thread per connection that runs `serve` with the
// connection's descriptor (serve closes it). Stop() (also the destructor)
// stops accepting and joins every connection's thread, so a serve that
// waits must wait through Ready, which answers false once stopping.
// Aborts when it cannot listen. Ready, ReadHead and SendAll may be called
// from any thread.
#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace sluice::testing {

// A TCP socket listening on 127.0.0.1 at a free port, close-on-exec: its
// descriptor, with the port in *port; -1 (nothing left open) when it
// cannot listen.
int ListenOnLoopback(int backlog, int* port);

class LoopbackListener {
 public:
  explicit LoopbackListener(std::function<void(int fd)> serve);
  ~LoopbackListener() { Stop(); }
  LoopbackListener(const LoopbackListener&) = delete;
  LoopbackListener& operator=(const LoopbackListener&) = delete;

  void Stop();
  bool stopping() const { return stop_.load(); }
  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  // Waits up to 20 ms at a time until `events` (or an error or hang-up)
  // on `fd`; false once stopping.
  bool Ready(int fd, short events) const;
  // A request's head, up to and including its blank line (and whatever
  // came after it in the same reads); less when the peer closed first or
  // we stop.
  std::string ReadHead(int fd) const;
  // Sends all of `bytes` without SIGPIPE: false when the peer went first
  // or we stop.
  bool SendAll(int fd, std::string_view bytes) const;

 private:
  void Accept();

  const std::function<void(int)> serve_;
  int port_ = 0;  // before fd_, which sets it
  int fd_ = -1;
  std::atomic<bool> stop_{false};
  std::mutex workers_mu_;
  std::vector<std::thread> workers_;
  std::thread acceptor_;  // last: started once the rest is made
};

}  // namespace sluice::testing
