#include "formats/dataset/locate_each.h"

namespace sluice {

void LocateEach(const SampleLocator& locator, std::span<const int64_t> ids, size_t* shard,
                uint32_t* local) {
  size_t g = 0;
  // Shard g's ids: [lo, hi), a shard of samples (Locate never returns an
  // empty one); none before the first lookup.
  uint64_t lo = 0, hi = 0;
  for (size_t k = 0; k < ids.size(); ++k) {
    const uint64_t id = static_cast<uint64_t>(ids[k]);
    if (id - lo >= hi - lo) {  // unsigned: also id < lo
      g = locator.Locate(id).first;
      lo = locator.start(g);
      hi = locator.start(g + 1);
    }
    shard[k] = g;
    if (local != nullptr) local[k] = static_cast<uint32_t>(id - lo);
  }
}

}  // namespace sluice
