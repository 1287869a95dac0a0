// Large values of a byte-array column that straddle pieces of a page in
// pieces (plain_pieces.h): their room in the page buffer is reserved when
// the chunk is decoded, and their bytes are copied there when a row is
// first read. Copied at decode time, every 256 KiB image of a row group
// would be written out to memory and read back from it by the consumer;
// copied just before its row is handed out, it is still in the cache when
// the consumer reads it (bench/parquet/README.md).
//
// A value's view is valid (its pointer and size) from the start; its bytes
// only after Ensure (or GatherAll) has returned. A reader whose views need
// last only until its next read copies the value into a small buffer of its
// own instead (Transient): 256 KiB that stay in the cache, where the page
// buffer's copy is written out to memory and read back (BENCHMARKS.md,
// "binary_256k against MDS"). A consumer that copies the value anyway may
// take its segments instead (Pieces): no copy of ours at all. Add and Truncate while
// decoding (not thread-safe); Ensure and GatherAll may then be called from
// several threads at once: each value is copied once, a thread that finds
// it being copied waits for it. The segments' bytes (the chunk, the page
// buffer) and the destinations must outlive the object's use. Movable.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <span>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "base/uninitialized_buffer.h"

namespace sluice::parquet {

class DeferredGathers {
 public:
  // Values of fewer bytes are copied when decoded: their copy is cheap,
  // and a row of them would pay the look-up.
  static constexpr uint64_t kFrom = uint64_t{32} << 10;

  bool empty() const { return values_.empty(); }
  size_t size() const { return values_.size(); }

  // The value at `dst` is the segments laid end to end. False (nothing
  // added: copy it now) when dst does not lie past every value added.
  bool Add(char* dst, std::span<const std::string_view> segments);
  // Forgets the values added after the first `n`.
  void Truncate(size_t n);

  // Copies `value`'s bytes into place when it is a value added here and not
  // yet copied; returns at once otherwise.
  void Ensure(std::string_view value) const;
  void GatherAll() const;

  // `value` without writing its place: a value added here and not yet
  // copied is copied into *scratch (reallocated when smaller than the
  // value; its earlier bytes are overwritten) and a view of that copy is
  // returned; any other value (one Ensure copied already included) is
  // returned as it is. Only reads the segments, so it may run beside
  // Ensure and GatherAll on other threads. kIoError when the system
  // refuses the scratch's memory; the value's size is the page buffer's
  // room for it, already bounded.
  Result<std::string_view> Transient(std::string_view value, UninitializedBuffer* scratch) const;

  // The segments of `value` (views of the chunk, in order; they add up to
  // the value) when it is a value added here and not yet copied into place;
  // empty otherwise (its view holds its bytes). Writes nothing: for a
  // consumer that copies the value anyway (into a batch, a Python bytes),
  // which then makes the one copy. The span lives as long as this object
  // is not truncated past it (Add does not move it: a lazy reader adds the
  // values of later pages while earlier rows' spans are in use); may run
  // beside Ensure on other threads.
  std::span<const std::string_view> Pieces(std::string_view value) const;

  uint64_t HeldBytes() const {
    uint64_t n = values_.capacity() * sizeof(Value) + state_.size();
    for (const auto& b : blocks_) n += b.capacity() * sizeof(std::string_view);
    return n;
  }

 private:
  struct Value {
    char* dst;
    const std::string_view* segments_at;  // in one of blocks_
    uint64_t segments;
  };
  // Segments are kept in blocks that are never reallocated: a value's are
  // in one block, so spans of them stay valid as values are added.
  static constexpr size_t kBlock = 4096;
  void Gather(size_t i) const;
  // The index of the value that starts at value.data(), or size().
  size_t Find(std::string_view value) const;

  std::vector<Value> values_;  // by dst, ascending
  std::deque<std::vector<std::string_view>> blocks_;
  // Per value: 0 not copied, 1 being copied, 2 copied (a deque: atomics
  // cannot move, and the deque never moves its elements).
  mutable std::deque<std::atomic<uint8_t>> state_;
};

}  // namespace sluice::parquet
