#include "base/arrived_bytes.h"

#include <algorithm>
#include <iterator>

namespace sluice {

void ArrivedBytes::Attach(std::shared_ptr<const char> buffer) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!buffer_) buffer_ = std::move(buffer);
}

void ArrivedBytes::Arrived(uint64_t offset, uint64_t length) {
  if (offset >= total_ || length == 0) return;
  uint64_t end = offset + std::min(length, total_ - offset);
  std::lock_guard<std::mutex> lock(mu_);
  if (ended_ || abandoned_) return;
  // Merged with every range it touches or overlaps, so that a reader's
  // range is either within one entry or not all there.
  auto it = ranges_.upper_bound(offset);
  if (it != ranges_.begin() && std::prev(it)->second >= offset) --it;
  while (it != ranges_.end() && it->first <= end) {
    offset = std::min(offset, it->first);
    end = std::max(end, it->second);
    arrived_ -= it->second - it->first;
    it = ranges_.erase(it);
  }
  ranges_.emplace(offset, end);
  arrived_ += end - offset;
  cv_.notify_all();
}

void ArrivedBytes::Abandon() {
  std::lock_guard<std::mutex> lock(mu_);
  abandoned_ = true;
  cv_.notify_all();
}

void ArrivedBytes::Finish(Status status) {
  std::lock_guard<std::mutex> lock(mu_);
  if (ended_) return;
  ended_ = true;
  end_status_ = std::move(status);
  cv_.notify_all();
}

uint64_t ArrivedBytes::arrived() const {
  std::lock_guard<std::mutex> lock(mu_);
  return arrived_;
}

bool ArrivedBytes::Has(uint64_t offset, uint64_t end) const {
  if (offset == end) return true;
  auto it = ranges_.upper_bound(offset);
  if (it == ranges_.begin()) return false;
  --it;
  return it->first <= offset && end <= it->second;
}

Result<std::optional<std::string_view>> ArrivedBytes::Await(uint64_t offset, uint64_t length,
                                                            bool wait, std::stop_token stop,
                                                            bool* blocked) {
  using Maybe = std::optional<std::string_view>;
  if (offset > total_ || length > total_ - offset) {
    return OutOfRangeError(what_ + ": bytes " + std::to_string(offset) + "+" +
                           std::to_string(length) + " past its " + std::to_string(total_));
  }
  const uint64_t end = offset + length;
  // Registered before the lock is taken: a stop already requested runs the
  // callback here, at once, and it takes the lock.
  std::stop_callback wake(stop, [this] {
    std::lock_guard<std::mutex> inner(mu_);
    cv_.notify_all();
  });
  std::unique_lock<std::mutex> lock(mu_);
  while (!abandoned_ && !stop.stop_requested() && !Has(offset, end) && !ended_ && wait) {
    if (blocked != nullptr) *blocked = true;
    cv_.wait(lock);
  }
  if (abandoned_ || stop.stop_requested()) return Maybe();
  if (Has(offset, end) && (buffer_ || length == 0)) {
    // The buffer lives as long as this object; reported bytes never change.
    return Maybe(std::string_view(buffer_ ? buffer_.get() + offset : nullptr, length));
  }
  if (!ended_) return Maybe();  // not yet, and no wait
  const std::string range = what_ + ": bytes " + std::to_string(offset) + ".." +
                            std::to_string(end) + " did not arrive";
  if (!end_status_.ok()) return end_status_.WithContext(range);
  return InternalError(range + ", though its receive ended ok");
}

}  // namespace sluice
