#include "engine/dataset/shard_bytes.h"

#include <algorithm>
#include <utility>

namespace sluice {

Result<ShardBytes> ShardBytes::Allocate(size_t room, std::string_view what) {
  ShardBytes out;
  out.received_kind_ = true;
  // At least one byte: an empty allocation may be no buffer at all.
  SLUICE_ASSIGN_OR_RETURN(UninitializedBuffer buffer,
                          UninitializedBuffer::Allocate(std::max<size_t>(room, 1), what));
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
