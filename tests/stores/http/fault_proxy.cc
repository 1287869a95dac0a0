#include "tests/stores/http/fault_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

namespace sluice::testing {
namespace {

bool SendAll(int fd, const char* data, size_t n) {
  while (n > 0) {
    ssize_t w = send(fd, data, n, MSG_NOSIGNAL);
    if (w <= 0) return false;
    data += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

// Waits until `fd` is readable, the stop flag is set, or `ms` elapse.
bool WaitReadable(int fd, const std::atomic<bool>& stop, int ms = 10000) {
  for (int waited = 0; waited < ms && !stop; waited += 20) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 20) > 0) return true;
  }
  return false;
}

// Reads one request's head (up to the blank line); bodies are not expected.
bool ReadRequestHead(int fd, const std::atomic<bool>& stop, std::string* out) {
  char buf[4096];
  while (out->find("\r\n\r\n") == std::string::npos) {
    if (!WaitReadable(fd, stop)) return false;
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) return false;
    out->append(buf, static_cast<size_t>(n));
  }
  return true;
}

int ConnectLoopback(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

void CloseWithReset(int fd) {
  linger l{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
  close(fd);
}

}  // namespace

Fault Fault::Status(int status, const std::string& retry_after, const std::string& body) {
  std::string raw = "HTTP/1.1 " + std::to_string(status) + " Fault\r\nContent-Length: " +
                    std::to_string(body.size()) + "\r\nConnection: close\r\n";
  if (!retry_after.empty()) raw += "Retry-After: " + retry_after + "\r\n";
  raw += "\r\n" + body;
  return Raw(raw);
}

FaultProxy::FaultProxy(int upstream_port) : upstream_port_(upstream_port) {
  listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  listen(listen_fd_, 128);
  acceptor_ = std::thread([this] { AcceptLoop(); });
}

FaultProxy::~FaultProxy() { Stop(); }

void FaultProxy::Schedule(std::vector<Fault> faults) {
  std::lock_guard<std::mutex> lock(mu_);
  schedule_.assign(faults.begin(), faults.end());
}

void FaultProxy::Stop() {
  if (stop_.exchange(true)) return;
  shutdown(listen_fd_, SHUT_RDWR);
  acceptor_.join();
  close(listen_fd_);
  for (std::thread& t : workers_) t.join();
}

void FaultProxy::AcceptLoop() {
  while (!stop_) {
    if (!WaitReadable(listen_fd_, stop_, 100)) continue;
    int client = accept(listen_fd_, nullptr, nullptr);
    if (client < 0) continue;
    ++connections_;
    Fault fault;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!schedule_.empty()) {
        fault = schedule_.front();
        schedule_.pop_front();
      }
    }
    workers_.emplace_back([this, client, fault] { Serve(client, fault); });
  }
}

void FaultProxy::Serve(int client, Fault fault) {
  if (fault.kind == Fault::kStall || fault.kind == Fault::kRaw ||
      fault.kind == Fault::kRawThenDrop) {
    std::string head;
    if (ReadRequestHead(client, stop_, &head)) {
      if (fault.kind == Fault::kStall) {
        while (!stop_) {
          pollfd p{client, POLLIN, 0};
          if (poll(&p, 1, 20) > 0) {
            char c;
            if (recv(client, &c, 1, MSG_PEEK) <= 0) break;  // client gave up
          }
        }
      } else {
        SendAll(client, fault.raw.data(), fault.raw.size());
        if (fault.kind == Fault::kRawThenDrop) {
          // Stay open (the client pools us), drop when the next request comes.
          WaitReadable(client, stop_);
        }
      }
    }
    close(client);
    return;
  }

  int upstream = ConnectLoopback(upstream_port_);
  if (upstream < 0) {
    close(client);
    return;
  }
  size_t forwarded = 0;  // response bytes
  bool limited = fault.kind == Fault::kReset || fault.kind == Fault::kTruncate;
  char buf[65536];
  bool done = false;
  while (!stop_ && !done) {
    pollfd fds[2] = {{client, POLLIN, 0}, {upstream, POLLIN, 0}};
    if (poll(fds, 2, 50) <= 0) continue;
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      ssize_t n = recv(client, buf, sizeof(buf), 0);
      if (n <= 0 || !SendAll(upstream, buf, static_cast<size_t>(n))) break;
    }
    if (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) {
      ssize_t n = recv(upstream, buf, sizeof(buf), 0);
      if (n <= 0) break;
      size_t send_n = static_cast<size_t>(n);
      if (limited && forwarded + send_n >= fault.bytes) {
        send_n = fault.bytes - forwarded;
        done = true;
      }
      if (!SendAll(client, buf, send_n)) break;
      forwarded += send_n;
    }
  }
  close(upstream);
  if (fault.kind == Fault::kReset) {
    CloseWithReset(client);
  } else {
    close(client);
  }
}

}  // namespace sluice::testing
