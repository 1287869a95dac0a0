// numpy 1.24 Generator / PCG64 / SeedSequence, written from the spec in
// tests/data/mosaic/README.md section 2 (not from numpy's source).
#include "engine/random/numpy_random.h"

#include <algorithm>
#include <string>

#include "engine/random/pcg64_ahead.h"

namespace sluice::numpy {
namespace {

// SeedSequence's hashing constants (spec 2.1).
constexpr uint32_t kInitA = 0x43b0d7e5;
constexpr uint32_t kMultA = 0x931e8875;
constexpr uint32_t kInitB = 0x8b51f9dd;
constexpr uint32_t kMultB = 0x58f38ded;
constexpr uint32_t kMixMultL = 0xca01f9dd;
constexpr uint32_t kMixMultR = 0x4973f715;

// hashmix with the running constant `hc` carried by the caller.
uint32_t HashMix(uint32_t v, uint32_t& hc) {
  v ^= hc;
  hc *= kMultA;
  v *= hc;
  v ^= v >> 16;
  return v;
}

uint32_t Mix(uint32_t x, uint32_t y) {
  uint32_t r = kMixMultL * x - kMixMultR * y;
  r ^= r >> 16;
  return r;
}

// An open-addressing set of int64 >= 0, for Floyd's "already picked" test:
// one allocation per choice call, no per-insert allocation.
class PickedSet {
 public:
  explicit PickedSet(size_t k) {
    int bits = 4;
    while ((size_t{1} << bits) < 2 * k) ++bits;
    slots_.assign(size_t{1} << bits, kEmpty);
    mask_ = slots_.size() - 1;
    shift_ = 64 - bits;
  }
  // Inserts v; returns false when it was already present.
  bool Insert(int64_t v) {
    // Fibonacci hashing: the top bits of the product spread consecutive ids.
    size_t i = static_cast<size_t>((static_cast<uint64_t>(v) * 0x9E3779B97F4A7C15ULL) >> shift_);
    while (slots_[i] != kEmpty) {
      if (slots_[i] == v) return false;
      i = (i + 1) & mask_;
    }
    slots_[i] = v;
    return true;
  }

 private:
  static constexpr int64_t kEmpty = -1;
  std::vector<int64_t> slots_;
  size_t mask_ = 0;
  int shift_ = 60;
};

}  // namespace

std::vector<uint32_t> SeedWords(uint64_t seed) {
  std::vector<uint32_t> words{static_cast<uint32_t>(seed)};
  if (seed >> 32) words.push_back(static_cast<uint32_t>(seed >> 32));
  return words;
}

SeedSequence::SeedSequence(std::span<const uint32_t> entropy_words) {
  uint32_t hc = kInitA;
  for (size_t i = 0; i < 4; ++i) {
    pool_[i] = HashMix(i < entropy_words.size() ? entropy_words[i] : 0, hc);
  }
  for (size_t src = 0; src < 4; ++src) {
    for (size_t dst = 0; dst < 4; ++dst) {
      if (dst != src) pool_[dst] = Mix(pool_[dst], HashMix(pool_[src], hc));
    }
  }
  for (size_t src = 4; src < entropy_words.size(); ++src) {
    for (size_t dst = 0; dst < 4; ++dst) {
      pool_[dst] = Mix(pool_[dst], HashMix(entropy_words[src], hc));
    }
  }
}

std::vector<uint32_t> SeedSequence::GenerateState32(size_t n) const {
  std::vector<uint32_t> out(n);
  uint32_t hc = kInitB;
  for (size_t i = 0; i < n; ++i) {
    uint32_t v = pool_[i % 4];
    v ^= hc;
    hc *= kMultB;
    v *= hc;
    v ^= v >> 16;
    out[i] = v;
  }
  return out;
}

std::vector<uint64_t> SeedSequence::GenerateState64(size_t n) const {
  std::vector<uint32_t> words = GenerateState32(2 * n);
  std::vector<uint64_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    out[i] = uint64_t{words[2 * i]} | (uint64_t{words[2 * i + 1]} << 32);
  }
  return out;
}

Pcg64::Pcg64(const SeedSequence& seq) {
  std::vector<uint64_t> s = seq.GenerateState64(4);
  unsigned __int128 initstate = (static_cast<unsigned __int128>(s[0]) << 64) | s[1];
  unsigned __int128 initseq = (static_cast<unsigned __int128>(s[2]) << 64) | s[3];
  inc_ = (initseq << 1) | 1;
  state_ = 0;
  Step();
  state_ += initstate;
  Step();
}

Pcg64::Jump Pcg64::JumpOf(unsigned __int128 delta) const {
  // s -> m*s + p composed with itself: after the loop, acc_m*s + acc_p is
  // `delta` steps of s.
  unsigned __int128 acc_m = 1, acc_p = 0, cur_m = kMultiplier, cur_p = inc_;
  while (delta != 0) {
    if (delta & 1) {
      acc_m *= cur_m;
      acc_p = acc_p * cur_m + cur_p;
    }
    cur_p = (cur_m + 1) * cur_p;
    cur_m *= cur_m;
    delta >>= 1;
  }
  return {acc_m, acc_p};
}

void Pcg64::Advance(unsigned __int128 delta) { Apply(JumpOf(delta)); }

namespace {

constexpr int kLanes = 4;
// kMultiplier^kLanes and 1 + kMultiplier + ... + kMultiplier^(kLanes-1).
struct LaneStep {
  unsigned __int128 mult, sum;
};
constexpr LaneStep MakeLaneStep(unsigned __int128 a) {
  unsigned __int128 m = 1, sum = 0;
  for (int i = 0; i < kLanes; ++i) {
    sum += m;
    m *= a;
  }
  return {m, sum};
}

}  // namespace

void Pcg64::Fill(uint64_t* out, size_t n) {
  if (n < 2 * kLanes) {
    for (size_t i = 0; i < n; ++i) out[i] = NextU64();
    return;
  }
  static constexpr LaneStep kStep = MakeLaneStep(kMultiplier);
  const unsigned __int128 add = inc_ * kStep.sum;
  // Lane l holds the state of word i + l; each round moves every lane
  // kLanes steps on, independently of the others. Written out lane by lane
  // so the states stay in registers.
  static_assert(kLanes == 4);
  Step();
  unsigned __int128 s0 = state_;
  Step();
  unsigned __int128 s1 = state_;
  Step();
  unsigned __int128 s2 = state_;
  Step();
  unsigned __int128 s3 = state_;
  size_t i = 0;
  unsigned __int128 last = state_;
  for (; i + kLanes <= n; i += kLanes) {
    out[i] = Output(s0);
    out[i + 1] = Output(s1);
    out[i + 2] = Output(s2);
    out[i + 3] = Output(s3);
    last = s3;
    s0 = s0 * kStep.mult + add;
    s1 = s1 * kStep.mult + add;
    s2 = s2 * kStep.mult + add;
    s3 = s3 * kStep.mult + add;
  }
  const size_t rest = n - i;
  if (rest > 0) out[i] = Output(s0);
  if (rest > 1) out[i + 1] = Output(s1);
  if (rest > 2) out[i + 2] = Output(s2);
  state_ = rest == 0 ? last : rest == 1 ? s0 : rest == 2 ? s1 : s2;
}

void Pcg64Stream::Refill() {
  if (ahead_ != nullptr) {
    if (const Pcg64Ahead::Block* b = ahead_->Next()) {
      words_ = b->words;
      base_ = b->before;
      gen_.state_ = b->after;
      len_ = Pcg64Ahead::kWords;
      at_ = 0;
      return;
    }
    ahead_ = nullptr;  // its maker failed (its status() says why): gen_ stands after the last block
  }
  words_ = buf_;
  base_ = gen_.state_;
  len_ = refill_;
  gen_.Fill(buf_, len_);
  at_ = 0;
  refill_ = std::min(kBlock, 2 * refill_);
}

void Pcg64Stream::Detach() {
  if (ahead_ == nullptr) return;
  ahead_->Stop();
  ahead_ = nullptr;
}

void Pcg64Stream::Attach(Pcg64Ahead* ahead) {
  Commit();
  ahead_ = ahead;
  ahead_->Start(gen_);
}

void Pcg64Stream::Fill64(uint64_t* out, size_t n) {
  const size_t have = std::min(n, len_ - at_);
  std::copy(words_ + at_, words_ + at_ + have, out);
  at_ += have;
  if (have == n) return;
  Detach();
  // The block is used up: gen_ stands right after it.
  gen_.Fill(out + have, n - have);
  base_ = gen_.state_;
  at_ = len_ = 0;
}

void Pcg64Stream::Skip64(uint64_t n) {
  if (n <= len_ - at_) {
    at_ += n;
    return;
  }
  Detach();
  const uint64_t jump = n - (len_ - at_);
  if (jump != jump_n_) {
    jump_ = gen_.JumpOf(jump);
    jump_n_ = jump;
  }
  gen_.Apply(jump_);
  base_ = gen_.state_;
  at_ = len_ = 0;
  refill_ = kShortBlock;
}

Pcg64 Pcg64Stream::Snapshot() const {
  Pcg64 now = gen_;
  now.state_ = base_;
  now.Advance(at_);
  now.has_u32_ = has_u32_;
  now.u32_ = u32_;
  return now;
}

void Pcg64Stream::Commit() {
  Detach();
  Pcg64 now = gen_;
  now.state_ = base_;
  now.Advance(at_);
  bits_.state_ = now.state_;
  bits_.has_u32_ = has_u32_;
  bits_.u32_ = u32_;
  gen_ = now;
  base_ = now.state_;
  at_ = len_ = 0;
}

Generator::Generator(uint64_t seed)
    : pcg_(SeedSequence(std::span<const uint32_t>(SeedWords(seed)))) {}

Generator::Generator(std::span<const uint32_t> seed_words)
    : pcg_(SeedSequence(seed_words)) {}

Result<int64_t> Generator::Integers(int64_t low, int64_t high) {
  if (high <= low) {
    return InvalidArgumentError("integers(low=" + std::to_string(low) +
                                ", high=" + std::to_string(high) + "): high <= low");
  }
  // Unsigned arithmetic: high - low may exceed INT64_MAX.
  uint64_t rng = static_cast<uint64_t>(high) - static_cast<uint64_t>(low) - 1;
  return static_cast<int64_t>(static_cast<uint64_t>(low) + Bounded(rng));
}

Result<std::vector<int64_t>> Generator::Integers(int64_t low, int64_t high, size_t size) {
  if (high <= low) {
    return InvalidArgumentError("integers(low=" + std::to_string(low) +
                                ", high=" + std::to_string(high) + ", size=" +
                                std::to_string(size) + "): high <= low");
  }
  uint64_t rng = static_cast<uint64_t>(high) - static_cast<uint64_t>(low) - 1;
  std::vector<int64_t> out(size);
  for (int64_t& v : out) {
    v = static_cast<int64_t>(static_cast<uint64_t>(low) + Bounded(rng));
  }
  return out;
}

std::vector<int64_t> Generator::Permutation(int64_t n) {
  std::vector<int64_t> out(n > 0 ? static_cast<size_t>(n) : 0);
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<int64_t>(i);
  Shuffle(out);
  return out;
}

std::vector<double> Generator::Uniform(double low, double high, size_t size) {
  const double range = high - low;
  std::vector<double> out(size);
  for (double& v : out) {
    // Two statements so no compiler may fuse them into an FMA.
    const double scaled = range * pcg_.NextDouble();
    v = low + scaled;
  }
  return out;
}

std::vector<double> Generator::Random(size_t size) {
  std::vector<double> out(size);
  for (double& v : out) v = pcg_.NextDouble();
  return out;
}

Result<std::vector<int64_t>> Generator::Choice(int64_t n, int64_t k) {
  if (n < 0 || k < 0 || k > n) {
    return InvalidArgumentError("choice(a=" + std::to_string(n) + ", size=" + std::to_string(k) +
                                ", replace=False): " +
                                (n < 0 || k < 0 ? "negative population or size"
                                                : "cannot take a larger sample than population"));
  }
  const size_t nn = static_cast<size_t>(n);
  const size_t kk = static_cast<size_t>(k);
  if (n > 10000 && k > n / 50) {
    // Tail shuffle: a partial Fisher-Yates of 0..n-1 with Lemire draws.
    std::vector<int64_t> a(nn);
    for (size_t i = 0; i < nn; ++i) a[i] = static_cast<int64_t>(i);
    const size_t stop = nn - kk > 1 ? nn - kk : 1;
    for (size_t i = nn - 1; i >= stop; --i) {
      size_t j = static_cast<size_t>(Bounded(i));
      std::swap(a[i], a[j]);
    }
    a.erase(a.begin(), a.begin() + static_cast<ptrdiff_t>(nn - kk));
    a.shrink_to_fit();
    return a;
  }
  // Floyd's sampling, then a Lemire-drawn shuffle of the picks.
  std::vector<int64_t> out;
  out.reserve(kk);
  if (kk == 0) return out;
  PickedSet picked(kk);
  for (int64_t j = n - k; j < n; ++j) {
    int64_t v = static_cast<int64_t>(Bounded(static_cast<uint64_t>(j)));
    if (!picked.Insert(v)) {
      v = j;
      picked.Insert(v);
    }
    out.push_back(v);
  }
  for (size_t i = kk - 1; i > 0; --i) {
    size_t t = static_cast<size_t>(Bounded(i));
    std::swap(out[i], out[t]);
  }
  return out;
}

}  // namespace sluice::numpy
