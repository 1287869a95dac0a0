#include "tests/stores/common/loopback_listener.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

namespace sluice::testing {

int ListenOnLoopback(int backlog, int* port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(fd, backlog) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd);
    return -1;
  }
  *port = ntohs(addr.sin_port);
  return fd;
}

LoopbackListener::LoopbackListener(std::function<void(int fd)> serve)
    : serve_(std::move(serve)), fd_(ListenOnLoopback(64, &port_)) {
  if (fd_ < 0) std::abort();
  acceptor_ = std::thread([this] { Accept(); });
}

void LoopbackListener::Stop() {
  if (stop_.exchange(true)) return;
  acceptor_.join();
  std::lock_guard<std::mutex> lock(workers_mu_);
  for (std::thread& t : workers_) t.join();
  workers_.clear();
  ::close(fd_);
}

bool LoopbackListener::Ready(int fd, short events) const {
  pollfd p{fd, events, 0};
  while (!stop_.load()) {
    const int r = ::poll(&p, 1, 20);
    if (r > 0 || (r < 0 && errno != EINTR)) return true;  // an error: the next call meets it
  }
  return false;
}

void LoopbackListener::Accept() {
  while (Ready(fd_, POLLIN)) {
    int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) continue;
    std::lock_guard<std::mutex> lock(workers_mu_);
    workers_.emplace_back([this, c] { serve_(c); });
  }
}

std::string LoopbackListener::ReadHead(int fd) const {
  std::string head;
  char buf[4096];
  while (head.find("\r\n\r\n") == std::string::npos && Ready(fd, POLLIN)) {
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    head.append(buf, static_cast<size_t>(n));
  }
  return head;
}

bool LoopbackListener::SendAll(int fd, std::string_view bytes) const {
  size_t done = 0;
  while (done < bytes.size()) {
    if (!Ready(fd, POLLOUT)) return false;
    ssize_t n = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace sluice::testing
