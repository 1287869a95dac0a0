// Pcg64Ahead (pcg64_ahead.h): a ring of blocks, one maker thread.
#include "engine/random/pcg64_ahead.h"

#include <exception>
#include <system_error>

#include "base/exception_status.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace sluice::numpy {

void Pcg64Ahead::FillWords(Pcg64& gen, uint64_t* words) {
#if defined(__x86_64__)
  // Stored past the caches: the reader runs on another core, and pulling
  // fresh lines out of this core's cache cost it more (1B samples'
  // checkpoints: 1.10 s of its CPU, 0.83 s with these stores).
  uint64_t local[256];
  for (size_t at = 0; at < kWords; at += 256) {
    gen.Fill(local, 256);
    for (size_t i = 0; i < 256; ++i) _mm_stream_si64(reinterpret_cast<long long*>(words + at + i), (long long)local[i]);
  }
  _mm_sfence();
#else
  gen.Fill(words, kWords);
#endif
}

Pcg64Ahead::~Pcg64Ahead() {
  {
    std::lock_guard<std::mutex> l(mu_);
    quit_ = true;
  }
  maker_cv_.notify_all();
  if (maker_.joinable()) maker_.join();
}

void Pcg64Ahead::Start(const Pcg64& from) {
  std::unique_lock<std::mutex> l(mu_);
  ++run_;
  made_ = taken_ = 0;
  holding_ = false;
  from_ = from.state();
  inc_ = from.inc();
  if (!status_.ok()) return;
  if (!maker_.joinable()) {
    const std::exception_ptr e = CatchAll([&] {
      if (!ring_) ring_ = std::make_unique<Block[]>(kSlots);
      maker_ = std::thread([this] { Run(); });
    });
    if (e) {
      status_ = StatusFromException(e, "starting the thread that makes PCG64 words ahead");
      return;
    }
  }
  active_ = true;
  l.unlock();
  maker_cv_.notify_one();
}

void Pcg64Ahead::Stop() {
  std::lock_guard<std::mutex> l(mu_);
  ++run_;  // a block being made now is dropped
  active_ = false;
  holding_ = false;
  made_ = taken_ = 0;
}

Status Pcg64Ahead::status() const {
  std::lock_guard<std::mutex> l(mu_);
  return status_;
}

const Pcg64Ahead::Block* Pcg64Ahead::Next() {
  std::unique_lock<std::mutex> l(mu_);
  if (holding_) {
    ++taken_;
    holding_ = false;
    // The maker, parked on a full ring, resumes once half of it is free
    // (a wake-up per kSlots / 2 blocks, not per block).
    if (maker_waiting_ && made_ - taken_ <= kSlots / 2) maker_cv_.notify_one();
  }
  while (made_ == taken_ && active_ && status_.ok()) {
    reader_waiting_ = true;
    reader_cv_.wait(l);
    reader_waiting_ = false;
  }
  if (made_ == taken_) return nullptr;  // stopped or failed
  holding_ = true;
  return &ring_[taken_ % kSlots];
}

void Pcg64Ahead::Run() {
  std::unique_lock<std::mutex> l(mu_);
  while (!quit_) {
    if (!active_ || !status_.ok()) {
      maker_cv_.wait(l);
      continue;
    }
    if (made_ - taken_ >= kSlots) {
      maker_waiting_ = true;
      maker_cv_.wait(l);
      maker_waiting_ = false;
      continue;
    }
    // Slot made_ % kSlots is neither held by the reader (it holds taken_ <
    // made_ + ... within kSlots) nor read before it is published below.
    const uint64_t run = run_;
    Block& b = ring_[made_ % kSlots];
    Pcg64 gen = Pcg64::FromState(from_, inc_, false, 0);
    b.before = from_;
    l.unlock();
    const std::exception_ptr e = CatchAll([&] { make_(gen, b.words); });
    l.lock();
    if (e) {
      status_ = StatusFromException(e, "making PCG64 words ahead");
      reader_cv_.notify_all();
      continue;
    }
    if (run != run_) continue;  // Start or Stop came meanwhile: dropped
    b.after = gen.state();
    from_ = b.after;
    ++made_;
    if (reader_waiting_) reader_cv_.notify_one();
  }
}

}  // namespace sluice::numpy
