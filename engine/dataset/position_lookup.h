// The consumer's look-up of a prefetcher position's open shard, shard
// number and sample index, a run at a time: positions index the
// prefetcher's order in parts (PrefetchSchedule::Part), and consecutive
// positions mostly read one shard (a shard long in order, a few positions
// under py1e). The part is found once a part and the shard's first sample
// once a run, so a position costs a range check and two loads, as a flat
// array's would (the cursor's per-sample path: PrefetchAhead, ReadWindow).
//
// Valid for positions in the range the prefetcher's last Acquire returned,
// until its next Acquire (which may free passed parts and close passed
// shards): the owner calls Reset after each. One consumer thread; no lock.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "engine/dataset/opened_shard.h"
#include "engine/dataset/shard_prefetcher.h"
#include "formats/dataset/sample_locator.h"

namespace sluice {

class PositionLookup {
 public:
  void Reset() { size_ = 0; }

  // Position q of `prefetcher`'s order (reading sample `id`, located by
  // `locator`): its shard's number g() and open shard(), and the sample's
  // index in it (returned).
  uint32_t Resolve(const ShardPrefetcher& prefetcher, const SampleLocator& locator, size_t q,
                   int64_t id) {
    size_t k = q - begin_;
    if (k >= size_) {
      FindPart(prefetcher, q);
      k = q - begin_;
    }
    k_ = k;
    if (shard_of_[k] != g_) {
      g_ = shard_of_[k];
      first_ = locator.start(g_);
    }
    return Local(id);
  }
  // Position q's open shard, and the index in it of its sample `id` in
  // *i: Resolve for a caller that wants only these (the cache hints).
  // A run is told by the shard's handle, not its number: a load fewer a
  // position. The one Skipped() stand-in may then span several shards,
  // whose index comes out wrong: a skipped shard takes no hint, so none is
  // used. A lookup is used through Find or through Resolve, not both.
  const OpenedShard* Find(const ShardPrefetcher& prefetcher, const SampleLocator& locator, size_t q,
                          int64_t id, uint32_t* i) {
    size_t k = q - begin_;
    if (k >= size_) {
      FindPart(prefetcher, q);
      k = q - begin_;
    }
    const void* shard = at_[k];
    if (shard != shard_) {
      shard_ = shard;
      first_ = locator.start(shard_of_[k]);
    }
    *i = Local(id);
    return static_cast<const OpenedShard*>(shard);
  }
  // Of the last Resolve.
  size_t g() const { return g_; }
  const OpenedShard* shard() const { return static_cast<const OpenedShard*>(at_[k_]); }
  // The index of sample `id` in the last Resolve's shard.
  uint32_t Local(int64_t id) const { return static_cast<uint32_t>(static_cast<uint64_t>(id) - first_); }
  // The end of the run of positions from the last Resolve's reading its
  // shard, at most `limit` (and the end of its part: the next part's
  // positions are another run).
  size_t RunEnd(size_t limit) const {
    const size_t end = std::min(limit - begin_, size_);
    const void* shard = at_[k_];
    size_t k = k_ + 1;
    while (k < end && at_[k] == shard) ++k;
    return begin_ + k;
  }

 private:
  // The part's arrays as plain members: a position's look-up is then a
  // subtraction, a compare and two loads.
  void FindPart(const ShardPrefetcher& prefetcher, size_t q) {
    const PrefetchSchedule::Part& part = prefetcher.ConsumerPart(q);
    begin_ = part.begin;
    size_ = part.shard_of.size();
    shard_of_ = part.shard_of.data();
    at_ = part.at.get();
    g_ = SIZE_MAX;
    shard_ = nullptr;
  }

  size_t begin_ = 0, size_ = 0;  // the part's positions (none after Reset)
  const uint32_t* shard_of_ = nullptr;
  const void* const* at_ = nullptr;
  size_t k_ = 0;         // the last position's index in the part
  size_t g_ = SIZE_MAX;  // its shard, whose first sample is first_
  const void* shard_ = nullptr;  // Find's: the last position's shard, whose first sample is first_
  uint64_t first_ = 0;
};

}  // namespace sluice
