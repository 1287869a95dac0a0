#include "base/fill_watermark.h"

namespace sluice {

void FillWatermark::Attach(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  if (attached_) return;
  attached_ = true;
  path_ = path;
  Result<OwnedFd> fd = env_->Open(path, OpenMode::kRead);
  if (fd.ok()) fd_ = std::move(*fd);  // else unreadable: readers wait for the whole file
}

void FillWatermark::Wrote(uint64_t offset, uint64_t length) {
  if (length == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (ended_ || abandoned_) return;
  uint64_t end = offset + length;
  if (offset > mark_) {
    // A later part: kept (merged with a neighbour it touches) until the
    // bytes before it are in. Parts write their ranges in order, so each
    // part's ranges merge into one entry.
    auto it = pending_.lower_bound(offset);
    if (it != pending_.begin()) {
      auto before = std::prev(it);
      if (before->second >= offset) {
        before->second = std::max(before->second, end);
        return;
      }
    }
    auto [at, fresh] = pending_.try_emplace(offset, end);
    if (!fresh) at->second = std::max(at->second, end);
    return;
  }
  if (end <= mark_) return;
  mark_ = end;
  while (!pending_.empty() && pending_.begin()->first <= mark_) {
    mark_ = std::max(mark_, pending_.begin()->second);
    pending_.erase(pending_.begin());
  }
  cv_.notify_all();
}

void FillWatermark::Abandon() {
  std::lock_guard<std::mutex> lock(mu_);
  abandoned_ = true;
  cv_.notify_all();
}

void FillWatermark::Finish(Status status) {
  std::lock_guard<std::mutex> lock(mu_);
  if (ended_) return;
  ended_ = true;
  if (!status.ok()) abandoned_ = true;
  cv_.notify_all();
}

uint64_t FillWatermark::watermark() const {
  std::lock_guard<std::mutex> lock(mu_);
  return mark_;
}

Result<std::optional<std::string>> FillWatermark::Read(uint64_t offset, uint64_t length, bool wait,
                                                       std::stop_token stop, bool* blocked) {
  if (offset > total_ || length > total_ - offset) {
    return OutOfRangeError(what_ + ": bytes " + std::to_string(offset) + "+" +
                           std::to_string(length) + " past its " + std::to_string(total_));
  }
  const uint64_t end = offset + length;
  int fd = -1;
  {
    // Registered before the lock is taken: a stop already requested runs
    // the callback here, at once, and it takes the lock.
    std::stop_callback wake(stop, [this] {
      std::lock_guard<std::mutex> inner(mu_);
      cv_.notify_all();
    });
    std::unique_lock<std::mutex> lock(mu_);
    auto unusable = [&] { return abandoned_ || (attached_ && !fd_.valid()) || stop.stop_requested(); };
    while (!unusable() && mark_ < end && !ended_ && wait) {
      if (blocked != nullptr) *blocked = true;
      cv_.wait(lock);
    }
    if (unusable() || mark_ < end || !fd_.valid()) return std::optional<std::string>();
    fd = fd_.get();
  }
  // The descriptor lives as long as this object, which the caller holds;
  // path_ is set before fd_ and never changes after.
  std::string bytes(length, '\0');
  Result<size_t> n = env_->PReadFull(fd, path_, bytes.data(), length, offset);
  if (!n.ok()) return n.status().WithContext("reading the download in flight of " + what_);
  if (*n < length) {
    return IoError(what_ + ": the download in flight " + path_ + " ended at " +
                   std::to_string(offset + *n) + ", below its watermark");
  }
  return std::optional<std::string>(std::move(bytes));
}

}  // namespace sluice
