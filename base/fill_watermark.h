// How far a file being written is readable: the length of its prefix
// every byte of which has been written (the watermark), while the writer
// writes it in parts, in any order (a download's parallel ranged GETs).
// Readers wait for the watermark to pass what they need, then read those
// bytes through the watermark's own descriptor of the file, which stays
// valid whatever becomes of the file's name (renamed into a cache, or
// deleted after a failure).
//
// The writer (one download) calls Attach once it has created the file,
// Wrote after each write that completed, and Finish at the end; the owner
// of the download (not the writer, who may never have started) calls
// Finish in every case, so no reader waits for ever. A writer that can no
// longer vouch for what it reported (it rewrites the file from the start)
// calls Abandon: readers then get nothing more from it.
//
// Bytes below the watermark are those the writer wrote: no check of the
// whole file (its size, a hash) has happened yet; the caller says what a
// reader may make of them.
//
// The file is opened and read through an Env (base/env.h), the one owner of
// file-system calls, so a test double can fail its open or its reads.
//
// Thread-safe: the writer and any number of readers on any threads. Shared
// through std::shared_ptr by the writer and its readers.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>

#include "base/env.h"
#include "base/fd.h"
#include "base/status.h"

namespace sluice {

class FillWatermark {
 public:
  // `total`: the file's size when complete; `what` names it in errors
  // (a URL: no secret); `env` (outlives the object) opens and reads it.
  FillWatermark(uint64_t total, std::string what, Env* env = Env::Default())
      : total_(total), what_(std::move(what)), env_(env) {}
  FillWatermark(const FillWatermark&) = delete;
  FillWatermark& operator=(const FillWatermark&) = delete;

  // The writer: the file at `path` exists and is written from now on; opens
  // it for reading through the Env (a failure leaves the fill unreadable:
  // readers get nothing, as after Abandon, and wait for the whole file). A
  // second call is ignored.
  void Attach(const std::string& path);
  // The writer: bytes [offset, offset + length) are written.
  void Wrote(uint64_t offset, uint64_t length);
  // The writer: what was reported may no longer hold.
  void Abandon();
  // The owner: the write ended, with `status` (ok: the file is complete and
  // checked). Readers waiting are woken. Only the first call counts.
  void Finish(Status status);

  uint64_t total() const { return total_; }
  uint64_t watermark() const;

  // Bytes [offset, offset + length) of the file once the watermark passes
  // them: at once when it has, else (with `wait`) when it does. nullopt when
  // they will not come from here: not yet and no `wait`, the fill ended
  // before them (failed or abandoned: the file's owner reports why), it is
  // unreadable, or `stop` was requested (checked on every wake-up; a stop
  // callback wakes the wait). A range past `total` is kOutOfRange; a read
  // that fails is the Env's error (naming the file) with `what` as context. `blocked` (may be null): set to
  // true when the call waited (left alone otherwise).
  Result<std::optional<std::string>> Read(uint64_t offset, uint64_t length, bool wait,
                                          std::stop_token stop = {}, bool* blocked = nullptr);

 private:
  const uint64_t total_;
  const std::string what_;
  Env* const env_;
  std::string path_;  // Attach's
  mutable std::mutex mu_;
  std::condition_variable cv_;
  OwnedFd fd_;
  bool attached_ = false, ended_ = false, abandoned_ = false;
  uint64_t mark_ = 0;                     // every byte below it is written
  std::map<uint64_t, uint64_t> pending_;  // written ranges past mark_: begin -> end
};

}  // namespace sluice
