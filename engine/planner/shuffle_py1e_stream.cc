// py1e one part at a time through a sliding window: the part's sorted order
// without holding the part (engine/planner/README.md, "py1e").
#include <algorithm>
#include <limits>

#include "engine/planner/shuffle_py1e.h"
#include "engine/planner/stable_pos_sort.h"

namespace sluice::planner {
namespace {

// A flush asked for fewer than 1/kSelectBelow of its ranks selects them
// (O(flush)) instead of sorting the flush.
constexpr int64_t kSelectBelow = 8;

using Entry = PosId;

}  // namespace

Status Py1eStreamPart(std::span<const Span> spans, BlockRange br, numpy::Generator& ep, int64_t num_canonical_nodes,
                      int64_t lo, int64_t hi, const Py1eSink& sink, bool* narrow, int64_t min_chunk) {
  int64_t n = 0;
  for (const Span& s : spans) n += s.size();
  if (n == 0) return Py1eEmptyPart(num_canonical_nodes);
  // |shift| <= cut = (r - z) / 2 < br.hi / 2 < reach. A sample of sorted
  // position t has its index within 2 * reach of t, so spans farther than
  // `margin` from [lo, hi) only matter by their size.
  const int64_t reach = std::max<int64_t>(br.hi, 0) / 2 + 1;
  const int64_t margin = 2 * reach + 2;
  size_t first = spans.size(), last = 0;
  {
    int64_t off = 0;
    for (size_t s = 0; s < spans.size(); ++s) {
      const int64_t z = spans[s].size();
      if (off + z > lo - margin && off < hi + margin) {
        first = std::min(first, s);
        last = s + 1;
      }
      off += z;
    }
  }
  numpy::Pcg64Stream bits(ep.bit_generator());
  // All span shuffles come before the part's first uniform: replay them,
  // saving where each materialized span's draws start.
  std::vector<numpy::Pcg64> starts;
  starts.reserve(last > first ? last - first : 0);
  for (size_t s = 0; s < spans.size(); ++s) {
    const int64_t z = spans[s].size();
    if (s >= first && s < last) starts.push_back(bits.Snapshot());
    if (uint64_t(z) <= (uint64_t{1} << 32)) {
      bits.SkipShuffleU32(size_t(z));
    } else {
      for (int64_t i = z - 1; i > 0; --i) numpy::IntervalFrom(bits, uint64_t(i));
    }
  }
  if (br.hi <= br.lo) return IntegersError(br.lo, br.hi);
  const uint64_t block_range = uint64_t(br.hi) - uint64_t(br.lo) - 1;
  const int64_t chunk = std::max<int64_t>({reach, min_chunk, 1});
  if (first == 0 && last == spans.size() && chunk >= n && lo < n && hi > lo && (std::min(hi, n) - lo) * kSelectBelow < n &&
      uint64_t(n) <= UINT32_MAX) {
    // The part is one window (its block is wider than it: one canonical
    // node's default) and few of its ranks are asked for (a plan's head):
    // select them by position, and shuffle only the spans they lie in.
    std::vector<std::pair<double, uint32_t>> keyed(static_cast<size_t>(n));  // (pos, index): as the stable sort
    std::vector<uint64_t> words;
    std::vector<int64_t> span_off(spans.size() + 1, 0);
    int64_t off = 0;
    for (size_t s = 0; s < spans.size(); ++s) {
      const int64_t z = spans[s].size();
      span_off[s] = off;
      const int64_t r = int64_t(uint64_t(br.lo) + numpy::BoundedFrom(bits, block_range));
      if (narrow != nullptr && Py1eNarrowBlock(r, z)) *narrow = true;
      const ShiftRange sh = SpanShift(r, z, off, n);
      const double range = sh.high - sh.low;
      words.resize(size_t(z));
      bits.Fill64(words.data(), size_t(z));
      for (int64_t k = 0; k < z; ++k) {
        keyed[size_t(off + k)] = {Py1eKey(off + k, sh.low, range, words[size_t(k)]),
                                  uint32_t(off + k)};
      }
      off += z;
    }
    span_off[spans.size()] = off;
    const int64_t b = std::min(hi, n);
    if (lo > 0) std::nth_element(keyed.begin(), keyed.begin() + lo, keyed.end());
    std::partial_sort(keyed.begin() + lo, keyed.begin() + b, keyed.end());
    // Each selected index's id: its span shuffled again from where its
    // draws started, once per span.
    std::vector<std::pair<uint32_t, size_t>> wanted;  // (index, rank - lo)
    for (int64_t t = lo; t < b; ++t) wanted.push_back({keyed[size_t(t)].second, size_t(t - lo)});
    std::sort(wanted.begin(), wanted.end());
    std::vector<int64_t> ids, out(size_t(b - lo));
    size_t span = 0;
    for (size_t w = 0; w < wanted.size();) {
      while (span_off[span + 1] <= int64_t(wanted[w].first)) ++span;
      const int64_t z = spans[span].size();
      ids.resize(size_t(z));
      for (int64_t k = 0; k < z; ++k) ids[size_t(k)] = spans[span].begin + k;
      numpy::Pcg64 at = starts[span];
      numpy::Pcg64Stream again(at);
      if (uint64_t(z) <= (uint64_t{1} << 32)) {
        again.ShuffleU32(std::span<int64_t>(ids));
      } else {
        numpy::ShuffleFrom(again, std::span<int64_t>(ids));
      }
      for (; w < wanted.size() && int64_t(wanted[w].first) < span_off[span + 1]; ++w) {
        out[wanted[w].second] = ids[size_t(int64_t(wanted[w].first) - span_off[span])];
      }
    }
    sink(lo, out.data(), b - lo);
    return Status::Ok();
  }

  // Window: `pending` holds materialized samples (index order) not yet
  // final; a sample is final once its position is below every position a
  // later index can reach (next index - reach).
  std::vector<Entry> pending, done;
  std::vector<std::pair<double, uint32_t>> keyed;  // (pos, index in done): a selection's keys
  std::vector<uint64_t> words;
  std::vector<int64_t> ids, out;
  StablePosSort sorter;  // stable_pos_sort.h: the whole part's sort too
  int64_t ranked = 0;  // sorted positions handed out or counted so far
  int64_t fresh = 0;
  {
    // The window never holds more than the materialized spans, nor much
    // more than a flush's reach and chunk past the largest span: reserved
    // once, instead of grown by copies into fresh pages.
    int64_t materialized = 0, widest = 0;
    for (size_t s = first; s < last; ++s) {
      materialized += spans[s].size();
      widest = std::max(widest, spans[s].size());
    }
    const int64_t bound = std::min(materialized, 2 * reach + chunk + widest);
    pending.reserve(size_t(std::max<int64_t>(bound, 0)));
    done.reserve(size_t(std::max<int64_t>(bound, 0)));
  }
  auto flush = [&](double threshold) {
    done.clear();
    size_t keep = 0;
    for (const Entry& e : pending) {
      if (e.pos < threshold) {
        done.push_back(e);
      } else {
        pending[keep++] = e;
      }
    }
    pending.resize(keep);
    const int64_t count = int64_t(done.size());
    if (count > 0 && ranked < hi && ranked + count > lo) {
      // The ranks of these that are asked for: [a, b) of them.
      const int64_t a = std::max(lo, ranked) - ranked, b = std::min(hi, ranked + count) - ranked;
      if ((b - a) * kSelectBelow < count && uint64_t(count) <= UINT32_MAX) {
        // A few ranks of many (a plan's head, a resumed reader's first
        // samples in a window the size of the part): selected, not sorted.
        // `done` is in index order, so (pos, index) orders as the stable sort.
        keyed.resize(done.size());
        for (size_t i = 0; i < done.size(); ++i) keyed[i] = {done[i].pos, uint32_t(i)};
        if (a > 0) std::nth_element(keyed.begin(), keyed.begin() + a, keyed.end());
        std::partial_sort(keyed.begin() + a, keyed.begin() + b, keyed.end());
        out.resize(size_t(b - a));
        for (int64_t j = a; j < b; ++j) out[size_t(j - a)] = done[keyed[size_t(j)].second].id;
        sink(ranked + a, out.data(), b - a);
      } else {
        sorter.Sort(done);
        out.resize(done.size());
        for (size_t i = 0; i < done.size(); ++i) out[i] = done[i].id;
        sink(ranked, out.data(), count);
      }
    }
    ranked += count;
  };

  int64_t off = 0;
  for (size_t s = 0; s < spans.size(); ++s) {
    const int64_t z = spans[s].size();
    const int64_t r = int64_t(uint64_t(br.lo) + numpy::BoundedFrom(bits, block_range));
    if (narrow != nullptr && Py1eNarrowBlock(r, z)) *narrow = true;
    if (s < first || s >= last) {
      bits.Skip64(uint64_t(z));
      if (s < first) ranked += z;  // all below the first materialized sample that matters
      off += z;
      continue;
    }
    // The span's ids, shuffled again from where its draws started.
    ids.resize(size_t(z));
    for (int64_t k = 0; k < z; ++k) ids[size_t(k)] = spans[s].begin + k;
    {
      numpy::Pcg64 at = starts[s - first];
      numpy::Pcg64Stream again(at);
      if (uint64_t(z) <= (uint64_t{1} << 32)) {
        again.ShuffleU32(std::span<int64_t>(ids));
      } else {
        numpy::ShuffleFrom(again, std::span<int64_t>(ids));
      }
    }
    const ShiftRange sh = SpanShift(r, z, off, n);
    const double range = sh.high - sh.low;
    words.resize(size_t(z));
    bits.Fill64(words.data(), size_t(z));
    for (int64_t k = 0; k < z; ++k) {
      pending.push_back({Py1eKey(off + k, sh.low, range, words[size_t(k)]), ids[size_t(k)]});
    }
    off += z;
    fresh += z;
    if (s + 1 == last) {
      // Past the window every later sample lies beyond hi.
      flush(last == spans.size() ? std::numeric_limits<double>::infinity() : static_cast<double>(off - reach));
      pending.clear();
    } else if (fresh >= chunk) {
      flush(static_cast<double>(off - reach));
      fresh = 0;
    }
  }
  return Status::Ok();
}

}  // namespace sluice::planner
