// Opens the shards of one worker's planned order ahead of its consumer.
//
// A background thread walks the order and opens (fetches, pins, maps) each
// shard the first time it appears, staying at most `window` samples ahead of
// the consumer's position; the consumer takes opened shards by position. A
// shard is released once the consumer has passed its last use the thread
// has seen; a later reappearance opens it again (normally a cache hit).
//
// The thread starts on the first Get (so constructing in a parent process and
// forking is safe only if nothing was gotten before the fork) and is joined by
// the destructor. Get must be called from one thread at a time, with
// non-decreasing positions. Every wait is bounded by the opener's own bounds
// (the shard cache's wait_timeout).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "engine/dataset/opened_shard.h"

namespace sluice {

class ShardPrefetcher {
 public:
  using Opener = std::function<Result<std::shared_ptr<const OpenedShard>>(size_t shard)>;

  // shard_of[p]: the shard holding the sample at position p of the order.
  // window >= 1 samples.
  ShardPrefetcher(std::vector<size_t> shard_of, size_t window, Opener opener);
  ~ShardPrefetcher();
  ShardPrefetcher(const ShardPrefetcher&) = delete;
  ShardPrefetcher& operator=(const ShardPrefetcher&) = delete;

  // The shard of position p, waiting for the thread if needed; adds the time
  // waited to *waited_ns. The first error the thread met is returned for the
  // position it failed at (and every later one).
  Result<std::shared_ptr<const OpenedShard>> Get(size_t p, uint64_t* waited_ns);

  size_t size() const { return shard_of_.size(); }

 private:
  struct Entry {
    std::shared_ptr<const OpenedShard> shard;
    size_t last_pos = 0;
  };
  void Run();

  const std::vector<size_t> shard_of_;
  const size_t window_;
  const Opener opener_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool started_ = false, stop_ = false;
  size_t consumer_ = 0;
  size_t scan_ = 0;  // next position the thread examines
  Status error_ = Status::Ok();
  std::unordered_map<size_t, Entry> ready_;
  std::thread thread_;
};

}  // namespace sluice
