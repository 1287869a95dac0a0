// One worker's random-batching plan under py1e or py1s without the parts it
// reads held whole (engine/planner/README.md): its partition slice gives the
// positions it reads; parts before them are drawn over, its parts are
// streamed (py1e through Py1eStreamPart's window, py1s span by span), and
// nothing after its last part is drawn unless Mosaic's py1e narrow-block
// warning can only be decided by the draws.
#include <algorithm>
#include <limits>
#include <memory>
#include <string>

#include "engine/planner/mosaic_error.h"
#include "engine/planner/part_bounds.h"
#include "engine/planner/part_reader.h"
#include "engine/planner/plan.h"
#include "engine/planner/plan_worker.h"
#include "engine/planner/rng.h"
#include "engine/planner/shuffle_algos.h"
#include "engine/planner/shuffle_py1e.h"

namespace sluice::planner {
namespace {

// A slot already answered holds -2 - id, so no later part mistakes the id
// for a position (-1 stays padding).
constexpr int64_t Answered(int64_t id) { return -2 - id; }

// What the worker asks of one part.
struct PartAsk {
  int64_t count = 0;
  int64_t lo = std::numeric_limits<int64_t>::max(), hi = -1;  // positions within the part
  int64_t prev = -1;
  bool in_order = true;  // non-decreasing in slot order
};

// Beyond this many parts a worker's slots are indexed by part once instead
// of walked once per part.
constexpr int64_t kWalkParts = 8;

// py1s: a part is its spans' ids, each span shuffled in place, in order, so
// sorted position t is in the span covering t. Spans meeting [lo, hi) are
// shuffled and handed out; the others' draws are replayed.
class Py1sReader final : public PartReader {
 public:
  Py1sReader(std::span<const Span> spans, numpy::Pcg64& gen, int64_t lo, int64_t hi)
      : spans_(spans), bits_(gen), lo_(lo), hi_(hi) {}
  bool EndState(numpy::Pcg64*, bool*) const override { return false; }
  bool Next() override {
    while (span_ < spans_.size()) {
      const Span& s = spans_[span_++];
      const int64_t z = s.size();
      const bool big = uint64_t(z) > (uint64_t{1} << 32);
      const int64_t off = off_;
      off_ += z;
      if (off + z > lo_ && off < hi_) {
        ids_buf_.resize(size_t(z));
        for (int64_t k = 0; k < z; ++k) ids_buf_[size_t(k)] = s.begin + k;
        if (big) {
          numpy::ShuffleFrom(bits_, std::span<int64_t>(ids_buf_));
        } else {
          bits_.ShuffleU32(std::span<int64_t>(ids_buf_));
        }
        first_ = off;
        ids_ = std::span<const int64_t>(ids_buf_.data(), ids_buf_.size());
        return true;
      }
      SkipSpanShuffle(z, bits_);
    }
    return false;
  }

 private:
  const std::span<const Span> spans_;
  numpy::Pcg64Stream bits_;
  const int64_t lo_, hi_;
  size_t span_ = 0;
  int64_t off_ = 0;
  std::vector<int64_t> ids_buf_;
};

}  // namespace

std::unique_ptr<PartReader> OpenPy1sReader(std::span<const Span> spans, numpy::Pcg64& gen, int64_t lo, int64_t hi) {
  return std::make_unique<Py1sReader>(spans, gen, lo, hi);
}

std::span<const Span> StreamedShuffle::Part(const DividedSpans& parts, int64_t i) {
  return std::span<const Span>(parts.spans.data() + parts.part_begin[size_t(i)],
                               parts.part_begin[size_t(i) + 1] - parts.part_begin[size_t(i)]);
}

Status StreamedShuffle::Accept(const EpochCheckpoints& k, const PlanConfig& c, int64_t epoch, bool* narrow) const {
  if (k.algo != c.shuffle_algo || k.seed != c.shuffle_seed || k.epoch != uint64_t(epoch) || k.num_samples != total ||
      k.num_canonical_nodes != C || k.block != block || int64_t(k.node_start.size()) != C) {
    return InvalidArgumentError("the epoch checkpoints were made for another plan (seed, epoch, samples, "
                                "canonical nodes or block size differ)");
  }
  if (narrow != nullptr && k.py1e_narrow_block) *narrow = true;
  return Status::Ok();
}

Status StreamedShuffle::Skip(std::span<const Span> list, numpy::Generator& ep, bool* narrow,
                             numpy::Pcg64Ahead* ahead) const {
  if (py1e) return Py1eSkipPart(list, br, ep, C, narrow, ahead);
  // py1s: a part is its spans' shuffles and nothing else.
  int64_t n = 0;
  for (const Span& s : list) n += s.size();
  numpy::Pcg64Stream bits(ep.bit_generator());
  if (ahead != nullptr && n >= kAheadPartMin) bits.Attach(ahead);
  for (const Span& s : list) SkipSpanShuffle(s.size(), bits);
  return Status::Ok();
}

Result<std::unique_ptr<PartReader>> StreamedShuffle::Open(std::span<const Span> list, numpy::Pcg64& gen, int64_t lo,
                                                          int64_t hi, bool* narrow) const {
  if (py1e) return OpenPy1eReader(list, br, gen, C, lo, hi, narrow);
  return OpenPy1sReader(list, gen, lo, hi);
}

Status StreamedShuffle::Stream(std::span<const Span> list, numpy::Generator& ep, int64_t lo, int64_t hi,
                               const Py1eSink& sink, bool* narrow) const {
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<PartReader> reader, Open(list, ep.bit_generator(), lo, hi, narrow));
  while (reader->Next()) sink(reader->first(), reader->ids().data(), int64_t(reader->ids().size()));
  return Status::Ok();
}

Result<StreamedShuffle> SetUpStreamedShuffle(const BatchContext& ctx, const Resampled& res) {
  StreamedShuffle sh;
  sh.C = ctx.C();
  sh.block = ctx.derived.shuffle_block_size;
  SLUICE_ASSIGN_OR_RETURN(sh.total, CheckShuffleArgs(res.shuffle_units, sh.C, sh.block));
  sh.parts_of = PartBounds(sh.total, sh.C);
  sh.br = BlockBounds(sh.block);
  sh.py1e = ctx.request.config.shuffle_algo == ShuffleAlgo::kPy1e;
  if (sh.py1e) SLUICE_RETURN_IF_ERROR(Py1eErrorsBeforeDraws(sh.parts_of, sh.C, sh.br));
  return sh;
}

Status Py1eErrorsBeforeDraws(const PartBounds& parts, int64_t C, BlockRange br) {
  if (parts.size(0) == 0) return Py1eEmptyPart(C);
  if (br.hi <= br.lo) return IntegersError(br.lo, br.hi);
  for (int64_t i = 1; i < C; ++i)
    if (parts.size(i) == 0) return Py1eEmptyPart(C);
  return Status::Ok();
}

Status Py1eNarrowAfter(const DividedSpans& parts, int64_t from, int64_t C, BlockRange br, numpy::Generator& ep,
                       bool* narrow) {
  int64_t last_maybe = -1;
  for (int64_t i = from; i < C; ++i)
    for (size_t s = parts.part_begin[size_t(i)]; s < parts.part_begin[size_t(i) + 1]; ++s) {
      const int64_t z = parts.spans[s].size();
      if (z > br.hi - 1) {
        *narrow = true;  // every draw is below z
        return Status::Ok();
      }
      if (z > br.lo) last_maybe = i;
    }
  for (int64_t i = from; i <= last_maybe && !*narrow; ++i) {
    std::span<const Span> list(parts.spans.data() + parts.part_begin[size_t(i)],
                               parts.part_begin[size_t(i) + 1] - parts.part_begin[size_t(i)]);
    SLUICE_RETURN_IF_ERROR(Py1eSkipPart(list, br, ep, C, narrow));
  }
  return Status::Ok();
}

Result<std::vector<std::vector<int64_t>>> WorkersRandomStreamed(const BatchContext& ctx, const Resampled& res,
                                                               const PartitionArgs& pa,
                                                               std::span<const PlanningWorker> workers, bool* narrow,
                                                               const EpochCheckpoints* checkpoints, int64_t head,
                                                               const std::atomic<bool>* cancel) {
  const PlanConfig& c = ctx.request.config;
  // The workers' slots one after another: one pass over the parts answers
  // them all (positions may repeat across and within workers; each slot is
  // answered).
  std::vector<int64_t> out;
  std::vector<size_t> ends;
  for (const PlanningWorker& w : workers) {
    SLUICE_ASSIGN_OR_RETURN(std::vector<int64_t> own, GetWorkerPartition(c.partition_algo, pa, w.pnode, w.prank, w.worker, head));
    KeepHead(own, head);
    if (out.empty()) {
      out = std::move(own);
    } else {
      out.insert(out.end(), own.begin(), own.end());
    }
    ends.push_back(out.size());
  }
  SLUICE_ASSIGN_OR_RETURN(const StreamedShuffle sh, SetUpStreamedShuffle(ctx, res));
  const int64_t C = sh.C, total = sh.total;
  const PartBounds& parts_of = sh.parts_of;

  std::vector<PartAsk> ask(static_cast<size_t>(C));
  int64_t touched = 0, last = -1;
  bool in_order = true;
  for (int64_t x : out) {
    if (x < 0) continue;
    if (x >= total) return InternalError("partition position " + std::to_string(x) + " past the epoch");
    const int64_t i = parts_of.Of(x);
    PartAsk& a = ask[size_t(i)];
    const int64_t t = x - parts_of.begin(i);
    touched += a.count == 0;
    last = std::max(last, i);
    ++a.count;
    a.lo = std::min(a.lo, t);
    a.hi = std::max(a.hi, t);
    if (t < a.prev) a.in_order = in_order = false;
    a.prev = t;
  }
  // Each part's slots in position order: walked in slot order when that is
  // already position order and the parts are few, else indexed.
  const bool walk = in_order && touched <= kWalkParts;
  std::vector<uint32_t> order;
  std::vector<int64_t> order_begin;
  if (!walk) {
    if (out.size() > std::numeric_limits<uint32_t>::max()) {
      return InvalidArgumentError("one worker's plan of " + std::to_string(out.size()) + " slots is too large");
    }
    order_begin.assign(size_t(C) + 1, 0);
    for (int64_t i = 0; i < C; ++i) order_begin[size_t(i) + 1] = order_begin[size_t(i)] + ask[size_t(i)].count;
    order.resize(size_t(order_begin[size_t(C)]));
    std::vector<int64_t> fill(order_begin.begin(), order_begin.end() - 1);
    for (size_t slot = 0; slot < out.size(); ++slot)
      if (out[slot] >= 0) order[size_t(fill[size_t(parts_of.Of(out[slot]))]++)] = uint32_t(slot);
    for (int64_t i = 0; i < C; ++i) {
      if (ask[size_t(i)].in_order) continue;
      std::stable_sort(order.begin() + order_begin[size_t(i)], order.begin() + order_begin[size_t(i) + 1],
                       [&out](uint32_t a, uint32_t b) { return out[a] < out[b]; });
    }
  }

  if (checkpoints != nullptr) SLUICE_RETURN_IF_ERROR(sh.Accept(*checkpoints, c, ctx.request.epoch, narrow));
  numpy::Generator ep = MakeRng(c.shuffle_seed, uint64_t(ctx.request.epoch));
  const DividedSpans parts = ShuffledParts(res.shuffle_units, C, c.shuffle_seed, ep);
  for (int64_t i = 0; i <= last; ++i) {
    SLUICE_RETURN_IF_ERROR(CheckPlanCancelled(cancel));
    const std::span<const Span> list = StreamedShuffle::Part(parts, i);
    const PartAsk& a = ask[size_t(i)];
    if (checkpoints != nullptr) {
      if (a.count == 0) continue;
      ep.bit_generator() = checkpoints->node_start[size_t(i)];
    }
    if (a.count == 0) {
      SLUICE_RETURN_IF_ERROR(sh.Skip(list, ep, narrow));
      continue;
    }
    const int64_t pb = parts_of.begin(i), pe = parts_of.begin(i + 1);
    size_t at = walk ? 0 : size_t(order_begin[size_t(i)]);
    const size_t end = walk ? out.size() : size_t(order_begin[size_t(i) + 1]);
    int64_t answered = 0;
    bool behind = false;  // a request older than what the part delivered (cannot happen)
    auto sink = [&](int64_t first, const int64_t* ids, int64_t count) {
      while (at < end) {
        const size_t slot = walk ? at : order[at];
        const int64_t x = out[slot];
        if (walk && (x < pb || x >= pe)) {
          ++at;
          continue;
        }
        const int64_t t = x - pb;
        if (t >= first + count) return;
        if (t < first) {
          behind = true;
          return;
        }
        out[slot] = Answered(ids[t - first]);
        ++answered;
        ++at;
      }
    };
    SLUICE_RETURN_IF_ERROR(sh.Stream(list, ep, a.lo, a.hi + 1, sink, narrow));
    if (behind || answered != a.count) {
      return InternalError("py1e stream answered " + std::to_string(answered) + " of " + std::to_string(a.count) +
                           " positions of canonical node " + std::to_string(i));
    }
  }
  if (sh.py1e && narrow != nullptr && !*narrow && checkpoints == nullptr) {
    SLUICE_RETURN_IF_ERROR(Py1eNarrowAfter(parts, last + 1, C, sh.br, ep, narrow));
  }
  for (int64_t& x : out)
    if (x <= -2) x = Answered(x);  // its own inverse
  MapSmall(out, res);
  std::vector<std::vector<int64_t>> each(ends.size());
  if (ends.size() == 1) {
    each[0] = std::move(out);
  } else {
    for (size_t k = 0, begin = 0; k < ends.size(); begin = ends[k++]) each[k].assign(out.begin() + begin, out.begin() + ends[k]);
  }
  return each;
}

}  // namespace sluice::planner
