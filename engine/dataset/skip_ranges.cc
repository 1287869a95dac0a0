#include "engine/dataset/skip_ranges.h"

#include <algorithm>
#include <string>
#include <utility>

namespace sluice {
namespace {

// Positions stay below 2^48 (StreamingDataset's bound on samples).
constexpr int64_t kMaxPosition = int64_t{1} << 48;

Status CheckRange(const char* what, const std::pair<int64_t, int64_t>& r) {
  if (r.first < 0 || r.second <= r.first) {
    return InvalidArgumentError(std::string(what) + ": [" + std::to_string(r.first) + ", " +
                                std::to_string(r.second) +
                                ") is not a range [first, last) with 0 <= first < last");
  }
  return Status::Ok();
}

bool Skipped(const std::vector<SkipRange>& ranges, int64_t epoch, int64_t position) {
  for (const SkipRange& r : ranges) {
    if (r.epoch == epoch && r.begin <= position && position < r.end) return true;
  }
  return false;
}

}  // namespace

Result<std::vector<SkipRange>> SkipRangesFromSteps(int64_t epoch, const StepRanges& steps,
                                                   int64_t global_batch) {
  std::vector<SkipRange> out;
  for (const auto& r : steps) {
    SLUICE_RETURN_IF_ERROR(CheckRange("skip_steps", r));
    if (r.second > kMaxPosition / global_batch) {
      return InvalidArgumentError("skip_steps: [" + std::to_string(r.first) + ", " +
                                  std::to_string(r.second) + ") reaches past 2^48 samples");
    }
    out.push_back(SkipRange{epoch, r.first * global_batch, r.second * global_batch});
  }
  return out;
}

Result<std::vector<SkipRange>> SkipRangesFromSamples(int64_t epoch, const StepRanges& samples,
                                                     int64_t global_batch) {
  std::vector<SkipRange> out;
  for (const auto& r : samples) {
    SLUICE_RETURN_IF_ERROR(CheckRange("skip_samples", r));
    if (r.second > kMaxPosition) {
      return InvalidArgumentError("skip_samples: [" + std::to_string(r.first) + ", " +
                                  std::to_string(r.second) + ") reaches past 2^48 samples");
    }
    if (r.first % global_batch || r.second % global_batch) {
      return InvalidArgumentError(
          "skip_samples: [" + std::to_string(r.first) + ", " + std::to_string(r.second) +
          ") is not whole steps: its bounds must be multiples of the global batch " +
          std::to_string(global_batch));
    }
    out.push_back(SkipRange{epoch, r.first, r.second});
  }
  return out;
}

std::vector<SkipRange> MergeSkipRanges(std::vector<SkipRange> ranges) {
  std::sort(ranges.begin(), ranges.end(), [](const SkipRange& a, const SkipRange& b) {
    return a.epoch != b.epoch ? a.epoch < b.epoch : a.begin < b.begin;
  });
  std::vector<SkipRange> out;
  for (const SkipRange& r : ranges) {
    if (!out.empty() && out.back().epoch == r.epoch && r.begin <= out.back().end) {
      out.back().end = std::max(out.back().end, r.end);
    } else {
      out.push_back(r);
    }
  }
  return out;
}

bool SkipsAhead(const std::vector<SkipRange>& ranges, int64_t epoch, int64_t start) {
  for (const SkipRange& r : ranges) {
    if (r.epoch == epoch && r.end > start) return true;
  }
  return false;
}

Status CheckSkipsAhead(const std::vector<SkipRange>& ranges, int64_t epoch, int64_t start,
                       int64_t batch_size, int64_t ranks) {
  if (!SkipsAhead(ranges, epoch, start)) return Status::Ok();
  const int64_t g = batch_size * ranks;
  const std::string step = "a whole step (a multiple of the global batch " + std::to_string(g) +
                           " = batch_size " + std::to_string(batch_size) + " x " +
                           std::to_string(ranks) + " ranks)";
  if (start % g) {
    return InvalidArgumentError("skipping steps: the resume position " + std::to_string(start) +
                                " of epoch " + std::to_string(epoch) + " is not " + step);
  }
  for (const SkipRange& r : ranges) {
    if (r.epoch != epoch || r.end <= start) continue;
    if (r.begin % g || r.end % g) {
      return InvalidArgumentError("skipping steps: the skipped samples [" +
                                  std::to_string(r.begin) + ", " + std::to_string(r.end) +
                                  ") of epoch " + std::to_string(epoch) + " are not " + step);
    }
  }
  return Status::Ok();
}

int64_t PositionAfter(const std::vector<SkipRange>& ranges, int64_t epoch, int64_t start,
                      uint64_t consumed) {
  int64_t p = start;
  int64_t left = static_cast<int64_t>(std::min<uint64_t>(consumed, kMaxPosition));
  for (const SkipRange& r : ranges) {
    if (r.epoch != epoch || r.end <= p) continue;
    if (r.begin > p) {
      if (p + left < r.begin) break;
      left -= r.begin - p;
    }
    p = r.end;
  }
  return p + left;
}

SkipDealer::SkipDealer(std::vector<SkipRange> ranges, int64_t epoch, int64_t first_step, int64_t batch_size,
                       int64_t ranks, int64_t worker, int64_t num_workers)
    : ranges_(std::move(ranges)),
      epoch_(epoch),
      step_(first_step),
      batch_(std::max<int64_t>(batch_size, 1)),
      ranks_(ranks),
      worker_(worker),
      num_workers_(std::max<int64_t>(num_workers, 1)) {}

void SkipDealer::Deal(std::span<const int64_t> rank_ids, std::vector<int64_t>* out) {
  while (!rank_ids.empty()) {
    if (in_batch_ == 0) {
      // Batch j of the rank is step first_step + j; a kept one goes to the
      // workers in turn.
      keep_ = !Skipped(ranges_, epoch_, step_ * batch_ * ranks_) && kept_++ % num_workers_ == worker_;
    }
    const size_t n = std::min(rank_ids.size(), static_cast<size_t>(batch_ - in_batch_));
    if (keep_) out->insert(out->end(), rank_ids.begin(), rank_ids.begin() + static_cast<std::ptrdiff_t>(n));
    rank_ids = rank_ids.subspan(n);
    in_batch_ += static_cast<int64_t>(n);
    if (in_batch_ == batch_) {
      in_batch_ = 0;
      ++step_;
    }
  }
}

std::vector<int64_t> WorkerIdsSkipping(const std::vector<int64_t>& rank_ids,
                                       const std::vector<SkipRange>& ranges, int64_t epoch,
                                       int64_t first_step, int64_t batch_size, int64_t ranks,
                                       int64_t worker, int64_t num_workers) {
  std::vector<int64_t> out;
  SkipDealer(ranges, epoch, first_step, batch_size, ranks, worker, num_workers).Deal(rank_ids, &out);
  return out;
}

}  // namespace sluice
