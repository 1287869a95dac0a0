#include "tests/engine/dataset/stalling_file_server.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/file.h"

namespace sluice::testing {

StallingFileServer::StallingFileServer(std::string root, std::string stall)
    : root_(std::move(root)),
      stall_("/" + std::move(stall)),
      listener_([this](int c) { Serve(c); }) {}

std::vector<std::string> StallingFileServer::Requests() const {
  std::lock_guard<std::mutex> lock(requests_mu_);
  return requests_;
}

void StallingFileServer::Serve(int c) {
  const std::string request = listener_.ReadHead(c);
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
  listener_.SendAll(c, out);
  if (stall) {
    char buf[4096];
    while (listener_.Ready(c, POLLIN)) {  // until the peer dies (EOF) or we stop
      if (::recv(c, buf, sizeof(buf), 0) <= 0) break;
    }
  }
  ::close(c);
}

}  // namespace sluice::testing
