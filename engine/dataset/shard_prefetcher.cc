#include "engine/dataset/shard_prefetcher.h"

#include <chrono>

namespace sluice {

ShardPrefetcher::ShardPrefetcher(std::vector<size_t> shard_of, size_t window, Opener opener)
    : shard_of_(std::move(shard_of)), window_(window < 1 ? 1 : window), opener_(std::move(opener)) {}

ShardPrefetcher::~ShardPrefetcher() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ShardPrefetcher::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [&] {
      return stop_ || (scan_ < shard_of_.size() && scan_ < consumer_ + window_);
    });
    if (stop_) return;
    size_t p = scan_;
    size_t shard = shard_of_[p];
    auto it = ready_.find(shard);
    if (it != ready_.end()) {
      it->second.last_pos = p;
      ++scan_;
      cv_.notify_all();
      continue;
    }
    lock.unlock();
    auto opened = opener_(shard);
    lock.lock();
    if (!opened.ok()) {
      error_ = opened.status().WithContext("prefetching sample position " + std::to_string(p));
      cv_.notify_all();
      return;
    }
    ready_[shard] = Entry{std::move(*opened), p};
    ++scan_;
    cv_.notify_all();
  }
}

Result<std::shared_ptr<const OpenedShard>> ShardPrefetcher::Get(size_t p, uint64_t* waited_ns) {
  if (p >= shard_of_.size()) {
    return OutOfRangeError("prefetcher: position " + std::to_string(p) + " past the end (" +
                           std::to_string(shard_of_.size()) + ")");
  }
  std::unique_lock<std::mutex> lock(mu_);
  if (!started_) {
    started_ = true;
    thread_ = std::thread([this] { Run(); });
  }
  if (p > consumer_) {
    consumer_ = p;
    // Shards whose last seen use is behind the consumer go (their pins with
    // them, unless the consumer still holds the shard for its views).
    for (auto it = ready_.begin(); it != ready_.end();) {
      it = it->second.last_pos < p ? ready_.erase(it) : std::next(it);
    }
    cv_.notify_all();
  }
  if (scan_ <= p && error_.ok()) {
    auto start = std::chrono::steady_clock::now();
    cv_.wait(lock, [&] { return scan_ > p || !error_.ok(); });
    *waited_ns += static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
            .count());
  }
  if (scan_ <= p) return error_;
  return ready_.at(shard_of_[p]).shard;
}

}  // namespace sluice
