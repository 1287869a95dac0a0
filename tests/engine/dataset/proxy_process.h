// What the forked test proxies (RequestLogProxy, ChaosProxy) share: loopback
// sockets, and a child process that accepts connections and hands each to a
// thread of its own. Forking before the test starts threads is the caller's
// rule (see each proxy).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace sluice::testing {

// Sends all `n` bytes (MSG_NOSIGNAL); false when the peer is gone.
bool SendAll(int fd, const char* data, size_t n);

// A connected socket to 127.0.0.1:port, or -1.
int ConnectLoopback(int port);

// A proxy process: Start() binds 127.0.0.1 on a free port in the calling
// process (so the port accepts connections as soon as it returns), opens
// `log_path` for appending (truncated), and forks a child that accepts
// forever, calling on_accept(client fd, connection number, log fd) in the
// child for each connection. The destructor kills (SIGKILL) and reaps it.
class ProxyProcess {
 public:
  using OnAccept = std::function<void(int client, uint64_t connection, int log_fd)>;
  // False when the socket, the log or the fork fails.
  bool Start(const std::string& log_path, const OnAccept& on_accept);
  ~ProxyProcess();

  int port() const { return port_; }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
};

}  // namespace sluice::testing
