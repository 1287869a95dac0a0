// The least prefetch lead of a process's batches after any of its node
// records (node_metrics.h), so that a job or node window, which counts the
// batches of the records written between two sums, gets the least lead of
// exactly those batches.
//
// The consumer closes a period at each record it writes: the least lead of
// the batches since the previous record, and `batches`, its batch count at
// the record. LeadMinima keeps the suffix minima of those periods: steps
// (batches, least) where `least` is the least lead of every batch after the
// previous step's `batches`, increasing from the oldest step to the newest
// (a period whose least is at or below a newer one's ends the older steps).
// The least lead of the batches after a record of count `b` is the least of
// the first step past `b`. At most kMaxSteps steps: past them the two oldest
// merge (the older's least at the newer's count), so a window that began
// between them gets a least that may be lower than its own.
//
// A plain value; not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace sluice {

struct LeadStep {
  uint64_t batches = 0;  // the consumer's batch count at the record closing it
  uint64_t least = 0;    // the least lead of the batches since the previous step
  bool operator==(const LeadStep&) const = default;
};

class LeadMinima {
 public:
  static constexpr size_t kMaxSteps = 128;

  // A period ending at batch count `batches` whose batches' least lead is
  // `least`.
  void Close(uint64_t batches, uint64_t least);
  // The least lead of the batches after count `batches`; nullopt when none
  // came after it.
  std::optional<uint64_t> After(uint64_t batches) const;

  const std::vector<LeadStep>& steps() const { return steps_; }
  // From a record (node_metrics.cc): nullopt unless the steps are as Close
  // leaves them (at most kMaxSteps, counts and leasts increasing).
  static std::optional<LeadMinima> FromSteps(std::vector<LeadStep> steps);
  void Clear() { steps_.clear(); }

 private:
  std::vector<LeadStep> steps_;
};

}  // namespace sluice
