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

// Freed large buffers, kept for reuse: newest last.
struct Recycled {
  std::mutex mu;
  std::vector<std::pair<char*, size_t>> buffers;  // data, capacity
  size_t bytes = 0;
};

Recycled& Pool() {
  static Recycled* pool = new Recycled;  // never destroyed: buffers may die at exit
  return *pool;
}

// A kept buffer of `capacity` to 2 x `capacity` bytes (the smallest), or null.
char* TakeRecycled(size_t capacity, size_t* got) {
  Recycled& pool = Pool();
  std::lock_guard<std::mutex> lock(pool.mu);
  size_t best = pool.buffers.size();
  for (size_t i = 0; i < pool.buffers.size(); ++i) {
    const size_t c = pool.buffers[i].second;
    if (c >= capacity && c / 2 <= capacity &&
        (best == pool.buffers.size() || c < pool.buffers[best].second)) {
      best = i;
    }
  }
  if (best == pool.buffers.size()) return nullptr;
  char* p = pool.buffers[best].first;
  *got = pool.buffers[best].second;
  pool.bytes -= *got;
  pool.buffers.erase(pool.buffers.begin() + static_cast<std::ptrdiff_t>(best));
  return p;
}

// Keeps `p` for reuse, dropping the oldest kept buffers to stay within
// kRecycledBytes; frees it when it alone is larger.
void Recycle(char* p, size_t capacity) {
  if (capacity > UninitializedBuffer::kRecycledBytes) {
    std::free(p);
    return;
  }
  std::vector<char*> drop;
  {
    Recycled& pool = Pool();
    std::lock_guard<std::mutex> lock(pool.mu);
    while (pool.bytes + capacity > UninitializedBuffer::kRecycledBytes) {
      drop.push_back(pool.buffers.front().first);
      pool.bytes -= pool.buffers.front().second;
      pool.buffers.erase(pool.buffers.begin());
    }
    pool.buffers.emplace_back(p, capacity);
    pool.bytes += capacity;
  }
  for (char* d : drop) std::free(d);
}

// A huge-page-advised block of `capacity` bytes (a multiple of kHugePage):
// a recycled one of capacity..2x capacity bytes (*got its size), else new.
char* AllocateHuge(size_t capacity, size_t* got) {
  char* p = TakeRecycled(capacity, got);
  if (p != nullptr) return p;
  *got = capacity;
  p = static_cast<char*>(std::aligned_alloc(kHugePage, capacity));
#ifdef MADV_HUGEPAGE
  if (p != nullptr) (void)::madvise(p, capacity, MADV_HUGEPAGE);  // advice only
#endif
  return p;
}

size_t RoundToHugePages(size_t size) { return (size + kHugePage - 1) & ~(kHugePage - 1); }

}  // namespace

void* AllocateRecyclable(size_t bytes) {
  if (bytes < kRecycledFrom || bytes > SIZE_MAX - kHugePage) return std::malloc(bytes == 0 ? 1 : bytes);
  size_t got = 0;
  return AllocateHuge(RoundToHugePages(bytes), &got);
}

void ReleaseRecyclable(void* p, size_t bytes) {
  if (p == nullptr) return;
  if (bytes < kRecycledFrom || bytes > SIZE_MAX - kHugePage) {
    std::free(p);
    return;
  }
  // A recycled block may be larger than asked: kept as the size asked
  // (rounded), which it holds at least.
  Recycle(static_cast<char*>(p), RoundToHugePages(bytes));
}

UninitializedBuffer::UninitializedBuffer(UninitializedBuffer&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)),
      size_(std::exchange(o.size_, 0)),
      capacity_(std::exchange(o.capacity_, 0)) {}

UninitializedBuffer& UninitializedBuffer::operator=(UninitializedBuffer&& o) noexcept {
  if (this != &o) {
    UninitializedBuffer old(std::move(*this));
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
    capacity_ = std::exchange(o.capacity_, 0);
  }
  return *this;
}

UninitializedBuffer::~UninitializedBuffer() {
  if (data_ == nullptr) return;
  if (capacity_ >= kHugeFrom) {
    Recycle(data_, capacity_);
  } else {
    std::free(data_);
  }
}

Result<UninitializedBuffer> UninitializedBuffer::Allocate(size_t size, std::string_view what) {
  UninitializedBuffer b;
  if (size == 0) return b;
  void* p = nullptr;
  size_t capacity = size;
  if (size >= kHugeFrom && size <= SIZE_MAX - kHugePage) {
    // aligned_alloc wants a multiple of the alignment.
    p = AllocateHuge(RoundToHugePages(size), &capacity);
  } else {
    p = std::malloc(size);
  }
  if (p == nullptr) {
    return IoError(std::string(what) + ": out of memory (" + std::to_string(size) + " bytes)");
  }
  b.data_ = static_cast<char*>(p);
  b.size_ = size;
  b.capacity_ = capacity;
  return b;
}

}  // namespace sluice
