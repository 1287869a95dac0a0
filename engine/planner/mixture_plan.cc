// An epoch under a mixture schedule: the sequencer picks each global
// position's stream, the stream's pass order gives the sample, and positions
// are dealt to ranks and workers as Mosaic's traversal order reads them.
#include "engine/planner/mixture_plan.h"

#include <algorithm>
#include <memory>
#include <string>

#include "engine/planner/mixture_checkpoints.h"
#include "engine/planner/mosaic_error.h"
#include "engine/planner/shuffle.h"
#include "engine/planner/size_check.h"

namespace sluice::planner {
namespace {

// Each pass reshuffles with a shuffle epoch no real epoch reaches.
constexpr uint64_t kPassStride = uint64_t{1} << 32;

int64_t StreamSamples(const PlanRequest& q, size_t stream) {
  int64_t n = 0;
  for (int64_t z : q.streams[stream].shard_sizes) n += z;
  return n;
}

// Walks the sequence, handing out the sample of the positions asked for:
// from the latest of the process's sequencer checkpoints at or before a
// position ahead (mixture_checkpoints.h), else step by step from where it
// is, recording a checkpoint at each multiple of the spacing the table
// does not reach yet; Publish() keeps the grown table for the next plan.
// One pass per stream is kept. A stream's k-th draw of the epoch (whichever
// phase draws it) is the k-th sample of its passes.
class MixtureWalk {
 public:
  // `end`: the last position the plan reads, for a new table's spacing.
  MixtureWalk(const BatchContext& ctx, std::vector<MixturePhase> phases, int64_t end)
      : ctx_(ctx), phases_(phases), seq_(std::move(phases)) {
    const size_t S = ctx.request.streams.size();
    samples_.resize(S);
    pass_.assign(S, -1);
    order_.resize(S);
    for (size_t s = 0; s < S; ++s) samples_[s] = StreamSamples(ctx.request, s);
    known_ = SharedMixtureCheckpoints(phases_);
    grown_ = known_ ? *known_ : MixtureCheckpoints(int64_t(S), end);
    record_at_ = grown_.next();
  }
  void SkipTo(int64_t position) {
    if (known_) {
      if (auto c = known_->Latest(seq_.position(), position)) seq_.Restore(*c);
    }
    while (seq_.position() < position) Step();
  }
  int64_t position() const { return seq_.position(); }
  // The stream of the current position, advancing past it.
  int64_t NextStream() { return Step(); }
  // The sample the last NextStream() drew from `stream`.
  Result<int64_t> LastSample(int64_t stream) {
    const size_t s = size_t(stream);
    const int64_t k = seq_.counts()[s] - 1;
    const int64_t pass = k / samples_[s];
    if (pass != pass_[s]) {
      SLUICE_ASSIGN_OR_RETURN(order_[s], StreamPass::Make(ctx_, stream, pass));
      pass_[s] = pass;
    }
    return order_[s][k % samples_[s]];
  }
  // Keeps the checkpoints this walk added to the process's table.
  void Publish() {
    if (grown_.size() > (known_ ? known_->size() : 0)) {
      KeepMixtureCheckpoints(phases_, std::make_shared<const MixtureCheckpoints>(std::move(grown_)));
    }
  }

 private:
  int64_t Step() {
    if (seq_.position() == record_at_) {
      grown_.Append(seq_.state());
      record_at_ = grown_.next();
    }
    return seq_.Next();
  }

  const BatchContext& ctx_;
  const std::vector<MixturePhase> phases_;
  MixtureRun seq_;
  std::shared_ptr<const MixtureCheckpoints> known_;
  MixtureCheckpoints grown_{0, 0};
  int64_t record_at_ = -1;
  std::vector<int64_t> samples_, pass_;
  std::vector<StreamPass> order_;
};

// The positions of an epoch resumed at `begin`, dealt as Mosaic's orig
// partition deals its global sequence: position begin + k goes to node
// k % P, rank (k / P) % R, as that rank's sample q = k / (P * R), which is
// slot q % B of worker (q / B) % W's batch q / (W * B). Global batch j is
// then positions [begin + jG, begin + (j + 1)G), G = P * R * B, whatever
// the world. The epoch runs to epoch_size rounded up to a multiple of the
// ranks, so that every rank reads as many samples (as Mosaic's partition
// pads); the extra positions continue the same sequence.
struct EpochDeal {
  int64_t begin = 0, total = 0, P = 1, R = 1, W = 1, B = 1;
  int64_t per_rank() const { return total / (P * R); }
  int64_t batches() const { return (per_rank() + W * B - 1) / (W * B); }
};

EpochDeal DealOf(const BatchContext& ctx) {
  EpochDeal e{ctx.request.sample_in_epoch, 0, ctx.P(), ctx.R(), ctx.W(), ctx.B()};
  const int64_t E = ctx.derived.weighting.epoch_size;
  const int64_t left = e.begin < E ? E - e.begin : 0;
  const int64_t ranks = e.P * e.R;
  e.total = (left + ranks - 1) / ranks * ranks;
  return e;
}

}  // namespace

Result<QuantizedMixture> CheckMixtureRequest(const PlanRequest& q) {
  const PlanConfig& c = q.config;
  if (c.batching_method != BatchingMethod::kRandom) {
    return MosaicValueError("mixture: batching_method must be 'random' with a mixture schedule (the schedule "
                            "decides the stream of every position), got '" +
                            std::string(BatchingMethodName(c.batching_method)) + "'");
  }
  for (size_t s = 0; s < q.streams.size(); ++s) {
    const StreamWeight& w = q.streams[s].weight;
    if (w.proportion || w.repeat || w.choose) {
      const char* which = w.proportion ? "proportion" : w.repeat ? "repeat" : "choose";
      return MosaicValueError("mixture: stream " + std::to_string(s) + " has a " + which +
                              "; with a mixture schedule the schedule sets every stream's share");
    }
  }
  if (!c.epoch_size) {
    return MosaicValueError("mixture: epoch_size is required with a mixture schedule (its points are samples "
                            "seen in the epoch)");
  }
  return QuantizeMixture(*c.mixture, int64_t(q.streams.size()));
}

Result<std::vector<MixturePhase>> MixtureRequestPhases(const PlanRequest& q) {
  SLUICE_ASSIGN_OR_RETURN(QuantizedMixture now, CheckMixtureRequest(q));
  std::vector<MixturePhase> phases;
  int64_t from = 0;
  for (const PlanConfig::MixtureChange& change : q.config.mixture_past) {
    if (change.epoch != q.epoch) continue;
    const std::string where = "the schedule replaced at " + std::to_string(change.until) + " of epoch " +
                              std::to_string(change.epoch);
    if (change.until <= from || change.until > kMaxPlanElements) {
      return MosaicValueError("mixture: " + where + " does not follow the previous change (at " +
                              std::to_string(from) + ") within the planner's limit of " +
                              std::to_string(kMaxPlanElements) + " samples");
    }
    auto past = QuantizeMixture(change.schedule, int64_t(q.streams.size()));
    if (!past.ok()) {
      // "ValueError: mixture: <what>" -> "ValueError: mixture: <where>: <what>".
      const std::string text = SplitMosaicError(past.status()).message;
      return MosaicValueError("mixture: " + where + ": " + text.substr(std::string("mixture: ").size()));
    }
    // Every phase draws by the current schedule's rule (a resume keeps its
    // state's rule for the whole epoch).
    past->rule = now.rule;
    phases.push_back({from, std::move(*past)});
    from = change.until;
  }
  phases.push_back({from, std::move(now)});
  return phases;
}

Result<StreamPass> StreamPass::Make(const BatchContext& ctx, int64_t stream, int64_t pass) {
  const PlanRequest& q = ctx.request;
  const PlanConfig& c = q.config;
  const std::vector<int64_t>& units = q.streams[size_t(stream)].shard_sizes;
  StreamPass out;
  out.n_ = StreamSamples(q, size_t(stream));
  out.C_ = std::min(ctx.C(), out.n_);
  out.columns_ = (out.n_ + out.C_ - 1) / out.C_;
  out.first_ = ctx.derived.stream_first_id[size_t(stream)];
  if (c.shuffle) {
    const uint64_t shuffle_epoch = uint64_t(q.epoch) + uint64_t(pass) * kPassStride;
    SLUICE_ASSIGN_OR_RETURN(out.perm_, GetShuffle(c.shuffle_algo, units, out.C_, c.shuffle_seed, shuffle_epoch,
                                                  ctx.derived.shuffle_block_size));
  }
  // Canonical node i holds positions [i*n/C, (i+1)*n/C): columns_ or one
  // fewer; only the longer ones reach the last column.
  for (int64_t i = 0; i < out.C_; ++i) {
    const int64_t a = int64_t(__int128(i) * out.n_ / out.C_), b = int64_t(__int128(i + 1) * out.n_ / out.C_);
    if (b - a == out.columns_) out.long_rows_.push_back(i);
  }
  return out;
}

int64_t StreamPass::operator[](int64_t k) const {
  // Column by column across the canonical nodes: every node has the first
  // columns_ - 1 columns, the long ones the last.
  const int64_t full = (columns_ - 1) * C_;
  const int64_t node = k < full ? k % C_ : long_rows_[size_t(k - full)];
  const int64_t column = k < full ? k / C_ : columns_ - 1;
  const int64_t position = int64_t(__int128(node) * n_ / C_) + column;
  return first_ + (perm_.empty() ? position : perm_[size_t(position)]);
}

Result<std::vector<int64_t>> MixtureStreamPass(const BatchContext& ctx, int64_t stream, int64_t pass) {
  SLUICE_ASSIGN_OR_RETURN(StreamPass view, StreamPass::Make(ctx, stream, pass));
  std::vector<int64_t> out(size_t(view.size()));
  for (int64_t k = 0; k < view.size(); ++k) out[size_t(k)] = view[k];
  return out;
}

Result<std::vector<int64_t>> MixtureSequence(const BatchContext& ctx, int64_t begin, int64_t end) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<MixturePhase> m, MixtureRequestPhases(ctx.request));
  if (begin < 0 || end < begin || end > kMaxPlanElements) {
    return InvalidArgumentError("mixture sequence range [" + std::to_string(begin) + ", " + std::to_string(end) +
                                ") is not within [0, 2^36]");
  }
  MixtureWalk walk(ctx, std::move(m), end);
  walk.SkipTo(begin);
  std::vector<int64_t> out;
  out.reserve(size_t(end - begin));
  while (walk.position() < end) {
    const int64_t s = walk.NextStream();
    SLUICE_ASSIGN_OR_RETURN(int64_t id, walk.LastSample(s));
    out.push_back(id);
  }
  walk.Publish();
  return out;
}

Result<WorkArray> MixtureEpoch(const BatchContext& ctx) {
  const EpochDeal e = DealOf(ctx);
  SLUICE_ASSIGN_OR_RETURN(std::vector<int64_t> seq, MixtureSequence(ctx, e.begin, e.begin + e.total));
  const int64_t P = e.P, R = e.R, W = e.W, B = e.B, NB = e.batches();
  SLUICE_RETURN_IF_ERROR(CheckProduct({P, R, W, NB, B}));
  WorkArray work;
  work.shape = {P, R, W, NB, B};
  work.ids.assign(size_t(P * R * W * NB * B), -1);
  for (int64_t k = 0; k < e.total; ++k) {
    const int64_t q = k / (P * R);
    work.At(k % P, (k / P) % R, (q / B) % W, q / (W * B), q % B) = seq[size_t(k)];
  }
  return work;
}

Result<std::vector<int64_t>> MixtureWorker(const BatchContext& ctx, int64_t pnode, int64_t prank, int64_t worker) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<MixturePhase> mixture, MixtureRequestPhases(ctx.request));
  const EpochDeal e = DealOf(ctx);
  MixtureWalk walk(ctx, std::move(mixture), e.begin + e.total);
  std::vector<int64_t> out;
  // The worker's rank samples q, in order: batches of B, every W-th batch.
  for (int64_t q0 = worker * e.B; q0 < e.per_rank(); q0 += e.W * e.B) {
    for (int64_t q = q0; q < std::min(q0 + e.B, e.per_rank()); ++q) {
      walk.SkipTo(e.begin + pnode + e.P * (prank + e.R * q));
      const int64_t s = walk.NextStream();
      SLUICE_ASSIGN_OR_RETURN(int64_t id, walk.LastSample(s));
      out.push_back(id);
    }
  }
  walk.Publish();
  return out;
}

}  // namespace sluice::planner
