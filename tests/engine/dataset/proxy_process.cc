#include "tests/engine/dataset/proxy_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/stores/common/loopback_listener.h"

namespace sluice::testing {

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

bool ProxyProcess::Start(const std::string& log_path, const OnAccept& on_accept) {
  int port = 0;
  const int listen_fd = ListenOnLoopback(256, &port);
  if (listen_fd < 0) return false;
  int log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    ::close(listen_fd);
    return false;
  }
  port_ = port;
  pid_t pid = ::fork();
  if (pid == 0) {
    for (uint64_t connection = 0;; ++connection) {
      int client = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (client >= 0) on_accept(client, connection, log_fd);
    }
  }
  ::close(listen_fd);
  ::close(log_fd);
  pid_ = pid;
  return pid > 0;
}

ProxyProcess::~ProxyProcess() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
}

}  // namespace sluice::testing
