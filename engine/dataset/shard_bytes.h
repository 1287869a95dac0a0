// A single pass's shard in memory (StreamShards::Receive): either received
// into room that is never zero-filled, or a string already whole (a local
// file's bytes, a decompressed shard, a Parquet piece).
//
// The received kind's room is handed to the receiver (Room) and none of it
// can be read until the receiver says how many bytes came (Received): the
// view is of those bytes only, so no byte that was not received is ever
// read. Movable, not copyable; received bytes never move (views stay
// valid across moves), a short string of Of's may (view it where it is
// kept). Not thread-safe while it is being received. The room may be
// shared (SharedRoom) with readers of its parts as they arrive
// (ArrivedBytes): it is freed with its last holder.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"
#include "base/uninitialized_buffer.h"

namespace sluice {

class ShardBufferPool;

class ShardBytes {
 public:
  // The received kind's room is in small pages: its bytes arrive into
  // fresh memory and are held until their shard's last sample (every shard
  // of a shuffled pass at once), and a ranged read's room is touched only
  // where its samples land (UninitializedBuffer::Pages::kSmall says why).
  static constexpr UninitializedBuffer::Pages kPages = UninitializedBuffer::Pages::kSmall;

  ShardBytes() = default;
  // Room for `room` bytes of unspecified content, none readable yet: from
  // `pool` when given (a buffer a passed shard left there, else new; it
  // returns there with its last holder), else new. kIoError "<what>: out
  // of memory" when the system refuses.
  static Result<ShardBytes> Allocate(size_t room, std::string_view what,
                                     ShardBufferPool* pool = nullptr);
  // Bytes already whole: all readable.
  static ShardBytes Of(std::string bytes);

  // Where the receiver writes (room() bytes); null for Of's.
  char* Room() { return room_ ? room_->data() : nullptr; }
  size_t room() const { return room_ ? room_size_ : 0; }
  // The room, kept alive as long as the pointer is (null for Of's): for
  // ArrivedBytes::Attach, whose readers view the parts that arrived.
  std::shared_ptr<const char> SharedRoom() const;
  // The first `n` bytes (at most room()) were received: they are the
  // shard, and the only ones view() shows.
  void Received(size_t n);

  std::string_view view() const;
  size_t size() const { return view().size(); }

 private:
  bool received_kind_ = false;
  std::shared_ptr<UninitializedBuffer> room_;  // the received kind's (null once moved from)
  size_t room_size_ = 0;  // as asked: a pool's buffer may be larger
  size_t received_ = 0;
  std::string whole_;  // Of's
};

}  // namespace sluice
