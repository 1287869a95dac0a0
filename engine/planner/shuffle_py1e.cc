// py1e: per canonical node, each span's ids shuffled, then every sample moved
// by a random shift bounded by its span's random block, and sorted by position.
#include "engine/planner/shuffle_py1e.h"

#include <algorithm>
#include <string>

#include "engine/planner/mosaic_error.h"
#include "engine/planner/rng.h"

namespace sluice::planner {
namespace {

Status EmptyPart() {
  return MosaicValueError("py1e: a canonical node has no samples to shuffle");
}

int64_t PartSize(std::span<const Span> spans) {
  int64_t n = 0;
  for (const Span& s : spans) n += s.size();
  return n;
}

// The [low, high) shift range of a span of size z at offset off in a part of n.
struct ShiftRange {
  double low, high;
};
ShiftRange SpanShift(int64_t r, int64_t z, int64_t off, int64_t n) {
  double cut = static_cast<double>(r - z) / 2.0;
  if (cut < 0) cut = 0;
  // Python max/min keep the first argument on ties (matters only for -0.0).
  const double neg_off = static_cast<double>(-off);
  const double low = (-cut < neg_off) ? neg_off : -cut;
  const double room = static_cast<double>(n - off - z);
  const double high = (room < cut) ? room : cut;
  return {low, high};
}

}  // namespace

Status Py1ePart(std::span<const Span> spans, BlockRange br, numpy::Generator& ep, int64_t* out,
                Py1eScratch& scratch) {
  const int64_t n = PartSize(spans);
  if (n == 0) return EmptyPart();
  int64_t at = 0;
  for (const Span& s : spans) {
    int64_t* begin = out + at;
    for (int64_t id = s.begin; id < s.end; ++id) out[at++] = id;
    ep.Shuffle(std::span<int64_t>(begin, size_t(s.size())));
  }
  std::vector<double>& pos = scratch.pos;
  pos.resize(size_t(n));
  numpy::Pcg64& bits = ep.bit_generator();
  int64_t off = 0;
  for (const Span& s : spans) {
    const int64_t z = s.size();
    auto r = ep.Integers(br.lo, br.hi);
    if (!r.ok()) return IntegersError(br.lo, br.hi);
    const ShiftRange sh = SpanShift(*r, z, off, n);
    const double range = sh.high - sh.low;
    for (int64_t k = 0; k < z; ++k) {
      const double scaled = range * bits.NextDouble();
      const double shift = sh.low + scaled;
      pos[size_t(off + k)] = static_cast<double>(off + k) + shift;
    }
    off += z;
  }
  // Stable argsort by position. Positions lie in [0, n-1] (shifts never leave
  // the part), so a counting sort on floor(pos) plus an insertion sort inside
  // each bucket (about one element each) is linear.
  std::vector<int64_t>& start = scratch.bucket_start;
  start.assign(size_t(n) + 1, 0);
  auto bucket = [n](double p) -> size_t {
    int64_t b = static_cast<int64_t>(p);
    return size_t(b < 0 ? 0 : (b >= n ? n - 1 : b));
  };
  for (int64_t k = 0; k < n; ++k) ++start[bucket(pos[size_t(k)]) + 1];
  for (int64_t b = 0; b < n; ++b) start[size_t(b) + 1] += start[size_t(b)];
  auto& sorted = scratch.sorted;
  sorted.resize(size_t(n));
  for (int64_t k = 0; k < n; ++k) {
    const double p = pos[size_t(k)];
    sorted[size_t(start[bucket(p)]++)] = {p, out[k]};
  }
  // start[b] is now the end of bucket b; the bucket begins at start[b-1].
  size_t begin = 0;
  for (int64_t b = 0; b < n; ++b) {
    const size_t end = size_t(start[size_t(b)]);
    for (size_t i = begin + 1; i < end; ++i) {
      const auto x = sorted[i];
      size_t j = i;
      while (j > begin && sorted[j - 1].first > x.first) {
        sorted[j] = sorted[j - 1];
        --j;
      }
      sorted[j] = x;
    }
    begin = end;
  }
  for (int64_t k = 0; k < n; ++k) out[k] = sorted[size_t(k)].second;
  return Status::Ok();
}

Status Py1eSkipPart(std::span<const Span> spans, BlockRange br, numpy::Generator& ep) {
  const int64_t n = PartSize(spans);
  if (n == 0) return EmptyPart();
  for (const Span& s : spans)
    for (int64_t i = s.size() - 1; i > 0; --i) ep.Interval(uint64_t(i));
  numpy::Pcg64& bits = ep.bit_generator();
  for (const Span& s : spans) {
    auto r = ep.Integers(br.lo, br.hi);
    if (!r.ok()) return IntegersError(br.lo, br.hi);
    for (int64_t k = 0; k < s.size(); ++k) bits.NextDouble();
  }
  return Status::Ok();
}

Result<std::vector<int64_t>> ShufflePy1e(std::span<const int64_t> units, int64_t C, uint64_t seed,
                                         uint64_t epoch, int64_t block) {
  numpy::Generator ep = MakeRng(seed, epoch);
  const DividedSpans parts = ShuffledParts(units, C, seed, ep);
  const BlockRange br = BlockBounds(block);
  int64_t total = 0;
  for (int64_t u : units) total += u;
  std::vector<int64_t> out(static_cast<size_t>(total));
  Py1eScratch scratch;
  int64_t at = 0;
  for (int64_t i = 0; i < C; ++i) {
    std::span<const Span> list(parts.spans.data() + parts.part_begin[size_t(i)],
                               parts.part_begin[size_t(i) + 1] - parts.part_begin[size_t(i)]);
    SLUICE_RETURN_IF_ERROR(Py1ePart(list, br, ep, out.data() + at, scratch));
    for (const Span& s : list) at += s.size();
  }
  return out;
}

}  // namespace sluice::planner
