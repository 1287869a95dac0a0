// The large buffers bodies are received into, recycled through a free list
// so that a download does not allocate (and fault in) 2 MiB per response.
//
// Internal to stores/http. A pool belongs to one client and is used on its
// executor's thread only: not locked.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "base/file.h"

namespace sluice::http_detail {

// Bodies are read in buffers this large and handed to sinks whole: few
// reads and sink calls per byte. A whole number of kPageCacheWriteBlock, so
// a file sink writes whole aligned blocks straight from it (see GetToFile).
inline constexpr size_t kBodyBufferBytes = 2 * 1024 * 1024;
static_assert(kBodyBufferBytes % kPageCacheWriteBlock == 0);

class BodyBufferPool {
 public:
  // A kBodyBufferBytes buffer from the free list (or new), given back when
  // destroyed. The pool must outlive it.
  class Buffer {
   public:
    explicit Buffer(BodyBufferPool& pool) : pool_(&pool) {
      if (pool_->free_.empty()) {
        buf_.reset(new char[kBodyBufferBytes]);
      } else {
        buf_ = std::move(pool_->free_.back());
        pool_->free_.pop_back();
      }
    }
    ~Buffer() {
      if (pool_->free_.size() < kMaxPooled) pool_->free_.push_back(std::move(buf_));
    }
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    char* data() { return buf_.get(); }

   private:
    BodyBufferPool* pool_;
    std::unique_ptr<char[]> buf_;
  };

 private:
  static constexpr size_t kMaxPooled = 32;
  std::vector<std::unique_ptr<char[]>> free_;
};

}  // namespace sluice::http_detail
