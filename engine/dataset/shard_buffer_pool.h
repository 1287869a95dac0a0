// The buffers a single pass receives its shards into, kept for the shards
// it receives next: a shard's buffer the pass has let go (its last holder
// dropped it) is taken by a later receive instead of fresh memory, whose
// pages the kernel would fault in and zero on first touch (and, in a VM
// that reports freed pages to its host, map again): 18% of a strict
// single pass's CPU went to `clear_page_erms` (BENCHMARKS.md, epoch41o).
//
// A buffer goes back only when no one can reach it: Take hands it out as a
// std::shared_ptr whose deleter returns it, so every holder (the shard's
// ShardBytes, an ArrivedBytes over its parts, a sample served in flight
// that keeps it, a consumer's batch through its OpenedShard) shares one
// count, and the bytes are never rewritten while a view into them may
// still be read.
//
// Bounded by what the pass already holds: at most Keep() buffers are kept
// (a reader keeps as many as it receives at once, fetch_concurrency), the
// largest returned, each one a receive already allocated for a shard of
// the index's size (Take allocates nothing a caller did not ask for, and
// reuses only a buffer at least as large as asked); one not kept is freed
// (UninitializedBuffer's own recycling, process-wide, may keep it).
//
// Thread-safe: Take, Keep and the buffers' return from any thread. A
// buffer may outlive the pool: it is then freed, not kept.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "base/uninitialized_buffer.h"

namespace sluice {

class ShardBufferPool {
 public:
  // Keeps up to `keep` returned buffers.
  explicit ShardBufferPool(size_t keep = 1);
  ~ShardBufferPool();
  ShardBufferPool(const ShardBufferPool&) = delete;
  ShardBufferPool& operator=(const ShardBufferPool&) = delete;

  // At most `keep` buffers kept from now on (the extra ones freed now).
  void Keep(size_t keep);

  // A buffer of at least `size` bytes (size() may be larger), of
  // unspecified content: the smallest kept one that holds `size`, else a
  // new one of RoomFor(size) in `pages` (UninitializedBuffer::Allocate:
  // "<what>: out of memory (<bytes> bytes)"). It returns here when its
  // last holder drops it.
  Result<std::shared_ptr<UninitializedBuffer>> Take(
      size_t size, std::string_view what,
      UninitializedBuffer::Pages pages = UninitializedBuffer::Pages::kHuge);
  // `size` rounded up to 64 KiB, or to 2 MiB from 4 MiB on (where
  // UninitializedBuffer aligns its allocations anyway): shards of about
  // one size, as a writer's size_limit makes them, and their zips, then fit
  // each other's buffers, whichever came first.
  static size_t RoomFor(size_t size);

  struct Counters {
    uint64_t allocated = 0;  // Takes answered with new memory
    uint64_t reused = 0;     // Takes answered with a kept buffer
  };
  Counters counters() const;
  // Every pool's counters in this process added up, for tests that read a
  // pass through StreamingDataset, whose pools they cannot reach.
  static Counters ProcessCountersForTesting();

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace sluice
