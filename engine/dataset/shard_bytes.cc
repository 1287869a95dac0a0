#include "engine/dataset/shard_bytes.h"

#include <algorithm>
#include <utility>

#include "engine/dataset/shard_buffer_pool.h"

namespace sluice {

Result<ShardBytes> ShardBytes::Allocate(size_t room, std::string_view what,
                                        ShardBufferPool* pool) {
  ShardBytes out;
  out.received_kind_ = true;
  out.room_size_ = room;
  // At least one byte: an empty allocation may be no buffer at all.
  const size_t asked = std::max<size_t>(room, 1);
  if (pool != nullptr) {
    SLUICE_ASSIGN_OR_RETURN(out.room_, pool->Take(asked, what, kPages));
    return out;
  }
  SLUICE_ASSIGN_OR_RETURN(UninitializedBuffer buffer,
                          UninitializedBuffer::Allocate(asked, what, kPages));
  out.room_ = std::make_shared<UninitializedBuffer>(std::move(buffer));
  return out;
}

ShardBytes ShardBytes::Of(std::string bytes) {
  ShardBytes out;
  out.whole_ = std::move(bytes);
  return out;
}

void ShardBytes::Received(size_t n) { received_ = std::min(n, room()); }

std::shared_ptr<const char> ShardBytes::SharedRoom() const {
  if (!room_) return nullptr;
  // Aliasing: owns the buffer, points at its bytes.
  return std::shared_ptr<const char>(room_, room_->data());
}

std::string_view ShardBytes::view() const {
  if (!received_kind_) return whole_;
  if (!room_) return {};
  return std::string_view(room_->data(), received_);
}

}  // namespace sluice
