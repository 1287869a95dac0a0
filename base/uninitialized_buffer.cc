#include "base/uninitialized_buffer.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace sluice {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kHugeFrom = size_t{4} << 20;

using Pages = UninitializedBuffer::Pages;

struct Block {
  char* data;
  size_t capacity;
  Pages pages;  // as last advised
};

// Freed large buffers, kept for reuse: newest last.
struct Recycled {
  std::mutex mu;
  std::vector<Block> buffers;
  size_t bytes = 0;
};

Recycled& Pool() {
  static Recycled* pool = new Recycled;  // never destroyed: buffers may die at exit
  return *pool;
}

// A kept buffer of `capacity` to 2 x `capacity` bytes (the smallest), or null.
char* TakeRecycled(size_t capacity, size_t* got, Pages* advised) {
  Recycled& pool = Pool();
  std::lock_guard<std::mutex> lock(pool.mu);
  size_t best = pool.buffers.size();
  for (size_t i = 0; i < pool.buffers.size(); ++i) {
    const size_t c = pool.buffers[i].capacity;
    if (c >= capacity && c / 2 <= capacity &&
        (best == pool.buffers.size() || c < pool.buffers[best].capacity)) {
      best = i;
    }
  }
  if (best == pool.buffers.size()) return nullptr;
  char* p = pool.buffers[best].data;
  *got = pool.buffers[best].capacity;
  *advised = pool.buffers[best].pages;
  pool.bytes -= *got;
  pool.buffers.erase(pool.buffers.begin() + static_cast<std::ptrdiff_t>(best));
  return p;
}

// Keeps `p` for reuse, dropping the oldest kept buffers to stay within
// kRecycledBytes; frees it when it alone is larger.
void Recycle(char* p, size_t capacity, Pages pages) {
  if (capacity > UninitializedBuffer::kRecycledBytes) {
    std::free(p);
    return;
  }
  std::vector<char*> drop;
  {
    Recycled& pool = Pool();
    std::lock_guard<std::mutex> lock(pool.mu);
    while (pool.bytes + capacity > UninitializedBuffer::kRecycledBytes) {
      drop.push_back(pool.buffers.front().data);
      pool.bytes -= pool.buffers.front().capacity;
      pool.buffers.erase(pool.buffers.begin());
    }
    pool.buffers.push_back(Block{p, capacity, pages});
    pool.bytes += capacity;
  }
  for (char* d : drop) std::free(d);
}

// Advice only: an unknown advice leaves the kernel's default.
void Advise(char* p, size_t capacity, Pages pages) {
#if defined(MADV_HUGEPAGE) && defined(MADV_NOHUGEPAGE)
  (void)::madvise(p, capacity, pages == Pages::kHuge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
#endif
}

// A block of `capacity` bytes (a multiple of kHugePage) advised `pages`: a
// recycled one of capacity..2x capacity bytes (*got its size), else new.
char* AllocateLarge(size_t capacity, Pages pages, size_t* got) {
  Pages advised = pages;
  char* p = TakeRecycled(capacity, got, &advised);
  if (p != nullptr) {
    if (advised != pages) Advise(p, *got, pages);
    return p;
  }
  *got = capacity;
  p = static_cast<char*>(std::aligned_alloc(kHugePage, capacity));
  if (p != nullptr) Advise(p, capacity, pages);
  return p;
}

size_t RoundToHugePages(size_t size) { return (size + kHugePage - 1) & ~(kHugePage - 1); }

}  // namespace

void* AllocateRecyclable(size_t bytes) {
  if (bytes < kRecycledFrom || bytes > SIZE_MAX - kHugePage) return std::malloc(bytes == 0 ? 1 : bytes);
  size_t got = 0;
  return AllocateLarge(RoundToHugePages(bytes), Pages::kHuge, &got);
}

void ReleaseRecyclable(void* p, size_t bytes) {
  if (p == nullptr) return;
  if (bytes < kRecycledFrom || bytes > SIZE_MAX - kHugePage) {
    std::free(p);
    return;
  }
  // A recycled block may be larger than asked: kept as the size asked
  // (rounded), which it holds at least.
  Recycle(static_cast<char*>(p), RoundToHugePages(bytes), Pages::kHuge);
}

UninitializedBuffer::UninitializedBuffer(UninitializedBuffer&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)),
      size_(std::exchange(o.size_, 0)),
      capacity_(std::exchange(o.capacity_, 0)),
      pages_(o.pages_) {}

UninitializedBuffer& UninitializedBuffer::operator=(UninitializedBuffer&& o) noexcept {
  if (this != &o) {
    UninitializedBuffer old(std::move(*this));
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
    capacity_ = std::exchange(o.capacity_, 0);
    pages_ = o.pages_;
  }
  return *this;
}

UninitializedBuffer::~UninitializedBuffer() {
  if (data_ == nullptr) return;
  if (capacity_ >= kHugeFrom) {
    Recycle(data_, capacity_, pages_);
  } else {
    std::free(data_);
  }
}

Result<UninitializedBuffer> UninitializedBuffer::Allocate(size_t size, std::string_view what,
                                                          Pages pages) {
  UninitializedBuffer b;
  if (size == 0) return b;
  void* p = nullptr;
  size_t capacity = size;
  if (size >= kHugeFrom && size <= SIZE_MAX - kHugePage) {
    // aligned_alloc wants a multiple of the alignment.
    p = AllocateLarge(RoundToHugePages(size), pages, &capacity);
  } else {
    p = std::malloc(size);
  }
  if (p == nullptr) {
    return IoError(std::string(what) + ": out of memory (" + std::to_string(size) + " bytes)");
  }
  b.data_ = static_cast<char*>(p);
  b.size_ = size;
  b.capacity_ = capacity;
  b.pages_ = pages;
  return b;
}

}  // namespace sluice
