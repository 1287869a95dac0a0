#include "tests/engine/dataset/request_log_proxy.h"

#include <fcntl.h>
#include <poll.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <regex>
#include <thread>

namespace sluice::testing {
namespace {

// Forwards both ways until either side closes; logs the client's request
// lines, and each with its Range header's value ("-" without one) into
// `ranges_path` once its headers end. Only request lines match: header
// lines never start with a method followed by a target and an HTTP version.
void Serve(int client, int upstream_port, int log_fd, const std::string& ranges_path) {
  static const std::regex kRequestLine(R"(^[A-Z]+ \S+ HTTP/1\.[01]$)");
  int upstream = ConnectLoopback(upstream_port);
  if (upstream < 0) {
    ::close(client);
    return;
  }
  const int ranges_fd = ::open(ranges_path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  std::string request, range;  // the request whose headers are being read
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
            request = line;
            range = "-";
          } else if (!request.empty() && line.size() > 6 &&
                     strncasecmp(line.c_str(), "range:", 6) == 0) {
            range = line.substr(line.find_first_not_of(' ', 6));
          } else if (!request.empty() && line.empty()) {
            std::string entry = request + " " + range + "\n";
            if (ranges_fd >= 0) (void)!::write(ranges_fd, entry.data(), entry.size());
            request.clear();
          }
          line.clear();
        }
      }
      if (!SendAll(fds[1 - side].fd, buf, static_cast<size_t>(n))) open = false;
    }
  }
  ::close(client);
  ::close(upstream);
  if (ranges_fd >= 0) ::close(ranges_fd);
}

}  // namespace

std::unique_ptr<RequestLogProxy> RequestLogProxy::Start(int upstream_port,
                                                        const std::string& log_path) {
  std::unique_ptr<RequestLogProxy> proxy(new RequestLogProxy());
  proxy->log_path_ = log_path;
  const std::string ranges_path = log_path + ".ranges";
  const bool started = proxy->process_.Start(
      log_path, [upstream_port, ranges_path](int client, uint64_t, int log_fd) {
        std::thread([client, upstream_port, log_fd, ranges_path] {
          Serve(client, upstream_port, log_fd, ranges_path);
        }).detach();
      });
  return started ? std::move(proxy) : nullptr;
}

std::vector<std::string> RequestLogProxy::Requests() const {
  std::vector<std::string> out;
  std::ifstream in(log_path_);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::vector<std::string> RequestLogProxy::RequestsWithRanges() const {
  std::vector<std::string> out;
  std::ifstream in(log_path_ + ".ranges");
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

}  // namespace sluice::testing
