// Which byte ranges of a buffer being filled have arrived, and the bytes
// themselves once they have: the receiver fills the buffer in parts, in any
// order (a single pass's shard, received as several ranged reads at once),
// and readers wait for the range they need, then view it where it lies.
// The memory counterpart of FillWatermark (a file being written): here
// every range is tracked, not only the prefix, so a reader of bytes a late
// part holds need not wait for the parts before it.
//
// The receiver calls Attach once it has the buffer, Arrived after each
// part whose bytes are all written, and Abandon when it gives this buffer
// up for another (a new attempt). The owner of the receive (who may never
// have started the receiver) calls Finish in every case, so no reader
// waits for ever: with ok, every byte of `total` has arrived; with an
// error, readers of a range that had not arrived get that error, with
// which bytes they waited for and from where.
//
// Bytes reported as arrived are those the receiver wrote: no check of the
// whole (its size, a hash) has happened yet; the caller says what a reader
// may make of them.
//
// Thread-safe: the receiver and any number of readers on any threads.
// Shared through std::shared_ptr by the receiver and its readers; the
// buffer Attach was given lives as long as this object, so a view Await
// returns is valid while the caller holds it (the bytes of a range never
// change once reported).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>

#include "base/status.h"

namespace sluice {

class ArrivedBytes {
 public:
  // `total`: how many bytes the buffer holds when complete; `what` names
  // the source in errors (a URL: no secret).
  ArrivedBytes(uint64_t total, std::string what) : total_(total), what_(std::move(what)) {}
  ArrivedBytes(const ArrivedBytes&) = delete;
  ArrivedBytes& operator=(const ArrivedBytes&) = delete;

  // The receiver: the buffer, `total` bytes at least, written from now on.
  // A second call is ignored.
  void Attach(std::shared_ptr<const char> buffer);
  // The receiver: bytes [offset, offset + length) are all written (a range
  // past `total` is cut there).
  void Arrived(uint64_t offset, uint64_t length);
  // The receiver: this buffer is given up (the receive goes on into
  // another): readers get nothing more from here, and look again.
  void Abandon();
  // The owner: the receive ended with `status` (ok: all of `total` came,
  // and was checked as the owner checks it). Only the first call counts.
  void Finish(Status status);

  uint64_t total() const { return total_; }
  const std::string& what() const { return what_; }
  // How many bytes have arrived, in all.
  uint64_t arrived() const;

  // Bytes [offset, offset + length) once all of them have arrived: at once
  // when they have, else (with `wait`) when they do. nullopt when they will
  // not come from here: not yet and no `wait`, the buffer was abandoned, or
  // `stop` was requested (checked on every wake-up; a stop callback wakes
  // the wait). Errors: a range past `total` is kOutOfRange; a receive that
  // Finished with an error before the range arrived gives that error with
  // "<what>: bytes <offset>..<offset + length> did not arrive" as context;
  // one that Finished ok without them (its owner's checks were wrong) is
  // kInternal. `blocked` (may be null): set to true when the call waited
  // (left alone otherwise).
  Result<std::optional<std::string_view>> Await(uint64_t offset, uint64_t length, bool wait,
                                                std::stop_token stop = {},
                                                bool* blocked = nullptr);

 private:
  // Whether [offset, end) lies within one arrived range (under mu_).
  bool Has(uint64_t offset, uint64_t end) const;

  const uint64_t total_;
  const std::string what_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::shared_ptr<const char> buffer_;  // Attach's
  bool ended_ = false, abandoned_ = false;
  Status end_status_ = Status::Ok();
  uint64_t arrived_ = 0;                 // the bytes in ranges_
  std::map<uint64_t, uint64_t> ranges_;  // arrived, disjoint, not touching: begin -> end
};

}  // namespace sluice
