// The planner's one stable sort by position (py1e's: Mosaic's stable
// argsort of the shifted positions), for a whole part (Py1eSort) and for the
// streamed window (Py1eStreamPart). Two levels of stable counting sort over
// an integer key monotone in the position, then the few entries that share a
// key ordered by position: linear, exactly stable (equal positions keep their
// order, the order of their indices).
//
// Level 1 scatters the entries by the key's high part, key >> shift, into at
// most kCoarseBuckets runs (few write cursors: the scatter streams; one
// scatter over the whole key range waits on a cache miss per entry: a
// window of 500k samples took 120 ms, most of it in that wait). Level 2
// sorts each run on its own, in cache, by the rest of the key. A caller
// with its own level 1 (the whole part counts its runs while it draws the
// positions, and may finish only some runs) calls SortRun for level 2.
//
// Not thread-safe: one sorter per thread (it keeps its buffers between
// calls).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace sluice::planner {

// A sample's sort key (its shifted position) and id.
struct PosId {
  double pos;
  int64_t id;
};

class StablePosSort {
 public:
  // Level 1's most runs.
  static constexpr size_t kCoarseBuckets = 1024;

  // The smallest shift that leaves keys [0, keys) at most kCoarseBuckets
  // runs.
  static int ShiftFor(uint64_t keys) {
    int shift = 0;
    while (keys > 0 && ((keys - 1) >> shift) >= kCoarseBuckets) ++shift;
    return shift;
  }

  // Sorts `v` by pos, stably (both levels).
  void Sort(std::vector<PosId>& v);

  // Level 2: the `n` entries at `from`, whose fine keys fine_key(pos) lie
  // in [0, width) and are monotone in pos, written to `to` in stable order
  // of pos.
  template <typename FineKey>
  void SortRun(const PosId* from, size_t n, PosId* to, size_t width, FineKey fine_key) {
    // 32-bit counts where the run allows (all but a run of 2^32 entries):
    // half the bytes to clear and scan per key.
    if (n <= UINT32_MAX) {
      SortRunCounted(from, n, to, width, fine_key, count32_);
    } else {
      SortRunCounted(from, n, to, width, fine_key, count_);
    }
  }

 private:
  template <typename FineKey, typename Count>
  static void SortRunCounted(const PosId* from, size_t n, PosId* to, size_t width,
                             FineKey fine_key, std::vector<Count>& count) {
    count.assign(width + 1, 0);
    for (size_t i = 0; i < n; ++i) ++count[fine_key(from[i].pos) + 1];
    for (size_t k = 0; k < width; ++k) count[k + 1] += count[k];
    for (size_t i = 0; i < n; ++i) to[count[fine_key(from[i].pos)]++] = from[i];
    // One insertion pass over the run: an entry only moves past the few
    // before it that share its key (a pass per key would cost `width`,
    // several times n for a whole part's runs). An entry that moves past
    // more than kInsertionMax is in a crowd: each key's entries are sorted
    // on their own then (the pass kept them together and stable). Checked
    // as entries move, not as they are counted: a compare an entry there
    // cost WholeArray 2.7% of its instructions.
    if (InsertionSort(to, n)) return;
    // count[k] is now the end of fine key k's entries.
    size_t begin = 0;
    for (size_t k = 0; k < width; ++k) {
      const size_t end = count[k];
      if (end - begin > 1) SortEqualKeys(to + begin, end - begin);
      begin = end;
    }
  }

  // Entries that share a fine key, by pos: by insertion (about one
  // neighbour each), std::stable_sort for a crowd.
  static constexpr size_t kInsertionMax = 32;

  static void SortEqualKeys(PosId* v, size_t n) {
    if (n > kInsertionMax) {
      std::stable_sort(v, v + n, [](const PosId& a, const PosId& b) { return a.pos < b.pos; });
      return;
    }
    InsertionSort(v, n);  // n <= kInsertionMax: it never stops early
  }

  // Sorts v by pos by insertion until an entry moves past more than
  // kInsertionMax others (that entry is still put in place): false then.
  static bool InsertionSort(PosId* v, size_t n) {
    for (size_t i = 1; i < n; ++i) {
      if (!(v[i].pos < v[i - 1].pos)) continue;
      const PosId x = v[i];
      size_t j = i;
      while (j > 0 && v[j - 1].pos > x.pos) {
        v[j] = v[j - 1];
        --j;
      }
      v[j] = x;
      if (i - j > kInsertionMax) return false;
    }
    return true;
  }

  std::vector<size_t> count_, run_end_;
  std::vector<uint32_t> count32_;
  std::vector<PosId> tmp_;
};

}  // namespace sluice::planner
