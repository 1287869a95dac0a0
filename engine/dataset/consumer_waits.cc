#include "engine/dataset/consumer_waits.h"

#include <algorithm>

namespace sluice {

void ConsumerWaits::Add(std::chrono::steady_clock::time_point start,
                        std::chrono::steady_clock::time_point end, const ShardOpenTiming* timing) {
  using std::chrono::nanoseconds;
  if (end <= start) return;
  const auto whole = std::chrono::duration_cast<nanoseconds>(end - start).count();
  total_ns += static_cast<uint64_t>(whole);
  if (timing == nullptr || timing->end <= timing->start) {
    other_ns += static_cast<uint64_t>(whole);
    return;
  }
  // The open's steps end to end; the last (decode) runs to the open's end.
  const auto overlap = [&](std::chrono::steady_clock::time_point from,
                           std::chrono::steady_clock::time_point to) -> uint64_t {
    const auto a = std::max(from, start), b = std::min(to, end);
    return b > a ? static_cast<uint64_t>(std::chrono::duration_cast<nanoseconds>(b - a).count())
                 : 0;
  };
  auto t = timing->start;
  const auto step = [&](nanoseconds took) {
    const auto from = t;
    t = std::min(timing->end,
                 t + std::chrono::duration_cast<std::chrono::steady_clock::duration>(took));
    return overlap(from, t);
  };
  const uint64_t peer = step(timing->peer_fetch);
  const uint64_t room = step(timing->room);
  const uint64_t download = step(timing->download);
  const uint64_t decode = overlap(t, timing->end);
  peer_download_ns += peer;
  cache_room_ns += room;
  download_ns += download;
  decode_ns += decode;
  const uint64_t named = peer + room + download + decode;
  other_ns += static_cast<uint64_t>(whole) > named ? static_cast<uint64_t>(whole) - named : 0;
}

void ConsumerWaits::Add(const ConsumerWaits& o) {
  total_ns += o.total_ns;
  download_ns += o.download_ns;
  peer_download_ns += o.peer_download_ns;
  cache_room_ns += o.cache_room_ns;
  decode_ns += o.decode_ns;
  other_ns += o.other_ns;
}

}  // namespace sluice
