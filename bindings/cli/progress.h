// A one-line progress bar on stderr, drawn only when stderr is a terminal
// (so logs and pipes stay clean). Not thread-safe: one owner thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace sluice::cli {

class Progress {
 public:
  // `total` = 0 means unknown (a counter without a bar).
  Progress(std::string label, uint64_t total);
  ~Progress();  // finishes the line
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void Add(uint64_t n);  // redraws at most ~10 times per second

 private:
  void Draw(bool final);
  std::string label_;
  uint64_t total_;
  uint64_t done_ = 0;
  bool enabled_;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace sluice::cli
