#include "tests/engine/dataset/chaos_proxy.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <fstream>
#include <random>
#include <thread>

namespace sluice::testing {
namespace {

enum class Kind { kPass, kReset, kTruncate, kStall, kHang, k503, k429, kBitFlip };

struct Fault {
  Kind kind = Kind::kPass;
  size_t after = 0;    // kReset, kTruncate, kHang: response bytes forwarded first
  int stall_ms = 0;    // kStall
  size_t offset = 0;   // kBitFlip: body byte
  int bit = 0;         // kBitFlip
};

const char* Name(Kind k) {
  switch (k) {
    case Kind::kPass: return "pass";
    case Kind::kReset: return "reset";
    case Kind::kTruncate: return "truncate";
    case Kind::kStall: return "stall";
    case Kind::kHang: return "hang";
    case Kind::k503: return "503";
    case Kind::k429: return "429";
    case Kind::kBitFlip: return "bitflip";
  }
  return "?";
}

// Longer than the soak's read_timeout, so the client gives up first.
constexpr std::chrono::milliseconds kHangFor{2500};

Fault Draw(uint64_t seed, uint64_t connection, int faulty_percent) {
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + connection);
  Fault f;
  if (static_cast<int>(rng() % 100) >= faulty_percent) return f;
  // Weights: reset 18, truncate 18, stall 8, hang 8, 503 14, 429 14,
  // bitflip 20.
  const int pick = static_cast<int>(rng() % 100);
  f.kind = pick < 18   ? Kind::kReset
           : pick < 36 ? Kind::kTruncate
           : pick < 44 ? Kind::kStall
           : pick < 52 ? Kind::kHang
           : pick < 66 ? Kind::k503
           : pick < 80 ? Kind::k429
                       : Kind::kBitFlip;
  f.after = rng() % (256 << 10);
  f.stall_ms = 100 + static_cast<int>(rng() % 1400);
  f.offset = rng() % 2048;
  f.bit = static_cast<int>(rng() % 8);
  return f;
}

// Reads until the end of the request's head, EOF or 5 s of silence.
void ReadRequestHead(int client) {
  std::string head;
  char buf[4096];
  pollfd p{client, POLLIN, 0};
  while (head.find("\r\n\r\n") == std::string::npos && ::poll(&p, 1, 5000) > 0) {
    ssize_t n = ::recv(client, buf, sizeof(buf), 0);
    if (n <= 0) return;
    head.append(buf, static_cast<size_t>(n));
  }
}

void CloseWithReset(int fd) {
  linger l{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
  ::close(fd);
}

// `head` (a request's head and what followed it) with its Connection
// header replaced by "Connection: close": the server then answers one
// request per connection, so every request meets a fault of its own draw.
std::string OneShot(const std::string& head) {
  const size_t end = head.find("\r\n\r\n");
  std::string out;
  size_t pos = 0;
  while (pos < end) {
    size_t eol = head.find("\r\n", pos);
    std::string line = head.substr(pos, eol - pos);
    std::string lower = line;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower.rfind("connection:", 0) != 0) out += line + "\r\n";
    pos = eol + 2;
  }
  return out + "Connection: close\r\n\r\n" + head.substr(end + 4);
}

void Serve(int client, int upstream_port, Fault f) {
  if (f.kind == Kind::kStall || f.kind == Kind::k503 || f.kind == Kind::k429) {
    ReadRequestHead(client);
    if (f.kind == Kind::kStall) {
      std::this_thread::sleep_for(std::chrono::milliseconds(f.stall_ms));
    } else {
      std::string status = f.kind == Kind::k503 ? "503 Service Unavailable" : "429 Too Many Requests";
      std::string answer = "HTTP/1.1 " + status +
                           "\r\nRetry-After: 0\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
      SendAll(client, answer.data(), answer.size());
    }
    ::close(client);
    return;
  }
  int upstream = ConnectLoopback(upstream_port);
  if (upstream < 0) {
    ::close(client);
    return;
  }
  std::string request_head;  // the first request's head, until whole
  std::string request_line;  // its first line, to spare index.json
  bool request_line_done = false;
  std::string response_head;  // the first response's head, until its end is found
  size_t body_start = SIZE_MAX;  // stream offset of the first response's body
  size_t response_bytes = 0;     // forwarded to the client so far
  bool faulted = false;
  char buf[65536];
  pollfd fds[2] = {{client, POLLIN, 0}, {upstream, POLLIN, 0}};
  for (bool open = true; open;) {
    if (::poll(fds, 2, -1) < 0) break;
    for (int side = 0; side < 2 && open; ++side) {
      if ((fds[side].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      ssize_t got = ::recv(fds[side].fd, buf, sizeof(buf), 0);
      if (got <= 0) {
        open = false;
        break;
      }
      size_t n = static_cast<size_t>(got);
      if (side == 0) {
        if (request_line_done) {
          if (!SendAll(upstream, buf, n)) open = false;
          continue;
        }
        // Hold the first request's head back until it is whole, then send
        // it with "Connection: close".
        request_head.append(buf, n);
        if (request_head.find("\r\n\r\n") == std::string::npos) continue;
        request_line = request_head.substr(0, request_head.find("\r\n"));
        request_line_done = true;
        std::string head = OneShot(request_head);
        if (!SendAll(upstream, head.data(), head.size())) open = false;
        continue;
      }
      if (!faulted && (f.kind == Kind::kReset || f.kind == Kind::kTruncate ||
                       f.kind == Kind::kHang) &&
          response_bytes + n >= f.after) {
        SendAll(client, buf, f.after - response_bytes);
        if (f.kind == Kind::kHang) {
          // Silent past the client's read timeout, then gone.
          std::this_thread::sleep_for(kHangFor);
          ::close(client);
        } else if (f.kind == Kind::kReset) {
          CloseWithReset(client);
        } else {
          ::close(client);
        }
        ::close(upstream);
        return;
      }
      if (!faulted && f.kind == Kind::kBitFlip) {
        if (body_start == SIZE_MAX) {
          response_head.append(buf, n);
          size_t end = response_head.find("\r\n\r\n");
          if (end != std::string::npos) body_start = end + 4;
        }
        const bool shard = request_line.find("index.json") == std::string::npos;
        if (body_start != SIZE_MAX && shard) {
          const size_t at = body_start + f.offset;
          if (at >= response_bytes && at < response_bytes + n) {
            buf[at - response_bytes] = static_cast<char>(buf[at - response_bytes] ^ (1 << f.bit));
            faulted = true;
          }
        }
      }
      response_bytes += n;
      if (!SendAll(client, buf, n)) open = false;
    }
  }
  ::close(client);
  ::close(upstream);
}

}  // namespace

std::unique_ptr<ChaosProxy> ChaosProxy::Start(int upstream_port, const std::string& log_path,
                                              uint64_t seed, int faulty_percent) {
  std::unique_ptr<ChaosProxy> proxy(new ChaosProxy());
  proxy->log_path_ = log_path;
  const bool started = proxy->process_.Start(
      log_path, [upstream_port, seed, faulty_percent](int client, uint64_t connection, int log_fd) {
        Fault f = Draw(seed, connection, faulty_percent);
        std::string line = std::string(Name(f.kind)) + "\n";
        (void)!::write(log_fd, line.data(), line.size());
        std::thread([client, upstream_port, f] { Serve(client, upstream_port, f); }).detach();
      });
  return started ? std::move(proxy) : nullptr;
}

std::map<std::string, int> ChaosProxy::FaultCounts() const {
  std::map<std::string, int> counts;
  std::ifstream in(log_path_);
  for (std::string line; std::getline(in, line);) ++counts[line];
  return counts;
}

}  // namespace sluice::testing
