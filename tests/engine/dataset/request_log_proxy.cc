#include "tests/engine/dataset/request_log_proxy.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <regex>
#include <thread>

namespace sluice::testing {
namespace {

bool SendAll(int fd, const char* data, size_t n) {
  while (n > 0) {
    ssize_t w = ::send(fd, data, n, MSG_NOSIGNAL);
    if (w <= 0) return false;
    data += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

int ConnectLoopback(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Forwards both ways until either side closes; logs the client's request
// lines. Only request lines match: header lines never start with a method
// followed by a target and an HTTP version.
void Serve(int client, int upstream_port, int log_fd) {
  static const std::regex kRequestLine(R"(^[A-Z]+ \S+ HTTP/1\.[01]$)");
  int upstream = ConnectLoopback(upstream_port);
  if (upstream < 0) {
    ::close(client);
    return;
  }
  std::string line;
  char buf[65536];
  pollfd fds[2] = {{client, POLLIN, 0}, {upstream, POLLIN, 0}};
  bool open = true;
  while (open) {
    if (::poll(fds, 2, -1) < 0) break;
    for (int side = 0; side < 2 && open; ++side) {
      if ((fds[side].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      ssize_t n = ::recv(fds[side].fd, buf, sizeof(buf), 0);
      if (n <= 0) {
        open = false;
        break;
      }
      if (side == 0) {
        for (ssize_t i = 0; i < n; ++i) {
          if (buf[i] != '\n') {
            line.push_back(buf[i]);
            continue;
          }
          if (!line.empty() && line.back() == '\r') line.pop_back();
          if (std::regex_match(line, kRequestLine)) {
            std::string entry = line + "\n";
            (void)!::write(log_fd, entry.data(), entry.size());
          }
          line.clear();
        }
      }
      if (!SendAll(fds[1 - side].fd, buf, static_cast<size_t>(n))) open = false;
    }
  }
  ::close(client);
  ::close(upstream);
}

}  // namespace

std::unique_ptr<RequestLogProxy> RequestLogProxy::Start(int upstream_port,
                                                        const std::string& log_path) {
  int listen_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  ::setsockopt(listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (::bind(listen_fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(listen_fd, 128) != 0 ||
      ::getsockname(listen_fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(listen_fd);
    return nullptr;
  }
  int log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    ::close(listen_fd);
    return nullptr;
  }
  std::unique_ptr<RequestLogProxy> proxy(new RequestLogProxy());
  proxy->port_ = ntohs(addr.sin_port);
  proxy->log_path_ = log_path;
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(listen_fd);
    ::close(log_fd);
    return nullptr;
  }
  if (pid == 0) {
    for (;;) {
      int client = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (client < 0) continue;
      std::thread([client, upstream_port, log_fd] { Serve(client, upstream_port, log_fd); })
          .detach();
    }
  }
  ::close(listen_fd);
  ::close(log_fd);
  proxy->pid_ = pid;
  return proxy;
}

RequestLogProxy::~RequestLogProxy() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
}

std::vector<std::string> RequestLogProxy::Requests() const {
  std::vector<std::string> out;
  std::ifstream in(log_path_);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

}  // namespace sluice::testing
