#include "base/uninitialized_buffer.h"

#include <sys/mman.h>

#include <string>

namespace sluice {
namespace {
constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kHugeFrom = size_t{4} << 20;
}  // namespace

Result<UninitializedBuffer> UninitializedBuffer::Allocate(size_t size, std::string_view what) {
  UninitializedBuffer b;
  if (size == 0) return b;
  void* p = nullptr;
  if (size >= kHugeFrom && size <= SIZE_MAX - kHugePage) {
    // aligned_alloc wants a multiple of the alignment.
    const size_t rounded = (size + kHugePage - 1) & ~(kHugePage - 1);
    p = std::aligned_alloc(kHugePage, rounded);
#ifdef MADV_HUGEPAGE
    if (p != nullptr) (void)::madvise(p, rounded, MADV_HUGEPAGE);  // advice only
#endif
  } else {
    p = std::malloc(size);
  }
  if (p == nullptr) {
    return IoError(std::string(what) + ": out of memory (" + std::to_string(size) + " bytes)");
  }
  b.data_.reset(static_cast<char*>(p));
  b.size_ = size;
  return b;
}

}  // namespace sluice
