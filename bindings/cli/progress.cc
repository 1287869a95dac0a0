#include "bindings/cli/progress.h"

#include <unistd.h>

#include <cstdio>

namespace sluice::cli {

Progress::Progress(std::string label, uint64_t total)
    : label_(std::move(label)),
      total_(total),
      enabled_(::isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

Progress::~Progress() {
  if (enabled_) {
    Draw(true);
    std::fputc('\n', stderr);
  }
}

void Progress::Add(uint64_t n) {
  done_ += n;
  if (!enabled_) return;
  auto now = std::chrono::steady_clock::now();
  if (now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  Draw(false);
}

void Progress::Draw(bool /*final*/) {
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  double rate = secs > 0 ? static_cast<double>(done_) / secs : 0;
  if (total_ == 0) {
    std::fprintf(stderr, "\r%s %llu (%.0f/s)", label_.c_str(),
                 static_cast<unsigned long long>(done_), rate);
  } else {
    constexpr int kWidth = 30;
    double frac = done_ >= total_ ? 1.0 : static_cast<double>(done_) / static_cast<double>(total_);
    int filled = static_cast<int>(frac * kWidth);
    std::string bar(static_cast<size_t>(filled), '#');
    bar.resize(kWidth, '.');
    std::fprintf(stderr, "\r%s [%s] %3.0f%% %llu/%llu (%.0f/s)", label_.c_str(), bar.c_str(),
                 frac * 100, static_cast<unsigned long long>(done_),
                 static_cast<unsigned long long>(total_), rate);
  }
  std::fflush(stderr);
}

}  // namespace sluice::cli
