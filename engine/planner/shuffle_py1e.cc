// py1e: per canonical node, each span's ids shuffled, then every sample moved
// by a random shift bounded by its span's random block, and sorted by position.
#include "engine/planner/shuffle_py1e.h"

#include <algorithm>
#include <string>
#include <thread>

#include "base/exception_status.h"
#include "engine/planner/mosaic_error.h"
#include "engine/planner/rng.h"

namespace sluice::planner {
// Mosaic's text (users match it).
Status Py1eEmptyPart(int64_t num_canonical_nodes) {
  return MosaicValueError(
      "The number of samples assigned to a canonical node is 0. This very likely indicates that "
      "the number of samples in this stream is less than the number of canonical nodes, which is " +
      std::to_string(num_canonical_nodes) +
      ". Please check your index.json file and ensure that your dataset has been written out "
      "correctly. If this was intended, reduce num_canonical_nodes.");
}

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

namespace {

Status EmptyPart(int64_t num_canonical_nodes) { return Py1eEmptyPart(num_canonical_nodes); }

int64_t PartSize(std::span<const Span> spans) {
  int64_t n = 0;
  for (const Span& s : spans) n += s.size();
  return n;
}

// Below this many ids a second thread costs more than it saves.
constexpr int64_t kPy1eThreadedMin = int64_t{1} << 20;


// floor(p) within [0, n-1]: positions never leave the part, the clamp only
// guards the bucket index.
inline int64_t ClampedFloor(double p, int64_t n) {
  const int64_t f = static_cast<int64_t>(p);
  return f < 0 ? 0 : (f >= n ? n - 1 : f);
}

}  // namespace

Status Py1eDraw(std::span<const Span> spans, BlockRange br, numpy::Generator& ep, int64_t* out,
                Py1eScratch& scratch, int64_t num_canonical_nodes, bool* narrow) {
  const int64_t n = PartSize(spans);
  if (n == 0) return EmptyPart(num_canonical_nodes);
  numpy::Pcg64Stream bits(ep.bit_generator());
  int64_t at = 0;
  int64_t widest = 0;
  for (const Span& s : spans) {
    int64_t* begin = out + at;
    for (int64_t id = s.begin; id < s.end; ++id) out[at++] = id;
    if (uint64_t(s.size()) <= (uint64_t{1} << 32)) {
      bits.ShuffleU32(std::span<int64_t>(begin, size_t(s.size())));
    } else {
      numpy::ShuffleFrom(bits, std::span<int64_t>(begin, size_t(s.size())));
    }
    widest = std::max(widest, s.size());
  }
  if (br.hi <= br.lo) return IntegersError(br.lo, br.hi);
  const uint64_t block_range = uint64_t(br.hi) - uint64_t(br.lo) - 1;
  std::vector<double>& pos = scratch.pos;
  pos.resize(size_t(n));
  std::vector<uint64_t>& words = scratch.words;
  words.resize(size_t(widest));
  // Coarse buckets for Py1eSort, counted here while the positions are hot.
  const int shift = StablePosSort::ShiftFor(uint64_t(n));
  scratch.coarse_shift = shift;
  const int64_t coarse = ((n - 1) >> shift) + 1;
  std::vector<int64_t>& count = scratch.bucket_start;
  count.assign(size_t(coarse) + 1, 0);
  int64_t off = 0;
  for (const Span& s : spans) {
    const int64_t z = s.size();
    const int64_t r = int64_t(uint64_t(br.lo) + numpy::BoundedFrom(bits, block_range));
    if (narrow != nullptr && Py1eNarrowBlock(r, z)) *narrow = true;
    const ShiftRange sh = SpanShift(r, z, off, n);
    const double range = sh.high - sh.low;
    bits.Fill64(words.data(), size_t(z));
    double* p = pos.data() + off;
    const uint64_t* u = words.data();
    for (int64_t k = 0; k < z; ++k) {
      p[k] = Py1eKey(off + k, sh.low, range, u[k]);
    }
    for (int64_t k = 0; k < z; ++k) ++count[size_t(ClampedFloor(p[k], n) >> shift) + 1];
    off += z;
  }
  return Status::Ok();
}

void Py1eSort(int64_t n, int64_t* out, Py1eScratch& scratch, int64_t lo, int64_t hi) {
  const std::vector<double>& pos = scratch.pos;
  // Stable argsort by position (stable_pos_sort.h). Positions lie in
  // [0, n-1], so the key is floor(2 * pos): level 1, its coarse buckets
  // (floor(pos) >> shift, at most kCoarseBuckets) were counted by Py1eDraw,
  // and here one scatter from pos and out fills them; level 2 is the
  // sorter's, per bucket (in L1).
  const int shift = scratch.coarse_shift;
  std::vector<int64_t>& start = scratch.bucket_start;
  const int64_t coarse = int64_t(start.size()) - 1;
  for (int64_t b = 0; b < coarse; ++b) start[size_t(b) + 1] += start[size_t(b)];
  // Only the buckets whose sorted positions meet [lo, hi) are finished:
  // [first, last). Buckets are contiguous runs of the sorted order.
  hi = std::min(hi, n);
  const int64_t first = std::upper_bound(start.begin(), start.end(), lo) - start.begin() - 1;
  const int64_t last = std::lower_bound(start.begin(), start.end(), hi) - start.begin();
  if (lo >= hi || first >= last) return;
  const int64_t base = start[size_t(first)];  // sorted[0] is sorted position base
  auto& sorted = scratch.sorted;
  const int64_t kept = start[size_t(last)] - base;
  {
    std::vector<int64_t>& cursor = scratch.cursor;
    cursor.assign(start.begin(), start.end() - 1);
    // Cursors count in `sorted` (from base).
    for (int64_t& c : cursor) c -= base;
    int64_t* cur = cursor.data();
    if (first == 0 && last == coarse) {
      sorted.resize(size_t(kept));
      PosId* dst = sorted.data();
      for (int64_t k = 0; k < n; ++k) {
        const double p = pos[size_t(k)];
        dst[cur[ClampedFloor(p, n) >> shift]++] = {p, out[k]};
      }
    } else {
      // Without a branch: the buckets outside [first, last) all write to
      // one spare slot past the kept ones and never advance. Shifts span
      // the whole part under the default block, so whether a position is
      // kept is a coin toss, which a branch mispredicts half the time.
      sorted.resize(size_t(kept) + 1);
      PosId* dst = sorted.data();
      for (int64_t b = 0; b < coarse; ++b) {
        if (b < first || b >= last) cur[b] = kept;
      }
      for (int64_t k = 0; k < n; ++k) {
        const double p = pos[size_t(k)];
        const int64_t b = ClampedFloor(p, n) >> shift;
        dst[cur[b]] = {p, out[k]};
        cur[b] += int64_t(uint64_t(b - first) < uint64_t(last - first));
      }
    }
  }
  auto& tmp = scratch.tmp;
  // Fine keys are floor(2 * pos) (scaling by two is exact, so the order
  // agrees with pos): half as many equal keys to order by position.
  constexpr int kFineBits = 1;
  const int64_t width = int64_t{1} << (shift + kFineBits);
  for (int64_t b = first; b < last; ++b) {
    const size_t a = size_t(start[size_t(b)]), e = size_t(start[size_t(b) + 1]);
    if (a == e) continue;
    const int64_t floor_base = (b << shift) << kFineBits;
    auto fine_of = [floor_base, width](double p) -> size_t {
      const int64_t f = static_cast<int64_t>(p * double(1 << kFineBits)) - floor_base;
      return size_t(f < 0 ? 0 : (f >= width ? width - 1 : f));
    };
    tmp.resize(e - a);
    scratch.sorter.SortRun(sorted.data() + (a - size_t(base)), e - a, tmp.data(), size_t(width),
                           fine_of);
    for (size_t i = 0; i < tmp.size(); ++i) out[a + i] = tmp[i].id;
  }
}

Status Py1ePart(std::span<const Span> spans, BlockRange br, numpy::Generator& ep, int64_t* out,
                Py1eScratch& scratch, int64_t num_canonical_nodes) {
  SLUICE_RETURN_IF_ERROR(Py1eDraw(spans, br, ep, out, scratch, num_canonical_nodes));
  Py1eSort(PartSize(spans), out, scratch);
  return Status::Ok();
}

Status Py1eSkipPart(std::span<const Span> spans, BlockRange br, numpy::Generator& ep,
                    int64_t num_canonical_nodes, bool* narrow, numpy::Pcg64Ahead* ahead) {
  const int64_t n = PartSize(spans);
  if (n == 0) return EmptyPart(num_canonical_nodes);
  numpy::Pcg64Stream bits(ep.bit_generator());
  if (ahead != nullptr && n >= kAheadPartMin) bits.Attach(ahead);
  // The shuffles' draws are rejection-sampled (their count depends on the
  // words), so they are replayed; the uniforms are exactly z words per span,
  // jumped over (their jumps would drop the words made ahead: detached).
  for (const Span& s : spans) SkipSpanShuffle(s.size(), bits);
  bits.Commit();
  if (br.hi <= br.lo) return IntegersError(br.lo, br.hi);
  Py1eSkipKeys(spans, br, bits, narrow);
  return Status::Ok();
}

void Py1eSkipKeys(std::span<const Span> spans, BlockRange br, numpy::Pcg64Stream& bits, bool* narrow) {
  const uint64_t block_range = uint64_t(br.hi) - uint64_t(br.lo) - 1;
  for (const Span& s : spans) {
    const int64_t r = int64_t(uint64_t(br.lo) + numpy::BoundedFrom(bits, block_range));
    if (narrow != nullptr && Py1eNarrowBlock(r, s.size())) *narrow = true;
    bits.Skip64(uint64_t(s.size()));
  }
}

Result<std::vector<int64_t>> ShufflePy1e(std::span<const int64_t> units, int64_t C, uint64_t seed,
                                         uint64_t epoch, int64_t block) {
  numpy::Generator ep = MakeRng(seed, epoch);
  const DividedSpans parts = ShuffledParts(units, C, seed, ep);
  const BlockRange br = BlockBounds(block);
  int64_t total = 0;
  for (int64_t u : units) total += u;
  std::vector<int64_t> out(static_cast<size_t>(total));
  // The draws are sequential (one generator); the sort of part i runs on a
  // second thread while part i+1 is drawn. Small epochs stay on one thread.
  const bool pipeline = total >= kPy1eThreadedMin && C > 1;
  Py1eScratch scratch[2];
  std::thread sorter;
  std::exception_ptr sorter_error;  // no exception may leave a thread
  int64_t at = 0;
  Status status;
  for (int64_t i = 0; i < C && status.ok(); ++i) {
    std::span<const Span> list(parts.spans.data() + parts.part_begin[size_t(i)],
                               parts.part_begin[size_t(i) + 1] - parts.part_begin[size_t(i)]);
    const int64_t n = PartSize(list);
    Py1eScratch& mine = scratch[i % 2];
    status = Py1eDraw(list, br, ep, out.data() + at, mine, C);
    if (sorter.joinable()) sorter.join();
    if (sorter_error) status = StatusFromException(sorter_error, "sorting a part");
    if (!status.ok()) break;
    if (pipeline) {
      sorter = std::thread([n, dst = out.data() + at, &mine, &sorter_error] {
        sorter_error = CatchAll([&] { Py1eSort(n, dst, mine); });
      });
    } else {
      Py1eSort(n, out.data() + at, mine);
    }
    at += n;
  }
  if (sorter.joinable()) sorter.join();
  if (sorter_error && status.ok()) status = StatusFromException(sorter_error, "sorting a part");
  if (!status.ok()) return status;
  return out;
}

}  // namespace sluice::planner
