#include "tests/engine/dataset/stalling_file_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>

#include "base/file.h"

namespace sluice::testing {

StallingFileServer::StallingFileServer(std::string root, std::string stall)
    : root_(std::move(root)), stall_("/" + std::move(stall)) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(fd_, 64) != 0 ||
      ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    std::abort();
  }
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread([this] { Accept(); });
}

void StallingFileServer::Stop() {
  if (stop_.exchange(true)) return;
  acceptor_.join();
  std::lock_guard<std::mutex> lock(mu_);
  for (std::thread& t : workers_) t.join();
  ::close(fd_);
}

std::vector<std::string> StallingFileServer::Requests() const {
  std::lock_guard<std::mutex> lock(requests_mu_);
  return requests_;
}

bool StallingFileServer::Ready(int fd, short events) const {
  pollfd p{fd, events, 0};
  while (!stop_.load()) {
    if (::poll(&p, 1, 20) > 0) return true;
  }
  return false;
}

void StallingFileServer::Accept() {
  while (Ready(fd_, POLLIN)) {
    int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) continue;
    std::lock_guard<std::mutex> lock(mu_);
    workers_.emplace_back([this, c] { Serve(c); });
  }
}

void StallingFileServer::Serve(int c) {
  std::string request;
  char buf[4096];
  while (request.find("\r\n\r\n") == std::string::npos && Ready(c, POLLIN)) {
    ssize_t n = ::recv(c, buf, sizeof(buf), 0);
    if (n <= 0) break;
    request.append(buf, static_cast<size_t>(n));
  }
  size_t sp = request.find(' ');
  std::string target = request.substr(sp + 1, request.find(' ', sp + 1) - sp - 1);
  {
    std::lock_guard<std::mutex> lock(requests_mu_);
    requests_.push_back(target);
  }
  auto body = ReadFile(root_ + target);
  std::string head = body.ok() ? "HTTP/1.1 200 OK\r\nContent-Length: " +
                                     std::to_string(body->size()) + "\r\n"
                               : std::string("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n");
  std::string out = head + "Connection: close\r\n\r\n";
  const bool stall = body.ok() && target == stall_;
  if (body.ok()) out += stall ? body->substr(0, body->size() / 2) : *body;
  size_t done = 0;
  while (done < out.size() && Ready(c, POLLOUT)) {
    ssize_t n = ::send(c, out.data() + done, out.size() - done, MSG_NOSIGNAL);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  if (stall) {
    while (Ready(c, POLLIN)) {  // until the peer dies (EOF) or we stop
      if (::recv(c, buf, sizeof(buf), 0) <= 0) break;
    }
  }
  ::close(c);
}

}  // namespace sluice::testing
