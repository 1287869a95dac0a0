// A heap byte buffer whose bytes are never zero-filled: for output that a
// decoder overwrites whole (decompressed pages), where a zero-fill would be
// a second pass over memory and the first touch of every page.
//
// A buffer of 4 MiB or more is aligned to 2 MiB and advised MADV_HUGEPAGE,
// so the kernel maps it in 2 MiB pages where it can (one page fault per
// 2 MiB instead of 512); only a hint. Memory not yet written costs address
// space only.
//
// Movable, not copyable; the bytes never move (views into them stay valid
// across moves). Not thread-safe for writing; safe to read from several
// threads.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <string_view>

#include "base/status.h"

namespace sluice {

class UninitializedBuffer {
 public:
  UninitializedBuffer() = default;

  // `size` bytes of unspecified content. kIoError "<what>: out of memory
  // (<size> bytes)" when the system refuses; the caller bounds `size`.
  static Result<UninitializedBuffer> Allocate(size_t size, std::string_view what);

  char* data() const { return data_.get(); }
  size_t size() const { return size_; }

 private:
  struct Free {
    void operator()(char* p) const { std::free(p); }
  };
  std::unique_ptr<char, Free> data_;
  size_t size_ = 0;
};

}  // namespace sluice
