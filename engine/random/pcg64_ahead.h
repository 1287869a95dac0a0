// Pcg64Ahead: one Pcg64's words made on a second thread, ahead of a
// Pcg64Stream that reads them (Pcg64Stream::Attach). The word stream from a
// given state is fixed, so a reader that consumes long contiguous runs (an
// epoch's shuffle draws replayed: planner's PlanCheckpoints) can have them
// computed beside it; it spends its own time only testing them.
//
// Words are made in blocks of kWords into a ring of kSlots blocks, at most
// that far ahead of the reader. Start() moves the maker to another state
// (what was made ahead is dropped); Stop() parks it.
//
// Thread safety: one reader thread calls Start, Next, Stop and status; the
// maker thread is the object's own, started by the first Start and joined by
// the destructor. An exception on the maker thread (or failing to start it)
// is kept as status() and ends the making: Next() then returns nullptr, and
// a Pcg64Stream falls back to making its words itself, so the words read
// stay right and the caller learns of the failure from status().
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>

#include "base/status.h"
#include "engine/random/numpy_random.h"

namespace sluice::numpy {

class Pcg64Ahead {
 public:
  static constexpr size_t kWords = 4096;  // a block: 32 KiB
  static constexpr size_t kSlots = 16;    // the ring: 512 KiB
  struct Block {
    unsigned __int128 before = 0, after = 0;  // the state before words[0] and after the last
    uint64_t words[kWords];
  };

  // How a block's words are made: `gen`'s next kWords words into `words`,
  // `gen` left after them. The default is FillWords (Pcg64::Fill); tests
  // pass one that throws.
  using MakeFn = void (*)(Pcg64& gen, uint64_t* words);
  static void FillWords(Pcg64& gen, uint64_t* words);

  explicit Pcg64Ahead(MakeFn make = &FillWords) : make_(make) {}
  ~Pcg64Ahead();
  Pcg64Ahead(const Pcg64Ahead&) = delete;
  Pcg64Ahead& operator=(const Pcg64Ahead&) = delete;

  // Drops every block made or held and makes the words that follow `from`
  // (its 32-bit half is the reader's business). Blocks returned before are
  // invalid from here on.
  void Start(const Pcg64& from);
  // The next block in order, held by the reader until its next call of
  // Next, Start or Stop; waits for it to be made. nullptr when the maker
  // failed (status()) or is stopped.
  const Block* Next();
  // Parks the maker (nothing more is made until Start).
  void Stop();
  // Ok, or why the words stopped being made ahead.
  Status status() const;

 private:
  void Run();

  mutable std::mutex mu_;
  std::condition_variable maker_cv_, reader_cv_;
  const MakeFn make_;
  std::thread maker_;
  std::unique_ptr<Block[]> ring_;  // kSlots blocks, allocated by the first Start
  uint64_t run_ = 0;          // Start() count: a run's blocks are numbered from 0
  uint64_t made_ = 0;         // blocks of the current run made
  uint64_t taken_ = 0;        // blocks of the current run the reader has moved past
  bool holding_ = false;      // the reader holds block taken_
  bool active_ = false;       // a run is wanted
  bool quit_ = false;
  bool maker_waiting_ = false, reader_waiting_ = false;
  unsigned __int128 from_ = 0, inc_ = 0;
  Status status_;
};

}  // namespace sluice::numpy
