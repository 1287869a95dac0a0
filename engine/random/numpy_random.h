// numpy 1.24's random Generator, bit-exact for the calls Mosaic's planning
// makes: np.random.default_rng(seed) = Generator(PCG64(SeedSequence(seed))).
// Specification: tests/data/mosaic/README.md section 2.
//
// A generator is a plain value: copyable, not thread-safe (one per thread).
// Nothing here throws except std::bad_alloc from the vectors returned.
//
// The hot primitives (NextU64, NextU32, Interval, Bounded, Shuffle) are
// defined inline below: the planner shuffles arrays of 10^8 ids, where a call
// per element must not cost a function call or an allocation.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <utility>
#include <vector>

#include "base/status.h"

namespace sluice::numpy {

// A non-negative seed of any size as 32-bit words, least significant first
// (SeedSequence's entropy). 0 -> {0}; 2^32+5 -> {5, 1}.
std::vector<uint32_t> SeedWords(uint64_t seed);

class Pcg64Ahead;  // pcg64_ahead.h

// SeedSequence(entropy): the 4-word pool and generate_state.
class SeedSequence {
 public:
  // `entropy_words`: the seed, least significant word first (see SeedWords);
  // empty is treated as {0}. Only read during construction.
  explicit SeedSequence(std::span<const uint32_t> entropy_words);
  const uint32_t* pool() const { return pool_; }  // 4 words, lives with *this
  // generate_state(n, uint32) and generate_state(n, uint64).
  std::vector<uint32_t> GenerateState32(size_t n) const;
  std::vector<uint64_t> GenerateState64(size_t n) const;

 private:
  uint32_t pool_[4];
};

// numpy's buffered 32-bit draw: the half `*half` kept from the last word
// when `*has_half`, else the low half of a fresh word from `next_u64()`,
// its high half kept for the next call.
template <class NextU64>
inline uint32_t BufferedU32(bool* has_half, uint32_t* half, NextU64&& next_u64) {
  if (*has_half) {
    *has_half = false;
    return *half;
  }
  const uint64_t x = next_u64();
  *has_half = true;
  *half = static_cast<uint32_t>(x >> 32);
  return static_cast<uint32_t>(x);
}

// PCG64 (XSL-RR 128/64) with numpy's buffered 32-bit halves.
class Pcg64 {
 public:
  explicit Pcg64(const SeedSequence& seq);

  // Advance, then output rotr64(hi ^ lo, state >> 122). Leaves the 32-bit
  // buffer alone.
  uint64_t NextU64() {
    Step();
    return Output(state_);
  }
  // Buffered: low half of a fresh NextU64 first, its high half on the next
  // call. The buffer persists across Generator methods, as in numpy.
  uint32_t NextU32() { return BufferedU32(&has_u32_, &u32_, [this] { return NextU64(); }); }
  // (NextU64() >> 11) * 2^-53, in [0, 1).
  double NextDouble() {
    return static_cast<double>(NextU64() >> 11) * (1.0 / 9007199254740992.0);
  }
  unsigned __int128 state() const { return state_; }
  unsigned __int128 inc() const { return inc_; }
  // Whether a saved high half is waiting to be returned by NextU32.
  bool has_buffered_u32() const { return has_u32_; }
  uint32_t buffered_u32() const { return u32_; }
  // A generator standing exactly where one with these accessors' values
  // stood (a saved state read back: planner's epoch checkpoints file).
  static Pcg64 FromState(unsigned __int128 state, unsigned __int128 inc, bool has_buffered_u32,
                         uint32_t buffered_u32) {
    Pcg64 g;
    g.state_ = state;
    g.inc_ = inc;
    g.has_u32_ = has_buffered_u32;
    g.u32_ = buffered_u32;
    return g;
  }

  // Jumps ahead as `delta` NextU64() calls would, in O(log delta) (PCG's
  // advance: the affine step composed by squaring). Leaves the 32-bit buffer
  // alone.
  void Advance(unsigned __int128 delta);
  // The affine map of `delta` steps: Advance(delta) sets state = m*state + p.
  struct Jump {
    unsigned __int128 m = 1, p = 0;
  };
  Jump JumpOf(unsigned __int128 delta) const;
  void Apply(const Jump& j) { state_ = j.m * state_ + j.p; }
  // out[0..n) = the next n NextU64() values, with the same state afterwards.
  // Computed on interleaved lanes that each step several states at once, so
  // the 128-bit multiplies overlap instead of waiting on one another.
  // Leaves the 32-bit buffer alone.
  void Fill(uint64_t* out, size_t n);

 private:
  friend class Pcg64Stream;
  Pcg64() = default;
  static constexpr unsigned __int128 kMultiplier =
      (static_cast<unsigned __int128>(0x2360ED051FC65DA4ULL) << 64) |
      0x4385DF649FCCF645ULL;
  void Step() { state_ = state_ * kMultiplier + inc_; }
  static uint64_t Output(unsigned __int128 s) {
    return std::rotr(static_cast<uint64_t>(s >> 64) ^ static_cast<uint64_t>(s), static_cast<int>(s >> 122));
  }

  unsigned __int128 state_ = 0;
  unsigned __int128 inc_ = 0;
  bool has_u32_ = false;
  uint32_t u32_ = 0;
};

// Numpy's bounded draws over any source of PCG64 words (Pcg64 or
// Pcg64Stream): what Generator's methods consume, so a caller reading through
// a Pcg64Stream draws exactly what the Generator would.
//
// Masked rejection in [0, max] (shuffle/permutation). max == 0 draws nothing.
template <class Bits>
[[gnu::always_inline]] inline uint64_t IntervalFrom(Bits& bits, uint64_t max) {
  if (max == 0) return 0;
  uint64_t mask = ~uint64_t{0} >> std::countl_zero(max);
  if (max <= 0xFFFFFFFFULL) {
    uint32_t m32 = static_cast<uint32_t>(mask);
    uint32_t v;
    while ((v = bits.NextU32() & m32) > max) {
    }
    return v;
  }
  uint64_t v;
  while ((v = bits.NextU64() & mask) > max) {
  }
  return v;
}

// Lemire in [0, rng] (integers/choice). rng == 0 draws nothing.
template <class Bits>
[[gnu::always_inline]] inline uint64_t BoundedFrom(Bits& bits, uint64_t rng) {
  if (rng == 0) return 0;
  if (rng < 0xFFFFFFFFULL) {
    uint32_t e = static_cast<uint32_t>(rng) + 1;
    uint64_t m = uint64_t{bits.NextU32()} * e;
    uint32_t lo = static_cast<uint32_t>(m);
    if (lo < e) {
      uint32_t t = (0xFFFFFFFFU - static_cast<uint32_t>(rng)) % e;
      while (lo < t) {
        m = uint64_t{bits.NextU32()} * e;
        lo = static_cast<uint32_t>(m);
      }
    }
    return m >> 32;
  }
  if (rng == 0xFFFFFFFFULL) return bits.NextU32();
  if (rng == ~uint64_t{0}) return bits.NextU64();
  uint64_t e = rng + 1;
  unsigned __int128 m = static_cast<unsigned __int128>(bits.NextU64()) * e;
  uint64_t lo = static_cast<uint64_t>(m);
  if (lo < e) {
    uint64_t t = (~uint64_t{0} - rng) % e;
    while (lo < t) {
      m = static_cast<unsigned __int128>(bits.NextU64()) * e;
      lo = static_cast<uint64_t>(m);
    }
  }
  return static_cast<uint64_t>(m >> 64);
}

// shuffle(x) as Generator::Shuffle draws it (plain Fisher-Yates from the
// end), over any source of words.
template <class Bits, typename T>
void ShuffleFrom(Bits& bits, std::span<T> x) {
  for (size_t i = x.size(); i > 1; --i) {
    size_t j = static_cast<size_t>(IntervalFrom(bits, i - 1));
    std::swap(x[i - 1], x[j]);
  }
}

// A fast reader of one Pcg64's words for hot loops (the planner draws 10^8
// of them): words come from blocks computed with Pcg64::Fill, and runs of
// words can be copied (Fill64) or skipped (Skip64, by jumping ahead). It
// yields exactly the words, 32-bit halves included, that the Pcg64 itself
// would. Commit() (also run by the destructor) brings the Pcg64 up to date;
// until then the Pcg64 must not be used. Holds a reference to the Pcg64,
// which must outlive it. Not thread-safe.
class Pcg64Stream {
 public:
  explicit Pcg64Stream(Pcg64& bits)
      : bits_(bits), gen_(bits), base_(bits.state_), has_u32_(bits.has_u32_), u32_(bits.u32_) {}
  ~Pcg64Stream() { Commit(); }
  Pcg64Stream(const Pcg64Stream&) = delete;
  Pcg64Stream& operator=(const Pcg64Stream&) = delete;

  uint64_t NextU64() {
    if (at_ == len_) Refill();
    return words_[at_++];
  }
  uint32_t NextU32() { return BufferedU32(&has_u32_, &u32_, [this] { return NextU64(); }); }
  double NextDouble() { return static_cast<double>(NextU64() >> 11) * (1.0 / 9007199254740992.0); }
  // shuffle(x) exactly as Generator::Shuffle draws it, for x.size() <=
  // 2^32 (every draw is a 32-bit one). The 32-bit halves are read by index
  // from the block, so neither the pending-half flag nor a rejected draw
  // costs a data-dependent branch on it.
  template <typename T>
  void ShuffleU32(std::span<T> x) {
    size_t i = x.size() > 0 ? x.size() - 1 : 0;
    if (i == 0) return;
    if (has_u32_) {  // the pending half is the first candidate
      has_u32_ = false;
      const uint32_t v = u32_ & Mask32(i);
      if (v <= i) {
        std::swap(x[i], x[v]);
        --i;
      }
    }
    size_t h = 2 * at_, end = 2 * len_;
    while (i > 0) {
      if (h == end) {
        Refill();
        h = 0;
        end = 2 * len_;
      }
      // The mask holds while i stays in [2^k, 2^(k+1)).
      const uint32_t mask = Mask32(i);
      const size_t below = mask >> 1;
      // A counted run, as in SkipShuffleU32 below.
      for (const size_t stop = h + std::min(end - h, i - below); h < stop;) {
        // Branch-free rejection: a rejected draw swaps x[i] with itself.
        const uint32_t v = Half(h++) & mask;
        const bool take = v <= i;
        const size_t j = take ? v : i;
        T a = x[i];
        x[i] = x[j];
        x[j] = a;
        i -= take;
      }
    }
    EndHalves(h);
  }
  // The draws of ShuffleU32 on n elements, discarded (the shuffle itself is
  // not needed): branch-free rejection.
  void SkipShuffleU32(size_t n) {
    size_t i = n > 0 ? n - 1 : 0;
    if (i == 0) return;
    if (has_u32_) {
      has_u32_ = false;
      i -= (u32_ & Mask32(i)) <= i;
    }
    size_t h = 2 * at_, end = 2 * len_;
    while (i > 0) {
      if (h == end) {
        Refill();
        h = 0;
        end = 2 * len_;
      }
      const uint32_t mask = Mask32(i);  // holds while i stays in [2^k, 2^(k+1))
      const size_t below = mask >> 1;
      // A draw lowers i by one at most, so the next i - below draws all test
      // against this mask: a counted run, whose loop tests neither i nor the
      // block's end, leaving the test's compare and subtract as the chain
      // each draw waits on (BENCHMARKS.md, "The replay's loop").
      const size_t run = std::min(end - h, i - below);
      for (const size_t stop = h + run; h < stop; ++h) i -= (Half(h) & mask) <= i;
    }
    EndHalves(h);
  }
  // out[0..n) = the next n NextU64() values.
  void Fill64(uint64_t* out, size_t n);
  // Discards the next n NextU64() values (jumping ahead when they are many;
  // the last jump's map is kept, so equal skips in a row cost one step).
  void Skip64(uint64_t n);
  // Writes the position reached back into the Pcg64 (state and 32-bit half),
  // detaching a Pcg64Ahead.
  void Commit();
  // Reads the words that follow from `ahead`, which makes them on its own
  // thread (pcg64_ahead.h), until Commit() or a Fill64 or Skip64 past the
  // block at hand (those detach it: what was made ahead is dropped).
  // `ahead` must outlive the attachment; it serves one stream at a time.
  // Worth it only for long runs of draws: each attachment restarts its maker.
  void Attach(Pcg64Ahead* ahead);
  // A Pcg64 standing where this stream stands (32-bit half included),
  // without committing: a saved position to draw from again later.
  Pcg64 Snapshot() const;

 private:
  static constexpr size_t kBlock = 256;
  // After a skip the next block starts short (a skip is usually followed by
  // one draw and another skip) and doubles back to kBlock.
  static constexpr size_t kShortBlock = 8;
  void Refill();
  // Stops reading from ahead_ (the block at hand is used up or dropped).
  void Detach();
  // Interval's mask for max (1 <= max < 2^32).
  static uint32_t Mask32(size_t max) { return ~uint32_t{0} >> std::countl_zero(static_cast<uint32_t>(max)); }
  // 32-bit half h of the block: low half of word h/2 first, as NextU32.
  // On a little-endian machine that is the h-th 32-bit word of the block: one
  // load, not a load and a shift by the half's parity.
  uint32_t Half(size_t h) const {
    if constexpr (std::endian::native == std::endian::little) {
      uint32_t v;
      std::memcpy(&v, reinterpret_cast<const unsigned char*>(words_) + 4 * h, sizeof v);
      return v;
    } else {
      return static_cast<uint32_t>(words_[h >> 1] >> ((h & 1) * 32));
    }
  }
  // After reading halves up to h: an odd count leaves the word's high half
  // pending, as NextU32 does.
  void EndHalves(size_t h) {
    at_ = (h + 1) >> 1;
    if (h & 1) {
      has_u32_ = true;
      u32_ = static_cast<uint32_t>(words_[h >> 1] >> 32);
    }
  }

  Pcg64& bits_;
  Pcg64 gen_;               // state after the block's last word
  unsigned __int128 base_;  // state before the block's first word
  bool has_u32_;
  uint32_t u32_;
  size_t at_ = 0, len_ = 0;
  size_t refill_ = kBlock;
  uint64_t jump_n_ = 0;  // Skip64's last jump (0: none)
  Pcg64::Jump jump_;
  Pcg64Ahead* ahead_ = nullptr;
  uint64_t buf_[kBlock];
  const uint64_t* words_ = buf_;  // the block: buf_, or a block of ahead_
};

class Generator {
 public:
  explicit Generator(uint64_t seed);  // default_rng(seed)
  // default_rng(seed) for a seed of any size, as SeedWords gives it (least
  // significant word first); e.g. 2^128+1 -> {1, 0, 0, 0, 1}.
  explicit Generator(std::span<const uint32_t> seed_words);

  // The underlying PCG64; draws through it advance this generator. The
  // reference lives as long as *this.
  Pcg64& bit_generator() { return pcg_; }

  // Masked rejection in [0, max] (shuffle/permutation). max == 0 draws nothing.
  uint64_t Interval(uint64_t max) { return IntervalFrom(pcg_, max); }
  // Lemire in [0, rng] (integers/choice). rng == 0 draws nothing.
  uint64_t Bounded(uint64_t rng) { return BoundedFrom(pcg_, rng); }

  // integers(low, high) and integers(low, high, size); high exclusive.
  // high <= low -> kInvalidArgument ("high <= low"), as numpy's ValueError.
  // The failing call draws nothing.
  Result<int64_t> Integers(int64_t low, int64_t high);
  Result<std::vector<int64_t>> Integers(int64_t low, int64_t high, size_t size);

  // shuffle(x) for a list or 1-D ndarray: Fisher-Yates from the end with
  // Interval. Shuffles in place; works on any contiguous view (a slice of a
  // larger array shuffles just that slice, as numpy's shuffle(a[3:8])).
  //
  // Large arrays: the swap partner x[j] is a cache miss, so the j of each step
  // is drawn kShufflePrefetch steps ahead and its line prefetched. The draws
  // do not depend on the data, so draw order and swap order, and thus the
  // result, are exactly those of the plain loop.
  template <typename T>
  void Shuffle(std::span<T> x) {
    const size_t n = x.size();
    if (n * sizeof(T) < kShufflePrefetchBytes) {
      for (size_t i = n; i > 1; --i) {
        size_t j = static_cast<size_t>(Interval(i - 1));
        std::swap(x[i - 1], x[j]);
      }
      return;
    }
    // Step t (0 <= t < n - 1) swaps x[n - 1 - t] with x[Interval(n - 1 - t)].
    const size_t steps = n - 1;
    size_t ahead[kShufflePrefetch];
    size_t drawn = 0;
    for (; drawn < kShufflePrefetch && drawn < steps; ++drawn) {
      ahead[drawn] = static_cast<size_t>(Interval(n - 1 - drawn));
      __builtin_prefetch(&x[ahead[drawn]], 1);
    }
    for (size_t t = 0; t < steps; ++t) {
      const size_t slot = t % kShufflePrefetch;
      const size_t j = ahead[slot];
      if (drawn < steps) {
        ahead[slot] = static_cast<size_t>(Interval(n - 1 - drawn));
        __builtin_prefetch(&x[ahead[slot]], 1);
        ++drawn;
      }
      std::swap(x[n - 1 - t], x[j]);
    }
  }
  template <typename T>
  void Shuffle(std::vector<T>& x) { Shuffle(std::span<T>(x)); }

  // permutation(n): a shuffled 0..n-1. n <= 0 gives an empty vector and draws
  // nothing.
  std::vector<int64_t> Permutation(int64_t n);
  // uniform(low, high, size): low + (high - low) * NextDouble(), no FMA.
  // Draws `size` doubles even when high == low.
  std::vector<double> Uniform(double low, double high, size_t size);
  // choice(n, k, replace=False): tail shuffle or Floyd + Lemire shuffle.
  // k > n or negative -> kInvalidArgument (the failing call draws nothing).
  // Memory: O(n) on the tail-shuffle path (n > 10000 and k > n / 50, so
  // n < 50 * (k + 1)), O(k) on the Floyd path.
  Result<std::vector<int64_t>> Choice(int64_t n, int64_t k);
  // random(size): `size` NextDouble()s.
  std::vector<double> Random(size_t size);

 private:
  // Shuffle's prefetch distance (steps) and the array size from which it
  // pays (about the size of L2).
  static constexpr size_t kShufflePrefetch = 32;
  static constexpr size_t kShufflePrefetchBytes = size_t{1} << 20;

  Pcg64 pcg_;
};

}  // namespace sluice::numpy
