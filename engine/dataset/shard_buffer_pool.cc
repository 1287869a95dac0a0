#include "engine/dataset/shard_buffer_pool.h"

#include <atomic>
#include <cstdint>
#include <utility>

namespace sluice {
namespace {

std::atomic<uint64_t> process_allocated{0}, process_reused{0};

}  // namespace

size_t ShardBufferPool::RoomFor(size_t size) {
  const size_t step = size >= (size_t{4} << 20) ? (size_t{2} << 20) : (size_t{64} << 10);
  return size > SIZE_MAX - step ? size : (size + step - 1) / step * step;
}

namespace {

}  // namespace

struct ShardBufferPool::State {
  std::mutex mu;
  size_t keep = 0;
  // Reserved to `keep` entries, so that a return never allocates (it runs
  // in a deleter, which must not throw).
  std::vector<UninitializedBuffer> kept;
  Counters counters;

  // A returned buffer: kept while fewer than `keep` are; else it takes the
  // place of the smallest kept one if it is larger (a larger buffer holds
  // any shard a smaller one does: shards differ by a few bytes, and kept
  // ones too small for every later shard would never be taken again).
  // What is not kept is freed as it goes out of scope, after the lock
  // (UninitializedBuffer's recycling).
  void Return(UninitializedBuffer buffer) noexcept {
    std::lock_guard<std::mutex> lock(mu);
    if (kept.size() < keep && kept.size() < kept.capacity()) {
      kept.push_back(std::move(buffer));
      return;
    }
    size_t smallest = kept.size();
    for (size_t i = 0; i < kept.size(); ++i) {
      if (smallest == kept.size() || kept[i].size() < kept[smallest].size()) smallest = i;
    }
    if (smallest < kept.size() && kept[smallest].size() < buffer.size()) {
      std::swap(kept[smallest], buffer);
    }
  }
};

ShardBufferPool::ShardBufferPool(size_t keep) : state_(std::make_shared<State>()) { Keep(keep); }

ShardBufferPool::~ShardBufferPool() = default;

void ShardBufferPool::Keep(size_t keep) {
  std::vector<UninitializedBuffer> dropped;
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->keep = keep;
  while (state_->kept.size() > keep) {
    dropped.push_back(std::move(state_->kept.back()));
    state_->kept.pop_back();
  }
  state_->kept.reserve(keep);
}

Result<std::shared_ptr<UninitializedBuffer>> ShardBufferPool::Take(
    size_t size, std::string_view what, UninitializedBuffer::Pages pages) {
  std::unique_ptr<UninitializedBuffer> buffer;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    std::vector<UninitializedBuffer>& kept = state_->kept;
    size_t best = kept.size();
    for (size_t i = 0; i < kept.size(); ++i) {
      if (kept[i].size() >= size && (best == kept.size() || kept[i].size() < kept[best].size())) {
        best = i;
      }
    }
    if (best < kept.size()) {
      buffer = std::make_unique<UninitializedBuffer>(std::move(kept[best]));
      kept.erase(kept.begin() + static_cast<std::ptrdiff_t>(best));
      ++state_->counters.reused;
      ++process_reused;
    }
  }
  if (!buffer) {
    SLUICE_ASSIGN_OR_RETURN(UninitializedBuffer fresh,
                            UninitializedBuffer::Allocate(RoomFor(size), what, pages));
    buffer = std::make_unique<UninitializedBuffer>(std::move(fresh));
    std::lock_guard<std::mutex> lock(state_->mu);
    ++state_->counters.allocated;
    ++process_allocated;
  }
  // The deleter holds the pool's state weakly: a buffer that outlives the
  // pool is freed.
  std::weak_ptr<State> pool = state_;
  return std::shared_ptr<UninitializedBuffer>(
      buffer.release(), [pool = std::move(pool)](UninitializedBuffer* b) noexcept {
        std::unique_ptr<UninitializedBuffer> owned(b);
        if (std::shared_ptr<State> state = pool.lock()) state->Return(std::move(*owned));
      });
}

ShardBufferPool::Counters ShardBufferPool::counters() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->counters;
}

ShardBufferPool::Counters ShardBufferPool::ProcessCountersForTesting() {
  return Counters{process_allocated.load(), process_reused.load()};
}

}  // namespace sluice
