// One worker's random-batching plan in windows of its slots (a one-process
// world reads the whole epoch: its plan whole would be 8 bytes a sample; a
// worker of several canonical nodes reads them interleaved). Two passes over the partition, which is an index function:
// the first finds what each canonical node is asked, as runs of positions
// in sorted order, the second answers each window's slots from one
// PartReader per run being read (py1e's sliding window, py1s span by span),
// handing each window out once all its slots are answered. The same draws as
// WorkersRandomStreamed, so the same ids.
#include <algorithm>
#include <atomic>
#include <functional>
#include <limits>
#include <memory>
#include <string>

#include "engine/planner/part_bounds.h"
#include "engine/planner/part_reader.h"
#include "engine/planner/plan.h"
#include "engine/planner/plan_worker.h"
#include "engine/planner/rng.h"
#include "engine/planner/shuffle_algos.h"
#include "engine/planner/shuffle_py1e.h"
#include "engine/planner/stable_pos_sort.h"

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
    return true;
  }
  // Back to the first window (the second pass).
  void Rewind() { next_ = 0; }
  int64_t* buf() { return buf_.data(); }
  size_t len() const { return len_; }
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
  size_t len_ = 0;
  int64_t next_ = 0;
};

// A run of a canonical node's positions that the worker's slots ask in
// sorted order (a node is usually one run; padding that wraps to the
// epoch's start begins another), and where in the slots it lies.
struct AskRun {
  int64_t count = 0;
  int64_t lo = std::numeric_limits<int64_t>::max(), hi = -1;  // positions within the part
  int64_t first_slot = -1, last_slot = -1;
};

// Beyond this many runs a node (4 + a few per node), the windows are not
// worth their readers: the worker is planned whole.
constexpr size_t kMostRunsPerPart = 4;

// A canonical node being read, one run at a time: where its draws start
// (set when the generator passes the node before it is read, or kept while
// later runs remain), the reader's generator and the run's answered slots.
struct OpenPart {
  std::unique_ptr<numpy::Pcg64> start, gen;
  std::unique_ptr<PartReader> reader;
  size_t run = 0;
  int64_t answered = 0;
};

// The most runs whose slot ranges overlap: readers open at once.
int64_t MostOpenReaders(const std::vector<std::vector<AskRun>>& ask) {
  std::vector<std::pair<int64_t, int>> events;
  for (const auto& runs : ask)
    for (const AskRun& r : runs) {
      events.push_back({r.first_slot, 1});
      events.push_back({r.last_slot + 1, -1});
    }
  std::sort(events.begin(), events.end());  // a close sorts before an open at the same slot
  int64_t open = 0, most = 0;
  for (const auto& e : events) most = std::max(most, open += e.second);
  return most;
}

// Beyond what the whole plan would hold (12 bytes a slot: PlanWorker's
// bound), and this floor, the windowed path does not pay for its readers.
constexpr int64_t kReadersFloorBytes = int64_t{64} << 20;

}  // namespace

Result<bool> WorkerRandomWindows(const BatchContext& ctx, const PlanningWorker& worker, int64_t window,
                                 const PlanWindowSink& sink, bool* narrow, const std::atomic<bool>* cancel,
                                 const EpochCheckpoints* checkpoints) {
  const PlanConfig& c = ctx.request.config;
  if (c.shuffle && c.shuffle_algo != ShuffleAlgo::kPy1e && c.shuffle_algo != ShuffleAlgo::kPy1s) return false;
  SLUICE_ASSIGN_OR_RETURN(Resampled res, Resample(ctx, -1));
  const PartitionArgs pa = RandomPartitionArgs(ctx, res.size());
  SLUICE_ASSIGN_OR_RETURN(WorkerSlots slots,
                          WorkerSlots::Make(c.partition_algo, pa, worker.pnode, worker.prank, worker.worker));
  SlotWindow win(slots, std::max<int64_t>(window, 1), res, sink);
  if (!c.shuffle) {  // a position is its big id
    while (win.Next()) {
      SLUICE_RETURN_IF_ERROR(CheckPlanCancelled(cancel));
      for (size_t k = 0; k < win.len(); ++k)
        if (win.buf()[k] >= 0) win.buf()[k] = AnsweredSlot(win.buf()[k]);
      SLUICE_RETURN_IF_ERROR(win.Emit());
    }
    return true;
  }
  SLUICE_ASSIGN_OR_RETURN(const StreamedShuffle sh, SetUpStreamedShuffle(ctx, res));
  if (checkpoints != nullptr) SLUICE_RETURN_IF_ERROR(sh.Accept(*checkpoints, c, ctx.request.epoch, narrow));
  const PartBounds& parts_of = sh.parts_of;

  // Pass 1: each part's runs of positions in sorted order.
  std::vector<std::vector<AskRun>> ask(static_cast<size_t>(sh.C));
  int64_t slot = 0, last = -1, asked = 0;
  while (win.Next()) {
    SLUICE_RETURN_IF_ERROR(CheckPlanCancelled(cancel));
    for (size_t k = 0; k < win.len(); ++k, ++slot) {
      const int64_t x = win.buf()[k];
      if (x < 0) continue;
      if (x >= sh.total) return InternalError("partition position " + std::to_string(x) + " past the epoch");
      const int64_t i = parts_of.Of(x);
      std::vector<AskRun>& runs = ask[size_t(i)];
      const int64_t t = x - parts_of.begin(i);
      if (runs.empty() || t < runs.back().hi) {
        if (runs.size() == kMostRunsPerPart) return false;  // far from sorted: the caller plans it whole
        runs.emplace_back().first_slot = slot;
        last = std::max(last, i);
      }
      AskRun& r = runs.back();
      ++r.count;
      ++asked;
      r.lo = std::min(r.lo, t);
      r.hi = t;
      r.last_slot = slot;
    }
  }
  {
    // The readers' windows against the whole plan's slots.
    int64_t widest = 0;
    for (int64_t u : res.shuffle_units) widest = std::max(widest, u);
    // py1e's window: pending and done entries, at most the part or about
    // three reaches of the block past the widest span; py1s: one span.
    const int64_t reach = sh.br.hi / 2 + 1;
    const int64_t held = std::min(sh.total / sh.C + 1, 3 * reach + (int64_t{1} << 12) + widest);
    const int64_t per_reader = sh.py1e ? 2 * int64_t(sizeof(PosId)) * held + 8 * widest : 8 * widest;
    const __int128 readers = __int128{MostOpenReaders(ask)} * per_reader;
    if (readers > kReadersFloorBytes && readers > __int128{12} * asked) return false;
  }

  // Pass 2: the windows' slots answered by the runs' readers, in the same
  // order. `front` stands at part front_part's first draw.
  numpy::Generator front = MakeRng(c.shuffle_seed, uint64_t(ctx.request.epoch));
  const DividedSpans parts = ShuffledParts(res.shuffle_units, sh.C, c.shuffle_seed, front);
  int64_t front_part = 0;
  std::vector<OpenPart> open(static_cast<size_t>(last + 1));
  SlotWindow& out = win;
  out.Rewind();
  while (out.Next()) {
    SLUICE_RETURN_IF_ERROR(CheckPlanCancelled(cancel));
    for (size_t k = 0; k < out.len(); ++k) {
      const int64_t x = out.buf()[k];
      if (x < 0) continue;
      const int64_t i = parts_of.Of(x);
      const int64_t t = x - parts_of.begin(i);
      OpenPart& o = open[size_t(i)];
      const std::vector<AskRun>& runs = ask[size_t(i)];
      if (o.reader == nullptr) {
        if (o.run >= runs.size()) return InternalError("canonical node " + std::to_string(i) + " read again");
        if (o.start == nullptr && checkpoints != nullptr) {
          o.start = std::make_unique<numpy::Pcg64>(checkpoints->node_start[size_t(i)]);
        } else if (o.start == nullptr) {
          // The parts before it drawn over, keeping where those still to be
          // read start; one still being read gives its end (py1e), or is
          // drawn a second time from its start (py1s).
          for (; front_part < i; ++front_part) {
            SLUICE_RETURN_IF_ERROR(CheckPlanCancelled(cancel));
            OpenPart& p = open[size_t(front_part)];
            if (!ask[size_t(front_part)].empty() && p.reader == nullptr && p.start == nullptr && p.run == 0) {
              p.start = std::make_unique<numpy::Pcg64>(front.bit_generator());
            }
            if (p.reader == nullptr || !p.reader->EndState(&front.bit_generator(), narrow)) {
              SLUICE_RETURN_IF_ERROR(sh.Skip(StreamedShuffle::Part(parts, front_part), front, narrow));
            }
          }
          o.start = std::make_unique<numpy::Pcg64>(front.bit_generator());
        }
        o.gen = std::make_unique<numpy::Pcg64>(*o.start);
        const AskRun& a = runs[o.run];
        SLUICE_ASSIGN_OR_RETURN(o.reader, sh.Open(StreamedShuffle::Part(parts, i), *o.gen, a.lo, a.hi + 1, narrow));
      }
      PartReader& r = *o.reader;
      while (t >= r.first() + int64_t(r.ids().size())) {
        if (!r.Next()) {
          return InternalError("position " + std::to_string(t) + " of canonical node " + std::to_string(i) +
                               " never came out of its reader (windowed plan)");
        }
      }
      if (t < r.first()) {
        return InternalError("position " + std::to_string(t) + " of canonical node " + std::to_string(i) +
                             " was asked after its reader passed it (windowed plan)");
      }
      out.buf()[k] = AnsweredSlot(r.ids()[size_t(t - r.first())]);
      if (++o.answered == runs[o.run].count) {
        // The run's last slot: the rest of the part drawn (as the whole
        // plan draws it), and where the next part's draws start kept if
        // `front` waits on it.
        while (r.Next()) {
        }
        o.reader.reset();
        if (front_part == i && checkpoints == nullptr) {
          front.bit_generator() = *o.gen;
          ++front_part;
        }
        o.gen.reset();
        o.answered = 0;
        if (++o.run == runs.size()) o.start.reset();
      }
    }
    SLUICE_RETURN_IF_ERROR(out.Emit());
  }
  for (int64_t i = 0; i <= last; ++i) {
    if (open[size_t(i)].run != ask[size_t(i)].size()) {
      return InternalError("canonical node " + std::to_string(i) + " was left with runs unread (windowed plan)");
    }
  }
  if (sh.py1e && narrow != nullptr && !*narrow && checkpoints == nullptr) {
    SLUICE_RETURN_IF_ERROR(Py1eNarrowAfter(parts, last + 1, sh.C, sh.br, front, narrow));
  }
  return true;
}

}  // namespace sluice::planner
