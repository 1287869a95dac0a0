// py1e one part at a time through a sliding window: the part's sorted order
// without holding the part (engine/planner/README.md, "py1e"), pulled a
// piece at a time (part_reader.h) or handed to a sink (Py1eStreamPart).
#include <algorithm>
#include <limits>
#include <vector>

#include "engine/planner/part_reader.h"
#include "engine/planner/shuffle_py1e.h"
#include "engine/planner/stable_pos_sort.h"

namespace sluice::planner {
namespace {

// A flush asked for fewer than 1/kSelectBelow of its ranks selects them
// (O(flush)) instead of sorting the flush.
constexpr int64_t kSelectBelow = 8;
// A selected head of at most this many ranks is kept in a heap while the
// part is drawn instead of holding every key of the part.
constexpr int64_t kHeapHeadAtMost = 4096;
// Such a head draws its keys this many at a time between checks of whether
// the rest of a span can still enter it.
constexpr int64_t kHeadDrawChunk = 64;

using Entry = PosId;

class Py1eReader final : public PartReader {
 public:
  // The part's span shuffles are replayed here (they all come before its
  // first uniform), saving where each materialized span's draws start.
  Py1eReader(std::span<const Span> spans, BlockRange br, numpy::Pcg64& gen, int64_t n, int64_t lo, int64_t hi,
             bool* narrow, int64_t min_chunk)
      : spans_(spans), br_(br), bits_(gen), n_(n), lo_(lo), hi_(hi), narrow_(narrow), after_shuffles_(gen) {
    // |shift| <= cut = (r - z) / 2 < br.hi / 2 < reach. A sample of sorted
    // position t has its index within 2 * reach of t, so spans farther than
    // `margin` from [lo, hi) only matter by their size.
    reach_ = std::max<int64_t>(br.hi, 0) / 2 + 1;
    const int64_t margin = 2 * reach_ + 2;
    first_span_ = spans.size();
    int64_t off = 0;
    for (size_t s = 0; s < spans.size(); ++s) {
      const int64_t z = spans[s].size();
      if (off + z > lo - margin && off < hi + margin) {
        first_span_ = std::min(first_span_, s);
        last_span_ = s + 1;
      }
      off += z;
    }
    starts_.reserve(last_span_ > first_span_ ? last_span_ - first_span_ : 0);
    for (size_t s = 0; s < spans.size(); ++s) {
      const int64_t z = spans[s].size();
      if (s >= first_span_ && s < last_span_) starts_.push_back(bits_.Snapshot());
      SkipSpanShuffle(z, bits_);
    }
    after_shuffles_ = bits_.Snapshot();
    chunk_ = std::max<int64_t>({reach_, min_chunk, 1});
  }
  // After the constructor: Mosaic's error for lo >= hi of the block comes
  // after the shuffles' draws.
  Status Check() const { return br_.hi <= br_.lo ? IntegersError(br_.lo, br_.hi) : Status::Ok(); }

  bool EndState(numpy::Pcg64* end, bool* narrow) const override {
    *end = after_shuffles_;
    numpy::Pcg64Stream bits(*end);
    Py1eSkipKeys(spans_, br_, bits, narrow);
    return true;
  }

  bool Next() override {
    if (done_all_) return false;
    if (!started_) {
      started_ = true;
      block_range_ = uint64_t(br_.hi) - uint64_t(br_.lo) - 1;
      if (first_span_ == 0 && last_span_ == spans_.size() && chunk_ >= n_ && lo_ < n_ && hi_ > lo_ &&
          (std::min(hi_, n_) - lo_) * kSelectBelow < n_ && uint64_t(n_) <= UINT32_MAX) {
        SelectHead();
        done_all_ = true;
        return true;
      }
      Reserve();
    }
    emitted_ = false;
    while (!emitted_ && span_ < spans_.size()) Step();
    if (!emitted_) done_all_ = true;
    return emitted_;
  }

 private:
  // The part is one window (its block is wider than it: one canonical
  // node's default) and few of its ranks are asked for (a plan's head):
  // select them by position, and shuffle only the spans they lie in.
  void SelectHead() {
    const int64_t n = n_, lo = lo_, hi = hi_;
    const int64_t b = std::min(hi, n);
    // (pos, index) orders as the stable sort. A short head keeps only its
    // b smallest in a heap as they are drawn (a cold start asks for one:
    // the part's every key held at once was 16 bytes a sample to allocate,
    // fault in and select over before the first sample could be fetched).
    const bool heap = b <= kHeapHeadAtMost;
    std::vector<std::pair<double, uint32_t>> keyed(static_cast<size_t>(heap ? 0 : n));
    if (heap) keyed.reserve(size_t(b));
    std::vector<uint64_t> words;
    std::vector<int64_t> span_off(spans_.size() + 1, 0);
    int64_t off = 0;
    for (size_t s = 0; s < spans_.size(); ++s) {
      const int64_t z = spans_[s].size();
      span_off[s] = off;
      const int64_t r = int64_t(uint64_t(br_.lo) + numpy::BoundedFrom(bits_, block_range_));
      if (narrow_ != nullptr && Py1eNarrowBlock(r, z)) *narrow_ = true;
      const ShiftRange sh = SpanShift(r, z, off, n);
      const double range = sh.high - sh.low;
      if (heap) {
        // A key is its index plus a shift of at least sh.low (range >= 0),
        // rounded up or down alike: once index + low reaches the full
        // heap's largest key, none of the span's later samples can enter
        // it (an equal key loses on its larger index), and their draws are
        // jumped over. One canonical node of A: ~2,000 of 500,000 drawn.
        int64_t k = 0;
        while (k < z && !(int64_t(keyed.size()) == b &&
                          static_cast<double>(off + k) + sh.low >= keyed.front().first)) {
          const int64_t m = std::min<int64_t>(z - k, kHeadDrawChunk);
          words.resize(size_t(m));
          bits_.Fill64(words.data(), size_t(m));
          for (int64_t j = 0; j < m; ++j, ++k) {
            const std::pair<double, uint32_t> e{Py1eKey(off + k, sh.low, range, words[size_t(j)]),
                                                uint32_t(off + k)};
            if (int64_t(keyed.size()) < b) {
              keyed.push_back(e);
              std::push_heap(keyed.begin(), keyed.end());
            } else if (e < keyed.front()) {
              std::pop_heap(keyed.begin(), keyed.end());
              keyed.back() = e;
              std::push_heap(keyed.begin(), keyed.end());
            }
          }
        }
        if (k < z) bits_.Skip64(uint64_t(z - k));
      } else {
        words.resize(size_t(z));
        bits_.Fill64(words.data(), size_t(z));
        for (int64_t k = 0; k < z; ++k) {
          keyed[size_t(off + k)] = {Py1eKey(off + k, sh.low, range, words[size_t(k)]), uint32_t(off + k)};
        }
      }
      off += z;
    }
    span_off[spans_.size()] = off;
    if (heap) {
      std::sort_heap(keyed.begin(), keyed.end());  // the b smallest, ascending
    } else {
      if (lo > 0) std::nth_element(keyed.begin(), keyed.begin() + lo, keyed.end());
      std::partial_sort(keyed.begin() + lo, keyed.begin() + b, keyed.end());
    }
    // Each selected index's id: its span shuffled again from where its
    // draws started, once per span.
    std::vector<std::pair<uint32_t, size_t>> wanted;  // (index, rank - lo)
    for (int64_t t = lo; t < b; ++t) wanted.push_back({keyed[size_t(t)].second, size_t(t - lo)});
    std::sort(wanted.begin(), wanted.end());
    out_.assign(size_t(b - lo), 0);
    size_t span = 0;
    for (size_t w = 0; w < wanted.size();) {
      while (span_off[span + 1] <= int64_t(wanted[w].first)) ++span;
      ShuffledSpan(span, starts_[span]);
      for (; w < wanted.size() && int64_t(wanted[w].first) < span_off[span + 1]; ++w) {
        out_[wanted[w].second] = ids_buf_[size_t(int64_t(wanted[w].first) - span_off[span])];
      }
    }
    first_ = lo;
    ids_ = std::span<const int64_t>(out_.data(), out_.size());
  }

  // ids_buf_ = span s's ids, shuffled again from where its draws started.
  void ShuffledSpan(size_t s, numpy::Pcg64 at) {
    const int64_t z = spans_[s].size();
    ids_buf_.resize(size_t(z));
    for (int64_t k = 0; k < z; ++k) ids_buf_[size_t(k)] = spans_[s].begin + k;
    numpy::Pcg64Stream again(at);
    if (uint64_t(z) <= (uint64_t{1} << 32)) {
      again.ShuffleU32(std::span<int64_t>(ids_buf_));
    } else {
      numpy::ShuffleFrom(again, std::span<int64_t>(ids_buf_));
    }
  }

  // The window never holds more than the materialized spans, nor much more
  // than a flush's reach and chunk past the largest span: reserved once,
  // instead of grown by copies into fresh pages.
  void Reserve() {
    int64_t materialized = 0, widest = 0;
    for (size_t s = first_span_; s < last_span_; ++s) {
      materialized += spans_[s].size();
      widest = std::max(widest, spans_[s].size());
    }
    const int64_t bound = std::min(materialized, 2 * reach_ + chunk_ + widest);
    pending_.reserve(size_t(std::max<int64_t>(bound, 0)));
    done_.reserve(size_t(std::max<int64_t>(bound, 0)));
  }

  // Window: `pending_` holds materialized samples (index order) not yet
  // final; a sample is final once its position is below every position a
  // later index can reach (next index - reach).
  void Flush(double threshold) {
    done_.clear();
    size_t keep = 0;
    for (const Entry& e : pending_) {
      if (e.pos < threshold) {
        done_.push_back(e);
      } else {
        pending_[keep++] = e;
      }
    }
    pending_.resize(keep);
    const int64_t count = int64_t(done_.size());
    if (count > 0 && ranked_ < hi_ && ranked_ + count > lo_) {
      // The ranks of these that are asked for: [a, b) of them.
      const int64_t a = std::max(lo_, ranked_) - ranked_, b = std::min(hi_, ranked_ + count) - ranked_;
      if ((b - a) * kSelectBelow < count && uint64_t(count) <= UINT32_MAX) {
        // A few ranks of many (a plan's head, a resumed reader's first
        // samples in a window the size of the part): selected, not sorted.
        // `done_` is in index order, so (pos, index) orders as the stable sort.
        keyed_.resize(done_.size());
        for (size_t i = 0; i < done_.size(); ++i) keyed_[i] = {done_[i].pos, uint32_t(i)};
        if (a > 0) std::nth_element(keyed_.begin(), keyed_.begin() + a, keyed_.end());
        std::partial_sort(keyed_.begin() + a, keyed_.begin() + b, keyed_.end());
        out_.resize(size_t(b - a));
        for (int64_t j = a; j < b; ++j) out_[size_t(j - a)] = done_[keyed_[size_t(j)].second].id;
        first_ = ranked_ + a;
      } else {
        sorter_.Sort(done_);
        out_.resize(done_.size());
        for (size_t i = 0; i < done_.size(); ++i) out_[i] = done_[i].id;
        first_ = ranked_;
      }
      ids_ = std::span<const int64_t>(out_.data(), out_.size());
      emitted_ = true;
    }
    ranked_ += count;
  }

  // One span's draws; a flush when its chunk is full or the window ends.
  void Step() {
    const size_t s = span_++;
    const int64_t z = spans_[s].size();
    const int64_t r = int64_t(uint64_t(br_.lo) + numpy::BoundedFrom(bits_, block_range_));
    if (narrow_ != nullptr && Py1eNarrowBlock(r, z)) *narrow_ = true;
    if (s < first_span_ || s >= last_span_) {
      bits_.Skip64(uint64_t(z));
      if (s < first_span_) ranked_ += z;  // all below the first materialized sample that matters
      off_ += z;
      return;
    }
    ShuffledSpan(s, starts_[s - first_span_]);
    const ShiftRange sh = SpanShift(r, z, off_, n_);
    const double range = sh.high - sh.low;
    words_.resize(size_t(z));
    bits_.Fill64(words_.data(), size_t(z));
    for (int64_t k = 0; k < z; ++k) {
      pending_.push_back({Py1eKey(off_ + k, sh.low, range, words_[size_t(k)]), ids_buf_[size_t(k)]});
    }
    off_ += z;
    fresh_ += z;
    if (s + 1 == last_span_) {
      // Past the window every later sample lies beyond hi.
      Flush(last_span_ == spans_.size() ? std::numeric_limits<double>::infinity()
                                        : static_cast<double>(off_ - reach_));
      pending_.clear();
    } else if (fresh_ >= chunk_) {
      Flush(static_cast<double>(off_ - reach_));
      fresh_ = 0;
    }
  }

  const std::span<const Span> spans_;
  const BlockRange br_;
  numpy::Pcg64Stream bits_;
  const int64_t n_, lo_, hi_;
  bool* const narrow_;
  numpy::Pcg64 after_shuffles_;  // the generator at the part's first integers
  int64_t reach_ = 0, chunk_ = 1;
  uint64_t block_range_ = 0;
  size_t first_span_ = 0, last_span_ = 0, span_ = 0;
  std::vector<numpy::Pcg64> starts_;
  std::vector<Entry> pending_, done_;
  std::vector<std::pair<double, uint32_t>> keyed_;  // (pos, index in done_): a selection's keys
  std::vector<uint64_t> words_;
  std::vector<int64_t> ids_buf_, out_;
  StablePosSort sorter_;  // stable_pos_sort.h: the whole part's sort too
  int64_t ranked_ = 0;  // sorted positions handed out or counted so far
  int64_t fresh_ = 0, off_ = 0;
  bool started_ = false, emitted_ = false, done_all_ = false;
};

}  // namespace

Result<std::unique_ptr<PartReader>> OpenPy1eReader(std::span<const Span> spans, BlockRange br, numpy::Pcg64& gen,
                                                   int64_t num_canonical_nodes, int64_t lo, int64_t hi, bool* narrow,
                                                   int64_t min_chunk) {
  int64_t n = 0;
  for (const Span& s : spans) n += s.size();
  if (n == 0) return Py1eEmptyPart(num_canonical_nodes);
  auto reader = std::make_unique<Py1eReader>(spans, br, gen, n, lo, hi, narrow, min_chunk);
  SLUICE_RETURN_IF_ERROR(reader->Check());
  return std::unique_ptr<PartReader>(std::move(reader));
}

Status Py1eStreamPart(std::span<const Span> spans, BlockRange br, numpy::Generator& ep, int64_t num_canonical_nodes,
                      int64_t lo, int64_t hi, const Py1eSink& sink, bool* narrow, int64_t min_chunk) {
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<PartReader> reader,
                          OpenPy1eReader(spans, br, ep.bit_generator(), num_canonical_nodes, lo, hi, narrow, min_chunk));
  while (reader->Next()) sink(reader->first(), reader->ids().data(), int64_t(reader->ids().size()));
  return Status::Ok();
}

}  // namespace sluice::planner
