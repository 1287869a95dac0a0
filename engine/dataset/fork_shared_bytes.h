// Bytes a process read on a guess, handed to the processes forked from it
// (a DataLoader's parent and its workers): an anonymous MAP_SHARED mapping
// made before any fork, decided once by its owner (the process that made
// it): published (a few pieces of bytes, copied in) or nothing. A child
// waits (Await, Claim) until the owner decides, stops, or is gone. Bytes
// one process at most can use are claimed (Claim): the first claimer
// copies them out, and their memory is given back at once rather than
// held for the owner's life.
//
// The word children wait on is a shared futex (not FUTEX_PRIVATE), in the
// mapping; a child's wait is cut at 20 ms to check its other reasons to
// stop. The owner never waits: nothing of it wakes after it decides.
//
// Ownership: Map's caller holds this in each process (a fork copies the
// handle; each process's destructor unmaps its own view only: the owner's
// and other children's stay). The views Await gives are into this
// process's view: valid until its destructor; the published bytes never
// change until claimed (a claimer's Claim is the end of every view).
//
// Thread safety: Publish and PublishNothing in the owner only, one thread
// at a time (the first to run decides; later ones change nothing). Await
// in processes forked after Map, from any threads; Claim there and in the
// owner once it has decided. The destructor must not run beside any other
// call of the same process.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string_view>
#include <vector>

namespace sluice {

class ForkSharedBytes {
 public:
  static constexpr size_t kMaxPieces = 4;
  using Pieces = std::vector<std::string_view>;

  // A mapping with room for `capacity` bytes (bounded by the caller), made
  // by this process (its owner); null when it could not be made.
  static std::unique_ptr<ForkSharedBytes> Map(uint64_t capacity);
  ~ForkSharedBytes();
  ForkSharedBytes(const ForkSharedBytes&) = delete;
  ForkSharedBytes& operator=(const ForkSharedBytes&) = delete;

  // The owner's: copies `pieces` (at most kMaxPieces, capacity bytes in
  // all) in and wakes the waiting children; false when the owner has
  // decided already, or when they do not fit (then nothing is published).
  bool Publish(const Pieces& pieces);
  // The owner's: children learn nothing is to come (unless it was
  // published already).
  void PublishNothing();

  // A child's: the published pieces, as Publish was given them, once the
  // owner has published; nullopt when it published nothing, they were
  // claimed, on a stop on `stop`, or once the owner process is gone.
  std::optional<Pieces> Await(std::stop_token stop = {});
  // The first claim of the published pieces, of any process (waited for
  // as Await): `take` is given them (views valid during the call only, to
  // copy out), then their memory is given back: every later Await and
  // Claim gets nothing. False, and `take` not called, where Await gives
  // nullopt.
  bool Claim(const std::function<void(const Pieces&)>& take, std::stop_token stop = {});

  // How many of the published bytes' pages are in memory now (mincore):
  // none before Publish and after a Claim.
  uint64_t ResidentPages() const;

  // The owner's: `before` runs in the owner process just before each of
  // its forks (pthread_atfork's prepare, on the forking thread), from the
  // first fork after this call until the destructor: an owner that
  // publishes only once a child may come (Forked) publishes there what it
  // holds. It must not fork or throw; it runs with the forks' registry
  // held (it must not call OnFork, nor destroy any ForkSharedBytes).
  // An empty `before` ends the hook (the caller's state it uses may go).
  void OnFork(std::function<void()> before);
  // The owner's: whether it has forked since Map (set before `before`
  // runs).
  bool Forked() const;

 private:
  struct Header;  // the word and the pieces' sizes (fork_shared_bytes.cc)
  ForkSharedBytes(Header* header, uint64_t capacity, size_t bytes_at, size_t mapped);
  // The state once decided (nullopt on a stop or the owner gone).
  std::optional<uint32_t> AwaitDecided(std::stop_token stop);
  Pieces PiecesPublished() const;
  char* bytes() const;

  friend struct ForkSharedBytesForks;  // the forks' registry (fork_shared_bytes.cc)
  std::function<void()> before_fork_;
  std::atomic<bool> forked_{false};
  Header* const header_;
  const uint64_t capacity_;
  const size_t bytes_at_;  // a page boundary: the bytes' pages are given back alone
  const size_t mapped_;
  const pid_t owner_;
};

}  // namespace sluice
