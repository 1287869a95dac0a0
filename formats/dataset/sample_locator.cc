#include "formats/dataset/sample_locator.h"

#include <algorithm>

namespace sluice {

SampleLocator::SampleLocator(std::vector<uint64_t> starts) : starts_(std::move(starts)) {
  const uint64_t total = starts_.back();
  const size_t shards = starts_.size() - 1;
  if (total == 0) {
    first_.assign(2, 0);  // Locate is never called: there is no id
    return;
  }
  // About two buckets per shard: buckets no larger than half an average
  // shard, so a shard near the average size spans few buckets.
  const uint64_t want = 2 * static_cast<uint64_t>(std::max<size_t>(shards, 1));
  while (((total - 1) >> shift_) + 1 > want) ++shift_;
  const size_t buckets = static_cast<size_t>(((total - 1) >> shift_) + 1);
  first_.resize(buckets + 1);
  size_t g = 0;
  for (size_t b = 0; b <= buckets; ++b) {
    const uint64_t id = std::min<uint64_t>(uint64_t{b} << shift_, total - 1);
    while (starts_[g + 1] <= id) ++g;  // skips 0-sample shards too
    first_[b] = static_cast<uint32_t>(g);
  }
}

}  // namespace sluice
