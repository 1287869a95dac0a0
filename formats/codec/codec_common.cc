#include <algorithm>
#include <limits>

#include "base/file.h"

#include "formats/codec/codec_internal.h"

namespace sluice::codec_internal {

namespace {
constexpr uint64_t kMinStart = 64 * 1024;
}  // namespace

uint64_t BoundedOutput::StartSize(uint64_t input_size) {
  const uint64_t scaled =
      input_size > UINT64_MAX / kStartRatio ? UINT64_MAX : input_size * kStartRatio;
  return std::max(scaled, kMinStart);
}

BoundedOutput::BoundedOutput(uint64_t max_output, uint64_t input_size, uint64_t declared)
    : max_output_(max_output) {
  const uint64_t limit = std::numeric_limits<size_t>::max() / 4;
  cap_ = static_cast<size_t>(std::min(max_output, limit) + 1);
  const uint64_t start =
      std::min(StartSize(input_size), declared == UINT64_MAX ? declared : declared + 1);
  buf_.resize(static_cast<size_t>(std::min<uint64_t>(cap_, std::max<uint64_t>(start, 1))));
}

BoundedOutput::BoundedOutput(uint64_t max_output, int fd, std::string path, Env* env)
    : max_output_(max_output), fd_(fd), path_(std::move(path)), env_(env) {
  const uint64_t limit = std::numeric_limits<size_t>::max() / 4;
  cap_ = static_cast<size_t>(std::min(max_output, limit) + 1);
  buf_.resize(std::min(kSpillChunk, cap_));
}

Status BoundedOutput::Grow() {
  if (held_ < buf_.size() || produced() >= cap_) return Status::Ok();
  if (fd_ >= 0) return Flush();
  // The next size is cap >> j, the smallest such at least twice the current
  // one: the last step is from at most cap / 2 to cap, so a bomb that fills
  // the cap peaks at 1.5 x cap while the old buffer is copied (doubling from
  // just under the cap would reach 2 x cap).
  size_t next = cap_;
  while (next / 2 >= 2 * buf_.size()) next /= 2;
  buf_.resize(next);
  return Status::Ok();
}

Status BoundedOutput::Flush() {
  SLUICE_RETURN_IF_ERROR(env_->WriteAll(fd_, path_, std::string_view(buf_.data(), held_)));
  written_ += held_;
  held_ = 0;
  return Status::Ok();
}

std::string BoundedOutput::Take() {
  buf_.resize(held_);
  held_ = 0;
  return std::move(buf_);
}

Status CorruptData(std::string_view what, std::string_view family,
                   std::string_view detail) {
  return CorruptError(std::string(what) + ": " + std::string(family) +
                      " data is corrupt: " + std::string(detail));
}

Status TruncatedData(std::string_view what, std::string_view family,
                     std::string_view detail) {
  return CorruptError(std::string(what) + ": " + std::string(family) +
                      " data is truncated: " + std::string(detail));
}

Status OutputTooLarge(std::string_view what, std::string_view family,
                      uint64_t max_output) {
  return CorruptError(std::string(what) + ": " + std::string(family) +
                      " data decompresses to more than " + std::to_string(max_output) +
                      " bytes (the expected raw size)");
}

Status TrailingData(std::string_view what, std::string_view family, uint64_t end,
                    uint64_t total, std::string_view expected) {
  return CorruptError(std::string(what) + ": " + std::to_string(total - end) +
                      " bytes of trailing data after the " + std::string(family) +
                      " stream that ends at offset " + std::to_string(end) + " (" +
                      std::string(expected) + ")");
}

}  // namespace sluice::codec_internal
