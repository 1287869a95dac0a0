#include "engine/dataset/lead_minima.h"

#include <algorithm>

namespace sluice {

void LeadMinima::Close(uint64_t batches, uint64_t least) {
  // A count behind the newest step's (a batch that raced the record) joins
  // the newest period.
  const uint64_t end = steps_.empty() ? batches : std::max(batches, steps_.back().batches);
  while (!steps_.empty() && steps_.back().least >= least) steps_.pop_back();
  // A step of the newest count and a greater least says nothing new.
  if (!steps_.empty() && steps_.back().batches == end) return;
  steps_.push_back({end, least});
  if (steps_.size() > kMaxSteps) {
    steps_[1].least = steps_[0].least;
    steps_.erase(steps_.begin());
  }
}

std::optional<uint64_t> LeadMinima::After(uint64_t batches) const {
  auto it = std::upper_bound(steps_.begin(), steps_.end(), batches,
                             [](uint64_t b, const LeadStep& s) { return b < s.batches; });
  if (it == steps_.end()) return std::nullopt;
  return it->least;
}

std::optional<LeadMinima> LeadMinima::FromSteps(std::vector<LeadStep> steps) {
  if (steps.size() > kMaxSteps) return std::nullopt;
  for (size_t k = 1; k < steps.size(); ++k) {
    if (steps[k].batches <= steps[k - 1].batches || steps[k].least <= steps[k - 1].least) {
      return std::nullopt;
    }
  }
  LeadMinima m;
  m.steps_ = std::move(steps);
  return m;
}

}  // namespace sluice
