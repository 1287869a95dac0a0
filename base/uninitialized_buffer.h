// A heap byte buffer whose bytes are never zero-filled: for output that a
// decoder overwrites whole (decompressed pages), where a zero-fill would be
// a second pass over memory and the first touch of every page.
//
// A buffer of 4 MiB or more is aligned to 2 MiB and, by default, advised
// MADV_HUGEPAGE, so the kernel maps it in 2 MiB pages where it can (one
// page fault per 2 MiB instead of 512); only a hint. Asked for in small
// pages (Pages::kSmall) it is advised MADV_NOHUGEPAGE instead. Memory not
// yet written costs address space only. When such a buffer is freed it is kept for a later Allocate
// of about its size (at most kRecycledBytes in all, process-wide): a reader
// that decodes one row group after another then reuses memory the kernel
// has already mapped and zeroed, instead of paying for a fresh mapping, its
// faults and its zeroing per row group again.
//
// Movable, not copyable; the bytes never move (views into them stay valid
// across moves). Allocate and destruction are thread-safe; one buffer is
// not thread-safe for writing, safe to read from several threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <string_view>

#include "base/status.h"

namespace sluice {

class UninitializedBuffer {
 public:
  static constexpr size_t kRecycledBytes = size_t{256} << 20;

  // How a buffer of 4 MiB or more is mapped on first touch. kHuge: 2 MiB
  // pages, for buffers decoded into whole and recycled (a reader's row
  // groups). kSmall: 4 KiB pages, for buffers whose bytes arrive fresh and
  // are held long (a single pass's shards): in a VM that hands freed guest
  // memory back to its host (free page reporting, in 2 MiB blocks), a fresh
  // huge page comes from such a block and its zeroing faults the host's
  // pages in again, where 4 KiB pages come first from smaller free blocks
  // the host still backs: a shuffled single pass of 2.1 GB took 2.38
  // against 0.62 CPU s/GB (BENCHMARKS.md, zero41s). A recycled buffer is
  // advised again when asked for in the other kind (pages it already
  // mapped stay as they are).
  enum class Pages { kHuge, kSmall };

  UninitializedBuffer() = default;
  UninitializedBuffer(UninitializedBuffer&& o) noexcept;
  UninitializedBuffer& operator=(UninitializedBuffer&& o) noexcept;
  UninitializedBuffer(const UninitializedBuffer&) = delete;
  UninitializedBuffer& operator=(const UninitializedBuffer&) = delete;
  ~UninitializedBuffer();

  // `size` bytes of unspecified content, mapped in `pages` from 4 MiB on.
  // kIoError "<what>: out of memory (<size> bytes)" when the system
  // refuses; the caller bounds `size`.
  static Result<UninitializedBuffer> Allocate(size_t size, std::string_view what,
                                              Pages pages = Pages::kHuge);

  char* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  char* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;  // of the allocation; > size_ when rounded or recycled
  Pages pages_ = Pages::kHuge;  // as advised, for the recycled block
};

// Storage for arrays that are made afresh for each row group and are large
// (a view per value): from kRecycledFrom bytes up, the same pool, 2 MiB
// alignment and huge-page hint as UninitializedBuffer's large buffers, so
// the next row group's array reuses memory already mapped instead of
// faulting in a fresh mapping page by page. Smaller sizes are malloc's.
// Returns nullptr when the system refuses. ReleaseRecyclable takes the
// pointer and the `bytes` it was asked with. Thread-safe.
inline constexpr size_t kRecycledFrom = size_t{1} << 20;
void* AllocateRecyclable(size_t bytes);
void ReleaseRecyclable(void* p, size_t bytes);

// A std::vector allocator over AllocateRecyclable: for the arrays of views
// a decoded column holds. Stateless; all instances are equal.
template <class T>
struct RecyclingAllocator {
  using value_type = T;
  RecyclingAllocator() = default;
  template <class U>
  RecyclingAllocator(const RecyclingAllocator<U>&) noexcept {}  // NOLINT: rebinding
  T* allocate(size_t n) {
    if (n > SIZE_MAX / sizeof(T)) throw std::bad_array_new_length();
    void* p = AllocateRecyclable(n * sizeof(T));
    if (p == nullptr) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) noexcept { ReleaseRecyclable(p, n * sizeof(T)); }
  template <class U>
  bool operator==(const RecyclingAllocator<U>&) const noexcept { return true; }
};

}  // namespace sluice
