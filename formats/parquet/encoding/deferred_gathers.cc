#include "formats/parquet/encoding/deferred_gathers.h"

#include <algorithm>
#include <cstring>
#include <functional>

namespace sluice::parquet {

bool DeferredGathers::Add(char* dst, std::span<const std::string_view> segments) {
  if (!values_.empty() && !std::less<const char*>()(values_.back().dst, dst)) return false;
  if (blocks_.empty() || blocks_.back().capacity() - blocks_.back().size() < segments.size()) {
    blocks_.emplace_back();
    blocks_.back().reserve(std::max(kBlock, segments.size()));
  }
  std::vector<std::string_view>& block = blocks_.back();
  const std::string_view* at = block.data() + block.size();
  block.insert(block.end(), segments.begin(), segments.end());  // within its capacity
  values_.push_back(Value{dst, at, segments.size()});
  state_.emplace_back(uint8_t{0});
  return true;
}

void DeferredGathers::Truncate(size_t n) {
  if (n >= values_.size()) return;
  const std::string_view* from = values_[n].segments_at;
  // The blocks from the one that holds value n's segments on.
  const std::less_equal<const std::string_view*> le;
  while (!blocks_.empty() && !(le(blocks_.back().data(), from) &&
                               le(from, blocks_.back().data() + blocks_.back().size()))) {
    blocks_.pop_back();
  }
  if (!blocks_.empty()) blocks_.back().resize(static_cast<size_t>(from - blocks_.back().data()));
  values_.resize(n);
  state_.resize(n);
}

void DeferredGathers::Gather(size_t i) const {
  std::atomic<uint8_t>& state = state_[i];
  if (state.load(std::memory_order_acquire) == 2) return;
  uint8_t expected = 0;
  if (state.compare_exchange_strong(expected, 1, std::memory_order_acquire)) {
    const Value& v = values_[i];
    char* dst = v.dst;
    for (uint64_t k = 0; k < v.segments; ++k) {
      const std::string_view s = v.segments_at[k];
      std::memcpy(dst, s.data(), s.size());
      dst += s.size();
    }
    state.store(2, std::memory_order_release);
    state.notify_all();
    return;
  }
  // Another thread is copying it.
  while (expected != 2) {
    state.wait(expected, std::memory_order_acquire);
    expected = state.load(std::memory_order_acquire);
  }
}

size_t DeferredGathers::Find(std::string_view value) const {
  if (values_.empty() || value.empty()) return values_.size();
  auto it = std::lower_bound(values_.begin(), values_.end(), value.data(),
                             [](const Value& v, const char* p) { return std::less<const char*>()(v.dst, p); });
  if (it == values_.end() || it->dst != value.data()) return values_.size();
  return static_cast<size_t>(it - values_.begin());
}

void DeferredGathers::Ensure(std::string_view value) const {
  const size_t i = Find(value);
  if (i < values_.size()) Gather(i);
}

Result<std::string_view> DeferredGathers::Transient(std::string_view value,
                                                   UninitializedBuffer* scratch) const {
  const size_t i = Find(value);
  if (i == values_.size() || state_[i].load(std::memory_order_acquire) == 2) {
    return value;  // not deferred, or in place already
  }
  const Value& v = values_[i];
  if (scratch->size() < value.size()) {
    SLUICE_ASSIGN_OR_RETURN(*scratch, UninitializedBuffer::Allocate(value.size(), "a value's scratch"));
  }
  // The segments add up to the value (Add's contract); never past it.
  char* dst = scratch->data();
  size_t left = value.size();
  for (uint64_t k = 0; k < v.segments && left > 0; ++k) {
    const std::string_view s = v.segments_at[k];
    const size_t take = std::min(s.size(), left);
    std::memcpy(dst, s.data(), take);
    dst += take;
    left -= take;
  }
  return std::string_view(scratch->data(), value.size());
}

std::span<const std::string_view> DeferredGathers::Pieces(std::string_view value) const {
  const size_t i = Find(value);
  if (i == values_.size() || state_[i].load(std::memory_order_acquire) == 2) return {};
  const Value& v = values_[i];
  return std::span<const std::string_view>(v.segments_at, v.segments);
}

void DeferredGathers::GatherAll() const {
  for (size_t i = 0; i < values_.size(); ++i) Gather(i);
}

}  // namespace sluice::parquet
