// Which shard holds a global sample id, in constant time on average.
//
// A binary search over the shards' cumulative sample counts costs a few
// cache misses per sample, which shows when planning an epoch maps millions
// of ids. The locator splits the id range into power-of-two buckets (about
// two per shard) and remembers each bucket's first shard, so a lookup
// searches only the shards that overlap one bucket (one or two when shards
// are of similar size). Shards of 0 samples are never returned.
//
// Immutable after construction; safe to use from several threads.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace sluice {

class SampleLocator {
 public:
  SampleLocator() : SampleLocator(std::vector<uint64_t>{0}) {}
  // `starts`: the cumulative sample counts, one per shard and the total
  // last (starts[0] == 0, non-decreasing, every difference below 2^32).
  explicit SampleLocator(std::vector<uint64_t> starts);

  // The shard of sample `id` and the sample's index in it; id < total().
  std::pair<size_t, uint32_t> Locate(uint64_t id) const {
    const size_t b = static_cast<size_t>(id >> shift_);
    // The id's shard is one of first_[b]..first_[b + 1]: find the last
    // whose start is <= id (the first start > id, minus one).
    size_t g = first_[b];
    const size_t last = first_[b + 1];
    if (last - g < 8) {
      while (g < last && starts_[g + 1] <= id) ++g;
    } else {
      g = static_cast<size_t>(std::upper_bound(starts_.begin() + g + 1, starts_.begin() + last + 1, id) -
                              starts_.begin()) - 1;
    }
    return {g, static_cast<uint32_t>(id - starts_[g])};
  }

  uint64_t total() const { return starts_.back(); }
  size_t num_shards() const { return starts_.size() - 1; }
  // The first sample id of shard g (g <= num_shards(): the total for g ==
  // num_shards()).
  uint64_t start(size_t g) const { return starts_[g]; }

 private:
  std::vector<uint64_t> starts_;
  unsigned shift_ = 0;
  // first_[b]: the shard of id b << shift_; one more entry: the last id's.
  std::vector<uint32_t> first_;
};

}  // namespace sluice
