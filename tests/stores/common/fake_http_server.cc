#include "tests/stores/common/fake_http_server.h"

#include <poll.h>
#include <unistd.h>

#include <cstdlib>

namespace sluice::testing {
namespace {

const char* Reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 204: return "No Content";
    case 206: return "Partial Content";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    default: return "Status";
  }
}

}  // namespace

FakeHttpServer::FakeHttpServer(Handler handler)
    : handler_(std::move(handler)), listener_([this](int fd) { Serve(fd); }) {}

FakeHttpServer::~FakeHttpServer() { Stop(); }

void FakeHttpServer::Serve(int fd) {
  std::string buf;
  char chunk[65536];
  auto fill = [&]() -> bool {  // false on close, error or stop
    if (!listener_.Ready(fd, POLLIN)) return false;
    ssize_t n = ::read(fd, chunk, sizeof(chunk));
    if (n <= 0) return false;
    buf.append(chunk, static_cast<size_t>(n));
    return true;
  };
  while (true) {
    size_t end;
    while ((end = buf.find("\r\n\r\n")) == std::string::npos) {
      if (!fill()) {
        ::close(fd);
        return;
      }
    }
    FakeRequest req;
    std::string head = buf.substr(0, end);
    buf.erase(0, end + 4);
    size_t line_end = head.find("\r\n");
    std::string request_line = head.substr(0, line_end);
    size_t sp1 = request_line.find(' ');
    size_t sp2 = request_line.find(' ', sp1 + 1);
    req.method = request_line.substr(0, sp1);
    req.target = request_line.substr(sp1 + 1, sp2 - sp1 - 1);
    size_t pos = line_end == std::string::npos ? head.size() : line_end + 2;
    while (pos < head.size()) {
      size_t e = head.find("\r\n", pos);
      if (e == std::string::npos) e = head.size();
      std::string line = head.substr(pos, e - pos);
      size_t colon = line.find(':');
      if (colon != std::string::npos) {
        std::string name = line.substr(0, colon);
        for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        size_t v = line.find_first_not_of(' ', colon + 1);
        req.headers[name] = v == std::string::npos ? "" : line.substr(v);
      }
      pos = e + 2;
    }
    size_t length = std::strtoull(req.Header("content-length").c_str(), nullptr, 10);
    while (buf.size() < length) {
      if (!fill()) {
        ::close(fd);
        return;
      }
    }
    req.body = buf.substr(0, length);
    buf.erase(0, length);
    FakeResponse resp = handler_(req);
    std::string out = "HTTP/1.1 " + std::to_string(resp.status) + " " + Reason(resp.status) +
                      "\r\n";
    bool has_length = false;
    for (const auto& [n, v] : resp.headers) {
      out += n + ": " + v + "\r\n";
      // A handler that frames its own body (chunked) gets no length.
      if (n == "Content-Length" || n == "Transfer-Encoding") has_length = true;
    }
    if (!has_length) out += "Content-Length: " + std::to_string(resp.body.size()) + "\r\n";
    out += "\r\n";
    if (req.method != "HEAD") out += resp.body;
    // A client may close before the body ends (a download cancelled or
    // stopped at the head).
    if (!listener_.SendAll(fd, out)) {
      ::close(fd);
      return;
    }
  }
}

std::string PercentDecoded(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace sluice::testing
