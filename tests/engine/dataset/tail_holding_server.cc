#include "tests/engine/dataset/tail_holding_server.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>

#include "base/file.h"

namespace sluice::testing {
namespace {

constexpr std::string_view kNotFound =
    "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";

}  // namespace

TailHoldingServer::TailHoldingServer(std::string root, std::string held, uint64_t hold_from,
                                     std::chrono::seconds safety, bool send_before_hold)
    : root_(std::move(root)),
      held_("/" + std::move(held)),
      hold_from_(hold_from),
      send_before_hold_(send_before_hold),
      listener_([this](int c) { Serve(c); }) {
  safety_ = std::thread([this, safety] {
    std::unique_lock<std::mutex> lock(mu_);
    if (!cv_.wait_for(lock, safety, [this] { return hold_ != Hold::kHeld || stop_.load(); })) {
      hold_ = Hold::kReleased;
      cv_.notify_all();
    }
  });
}

std::string TailHoldingServer::EtagOf(std::string_view bytes) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(h));
  return "\"" + std::string(hex) + "\"";
}

void TailHoldingServer::Release() {
  std::lock_guard<std::mutex> lock(mu_);
  if (hold_ == Hold::kHeld) hold_ = Hold::kReleased;
  cv_.notify_all();
}

void TailHoldingServer::Fail() {
  std::lock_guard<std::mutex> lock(mu_);
  if (hold_ == Hold::kHeld) hold_ = Hold::kFailed;
  cv_.notify_all();
}

bool TailHoldingServer::released() const {
  std::lock_guard<std::mutex> lock(mu_);
  return hold_ != Hold::kHeld;
}

std::vector<std::pair<uint64_t, uint64_t>> TailHoldingServer::HeldRanges() const {
  std::lock_guard<std::mutex> lock(mu_);
  return held_ranges_;
}

void TailHoldingServer::WaitHeld(size_t n) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return held_ranges_.size() >= n || hold_ != Hold::kHeld; });
}

void TailHoldingServer::Stop() {
  if (stop_.exchange(true)) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    cv_.notify_all();
  }
  safety_.join();
  listener_.Stop();
}

bool TailHoldingServer::HoldGet(int c, uint64_t first, uint64_t last_asked, const std::string& body,
                                uint64_t* from) {
  const uint64_t size = body.size();
  const bool part_first = send_before_hold_ && first < hold_from_ && first < size;
  if (part_first) {
    const uint64_t last = std::min(last_asked, size - 1);
    listener_.SendAll(c, "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes " +
                             std::to_string(first) + "-" + std::to_string(last) + "/" +
                             std::to_string(size) + "\r\nContent-Length: " +
                             std::to_string(last - first + 1) + "\r\nConnection: close\r\n\r\n");
    const uint64_t before_hold = std::min(hold_from_, last + 1) - first;
    listener_.SendAll(c, std::string_view(body).substr(first, before_hold));
  }
  std::unique_lock<std::mutex> lock(mu_);
  held_ranges_.emplace_back(first, last_asked);
  cv_.notify_all();
  cv_.wait(lock, [this] { return hold_ != Hold::kHeld || stop_.load(); });
  if (hold_ == Hold::kReleased) {
    if (part_first) *from = std::min(hold_from_, last_asked + 1);
    return true;
  }
  lock.unlock();
  // Failed: a part that began is cut short (the caller closes), else 404.
  if (!part_first) {
    listener_.SendAll(c, kNotFound);
  }
  return false;
}

void TailHoldingServer::Log(const std::string& target, uint64_t first, uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  answered_.push_back({target, first, bytes});
}

std::vector<TailHoldingServer::Answered> TailHoldingServer::AnsweredGets() const {
  std::lock_guard<std::mutex> lock(mu_);
  return answered_;
}

void TailHoldingServer::Serve(int c) {
  const std::string request = listener_.ReadHead(c);
  const size_t sp = request.find(' ');
  const std::string method = request.substr(0, sp);
  const std::string target = request.substr(sp + 1, request.find(' ', sp + 1) - sp - 1);
  std::string lower = request;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  auto body = ReadFile(root_ + target);
  if (!body.ok()) {
    listener_.SendAll(c, kNotFound);
    ::close(c);
    return;
  }
  const uint64_t size = body->size();
  const std::string total = std::to_string(size);
  // In every answer but a held GET's (StateEtags).
  const std::string etag = states_etags_ ? "ETag: " + EtagOf(*body) + "\r\n" : "";
  if (method == "HEAD") {
    listener_.SendAll(c, "HTTP/1.1 200 OK\r\nContent-Length: " + total + "\r\n" + etag +
                             "Connection: close\r\n\r\n");
    ::close(c);
    return;
  }
  std::string out;
  const size_t r = lower.find("\r\nrange: bytes=");
  if (r == std::string::npos) {
    out = "HTTP/1.1 200 OK\r\nContent-Length: " + total + "\r\n" + etag +
          "Connection: close\r\n\r\n" + *body;
    Log(target, 0, size);
  } else {
    const char* at = request.c_str() + r + 15;
    char* end = nullptr;
    const uint64_t first = std::strtoull(at, &end, 10);
    const uint64_t last_asked = std::strtoull(end + 1, nullptr, 10);
    uint64_t from = first;
    const bool held = target == held_ && last_asked >= hold_from_;
    if (held && !HoldGet(c, first, last_asked, *body, &from)) {
      ::close(c);
      return;
    }
    if (from > first) {
      // The head and the bytes before hold_from went out while it was held.
      const uint64_t last = std::min(last_asked, size - 1);
      listener_.SendAll(c, std::string_view(*body).substr(from, last - from + 1));
      ::close(c);
      return;
    }
    if (first >= size) {
      out = "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */" + total +
            "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    } else {
      const uint64_t last = std::min(last_asked, size - 1);
      out = "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes " + std::to_string(first) +
            "-" + std::to_string(last) + "/" + total +
            "\r\nContent-Length: " + std::to_string(last - first + 1) + "\r\n" + etag +
            "Connection: close\r\n\r\n" + body->substr(first, last - first + 1);
      Log(target, first, last - first + 1);
    }
  }
  listener_.SendAll(c, out);
  ::close(c);
}

}  // namespace sluice::testing
