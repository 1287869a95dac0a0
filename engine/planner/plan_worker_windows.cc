// One worker's random-batching plan in windows of its slots, for a worker
// whose positions come in the epoch's order (a one-process world reads the
// whole epoch: its plan whole would be 8 bytes a sample). Two passes over
// the partition, which is an index function: the first checks the order and
// finds what each canonical node is asked, the second streams the parts
// (py1e through Py1eStreamPart's window, py1s span by span) and answers the
// window's slots as their sorted positions come by, handing each window out
// once all its slots are answered. The same draws as
// WorkersRandomStreamed, so the same ids.
#include <algorithm>
#include <limits>
#include <string>

#include "engine/planner/part_bounds.h"
#include "engine/planner/plan.h"
#include "engine/planner/plan_worker.h"
#include "engine/planner/rng.h"
#include "engine/planner/shuffle_algos.h"
#include "engine/planner/shuffle_py1e.h"

namespace sluice::planner {
namespace {

// A window's slot already answered holds -2 - id (-1 stays padding), as
// plan_worker_streamed.cc marks them.
constexpr int64_t AnsweredSlot(int64_t id) { return -2 - id; }

// The worker's slots a window of batches at a time.
class SlotWindow {
 public:
  SlotWindow(const WorkerSlots& slots, int64_t window, const Resampled& res, const PlanWindowSink& sink)
      : slots_(slots),
        window_(window),
        per_(std::max<int64_t>(1, window / std::max<int64_t>(slots.batch_size(), 1))),
        res_(res),
        sink_(sink) {
    buf_.resize(size_t(std::min(per_, std::max<int64_t>(slots.batches(), 1)) * slots.batch_size()));
  }
  // The next window's slots into buf(); false when none is left.
  bool Next() {
    if (next_ >= slots_.batches()) return false;
    const int64_t end = std::min(slots_.batches(), next_ + per_);
    len_ = size_t((end - next_) * slots_.batch_size());
    slots_.Fill(next_, end, buf_.data());
    next_ = end;
    at_ = 0;
    return true;
  }
  int64_t* buf() { return buf_.data(); }
  size_t len() const { return len_; }
  size_t& at() { return at_; }
  // The window's ids (answered slots mapped back, padding dropped) to the
  // sink; an unanswered slot is a bug.
  Status Emit() {
    ids_.clear();
    for (size_t k = 0; k < len_; ++k) {
      const int64_t x = buf_[k];
      if (x == -1) continue;
      if (x >= 0) return InternalError("slot of position " + std::to_string(x) + " left unanswered");
      ids_.push_back(AnsweredSlot(x));
    }
    if (!res_.identity)
      for (int64_t& id : ids_) id = res_.small_per_big[size_t(id)];
    // A window is whole batches: handed out in pieces of at most `window`.
    for (size_t at = 0; at < ids_.size(); at += size_t(window_)) {
      SLUICE_RETURN_IF_ERROR(sink_(std::span<const int64_t>(ids_.data() + at,
                                                            std::min(ids_.size() - at, size_t(window_)))));
    }
    return Status::Ok();
  }

 private:
  const WorkerSlots& slots_;
  const int64_t window_, per_;
  const Resampled& res_;
  const PlanWindowSink& sink_;
  std::vector<int64_t> buf_, ids_;
  size_t len_ = 0, at_ = 0;
  int64_t next_ = 0;
};

struct WindowAsk {
  int64_t count = 0;
  int64_t lo = std::numeric_limits<int64_t>::max(), hi = -1;  // positions within the part
};

}  // namespace

Result<bool> WorkerRandomWindows(const BatchContext& ctx, const PlanningWorker& worker, int64_t window,
                                 const PlanWindowSink& sink, bool* narrow) {
  const PlanConfig& c = ctx.request.config;
  if (c.shuffle && c.shuffle_algo != ShuffleAlgo::kPy1e && c.shuffle_algo != ShuffleAlgo::kPy1s) return false;
  SLUICE_ASSIGN_OR_RETURN(Resampled res, Resample(ctx, -1));
  const PartitionArgs pa = RandomPartitionArgs(ctx, res.size());
  SLUICE_ASSIGN_OR_RETURN(WorkerSlots slots,
                          WorkerSlots::Make(c.partition_algo, pa, worker.pnode, worker.prank, worker.worker));
  SlotWindow win(slots, std::max<int64_t>(window, 1), res, sink);
  if (!c.shuffle) {  // a position is its big id
    while (win.Next()) {
      for (size_t k = 0; k < win.len(); ++k)
        if (win.buf()[k] >= 0) win.buf()[k] = AnsweredSlot(win.buf()[k]);
      SLUICE_RETURN_IF_ERROR(win.Emit());
    }
    return true;
  }
  const int64_t C = ctx.C();
  const int64_t block = ctx.derived.shuffle_block_size;
  SLUICE_ASSIGN_OR_RETURN(const int64_t total, CheckShuffleArgs(res.shuffle_units, C, block));
  const PartBounds parts_of(total, C);
  const BlockRange br = BlockBounds(block);
  const bool py1e = c.shuffle_algo == ShuffleAlgo::kPy1e;
  if (py1e) SLUICE_RETURN_IF_ERROR(Py1eErrorsBeforeDraws(parts_of, C, br));

  // Pass 1: the order, and what each part is asked.
  std::vector<WindowAsk> ask(static_cast<size_t>(C));
  int64_t prev = -1;
  while (win.Next()) {
    for (size_t k = 0; k < win.len(); ++k) {
      const int64_t x = win.buf()[k];
      if (x < 0) continue;
      if (x >= total) return InternalError("partition position " + std::to_string(x) + " past the epoch");
      if (x < prev) return false;  // not in the epoch's order: the caller plans it whole
      prev = x;
      const int64_t i = parts_of.Of(x);
      WindowAsk& a = ask[size_t(i)];
      const int64_t t = x - parts_of.begin(i);
      ++a.count;
      a.lo = std::min(a.lo, t);
      a.hi = std::max(a.hi, t);
    }
  }
  const int64_t last = prev < 0 ? -1 : parts_of.Of(prev);

  // Pass 2: the parts in order, answering the windows' slots.
  SlotWindow out(slots, std::max<int64_t>(window, 1), res, sink);
  bool more = out.Next();
  Status failed = Status::Ok();
  numpy::Generator ep = MakeRng(c.shuffle_seed, uint64_t(ctx.request.epoch));
  const DividedSpans parts = ShuffledParts(res.shuffle_units, C, c.shuffle_seed, ep);
  for (int64_t i = 0; i <= last && failed.ok(); ++i) {
    std::span<const Span> list(parts.spans.data() + parts.part_begin[size_t(i)],
                               parts.part_begin[size_t(i) + 1] - parts.part_begin[size_t(i)]);
    const WindowAsk& a = ask[size_t(i)];
    if (a.count == 0) {
      if (py1e) {
        SLUICE_RETURN_IF_ERROR(Py1eSkipPart(list, br, ep, C, narrow));
      } else {
        Py1sStreamPart(list, ep, 0, 0, [](int64_t, const int64_t*, int64_t) {});
      }
      continue;
    }
    const int64_t pb = parts_of.begin(i), pe = parts_of.begin(i + 1);
    int64_t answered = 0;
    bool behind = false;  // a request older than what the part delivered (cannot happen)
    auto part_sink = [&](int64_t first, const int64_t* ids, int64_t count) {
      while (failed.ok() && more) {
        size_t& at = out.at();
        if (at == out.len()) {
          failed = out.Emit();
          more = out.Next();
          continue;
        }
        const int64_t x = out.buf()[at];
        if (x < 0) {  // padding: answered slots are all behind `at`
          ++at;
          continue;
        }
        if (x >= pe) return;
        const int64_t t = x - pb;
        if (t >= first + count) return;
        if (t < first) {
          behind = true;
          return;
        }
        out.buf()[at++] = AnsweredSlot(ids[t - first]);
        ++answered;
      }
    };
    if (py1e) {
      SLUICE_RETURN_IF_ERROR(Py1eStreamPart(list, br, ep, C, a.lo, a.hi + 1, part_sink, narrow));
    } else {
      Py1sStreamPart(list, ep, a.lo, a.hi + 1, part_sink);
    }
    SLUICE_RETURN_IF_ERROR(failed);
    if (behind || answered != a.count) {
      return InternalError("py1e stream answered " + std::to_string(answered) + " of " + std::to_string(a.count) +
                           " positions of canonical node " + std::to_string(i) + " (windowed plan)");
    }
  }
  // The last windows: answered already, or padding.
  for (; more; more = out.Next()) {
    for (size_t& at = out.at(); at < out.len(); ++at) {
      if (out.buf()[at] >= 0) return InternalError("a slot past the last canonical node read was left unanswered");
    }
    SLUICE_RETURN_IF_ERROR(out.Emit());
  }
  if (py1e && narrow != nullptr && !*narrow) {
    SLUICE_RETURN_IF_ERROR(Py1eNarrowAfter(parts, last + 1, C, br, ep, narrow));
  }
  return true;
}

}  // namespace sluice::planner
