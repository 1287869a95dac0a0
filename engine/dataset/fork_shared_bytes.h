// Bytes a process read on a guess, handed to the processes forked from it
// (a DataLoader's parent and its workers): an anonymous MAP_SHARED mapping
// made before any fork, decided once by its owner (the process that made
// it): published (a few pieces of bytes, copied in) or nothing. A child
// may ask for them first (Want), for an owner that publishes only on
// demand, and waits (Await) until the owner decides, stops, or is gone.
//
// The words children and the owner wait on are shared futexes (not
// FUTEX_PRIVATE), in the mapping; every wait is cut at 20 ms to check the
// waiter's other reasons to stop.
//
// Ownership: Map's caller holds this in each process (a fork copies the
// handle; each process's destructor unmaps its own view only: the owner's
// and other children's stay). The views Await gives are into this
// process's view: valid until its destructor; the published bytes never
// change.
//
// Thread safety: Publish and PublishNothing in the owner only, one thread
// at a time (the first to run decides; later ones change nothing).
// AwaitWanted and StopAwaitingWanted in the owner, from any threads. Want
// and Await in processes forked after Map, from any threads. The
// destructor must not run beside any other call of the same process.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <stop_token>
#include <string_view>
#include <vector>

namespace sluice {

class ForkSharedBytes {
 public:
  static constexpr size_t kMaxPieces = 4;

  // A mapping with room for `capacity` bytes (bounded by the caller), made
  // by this process (its owner); null when it could not be made.
  static std::unique_ptr<ForkSharedBytes> Map(uint64_t capacity);
  ~ForkSharedBytes();
  ForkSharedBytes(const ForkSharedBytes&) = delete;
  ForkSharedBytes& operator=(const ForkSharedBytes&) = delete;

  // The owner's: copies `pieces` (at most kMaxPieces, capacity bytes in
  // all) in and wakes the waiting children; false when the owner has
  // decided already, or when they do not fit (then nothing is published).
  bool Publish(const std::vector<std::string_view>& pieces);
  // The owner's: children learn nothing is to come (unless it was
  // published already).
  void PublishNothing();
  // The owner's: until a child has asked (true), or StopAwaitingWanted
  // (false, even when a child had asked).
  bool AwaitWanted();
  void StopAwaitingWanted();

  // A child's: asks the owner for the bytes (wakes its AwaitWanted).
  void Want();
  // A child's: the published pieces, as Publish was given them, once the
  // owner has published; nullopt when it published nothing, on a stop on
  // `stop`, or once the owner process is gone.
  std::optional<std::vector<std::string_view>> Await(std::stop_token stop = {});

 private:
  struct Header;  // the words and the pieces' sizes (fork_shared_bytes.cc)
  ForkSharedBytes(Header* header, uint64_t capacity, size_t mapped);

  Header* const header_;
  const uint64_t capacity_;
  const size_t mapped_;
  const pid_t owner_;
};

}  // namespace sluice
