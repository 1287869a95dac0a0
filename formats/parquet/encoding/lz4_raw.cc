#include "formats/parquet/encoding/lz4_raw.h"

#include <lz4.h>

#include <exception>
#include <limits>

#include "base/exception_status.h"

namespace sluice::parquet {
namespace {

// A sequence's extra length bytes each add at most 255 output bytes, and
// nothing else in a block expands more.
constexpr uint64_t kMaxRatio = 255;
// LZ4's interface counts in int.
constexpr uint64_t kMaxSize = static_cast<uint64_t>(std::numeric_limits<int>::max()) - 1;

std::string Prefix(std::string_view what) { return std::string(what) + ": LZ4_RAW data"; }

}  // namespace

Status DecompressLz4RawInto(std::string_view data, uint64_t expected_size, std::string_view what,
                            std::string* out) {
  if (expected_size > kMaxRatio * data.size() || expected_size > kMaxSize ||
      data.size() > kMaxSize) {
    return CorruptError(Prefix(what) + " of " + std::to_string(data.size()) +
                        " bytes cannot decompress to " + std::to_string(expected_size) +
                        " bytes (an LZ4 block expands at most 255 times, to at most 2 GiB)");
  }
  try {
    // One spare byte tells "more than expected" from a corrupt block.
    out->resize(static_cast<size_t>(expected_size) + 1);
  } catch (...) {
    return StatusFromException(std::current_exception(),
                               Prefix(what) + " of " + std::to_string(data.size()) +
                                   " bytes, decompressing to " + std::to_string(expected_size));
  }
  const int n = LZ4_decompress_safe(data.data(), out->data(), static_cast<int>(data.size()),
                                    static_cast<int>(expected_size + 1));
  if (n < 0) {
    // liblz4 returns minus one minus the input position where it stopped;
    // a block larger than the buffer also stops there.
    return CorruptError(Prefix(what) + " is corrupt or truncated: liblz4 stopped at input offset " +
                        std::to_string(-(static_cast<int64_t>(n) + 1)) + " of " +
                        std::to_string(data.size()) + " (expected " +
                        std::to_string(expected_size) + " bytes of output)");
  }
  if (static_cast<uint64_t>(n) > expected_size) {
    return CorruptError(Prefix(what) + " decompresses to more than the expected " +
                        std::to_string(expected_size) + " bytes");
  }
  if (static_cast<uint64_t>(n) != expected_size) {
    return CorruptError(Prefix(what) + " decompresses to " + std::to_string(n) +
                        " bytes; expected exactly " + std::to_string(expected_size) +
                        " (the page header's uncompressed size)");
  }
  out->resize(static_cast<size_t>(expected_size));
  return Status::Ok();
}

Result<std::string> DecompressLz4Raw(std::string_view data, uint64_t expected_size,
                                     std::string_view what) {
  std::string out;
  SLUICE_RETURN_IF_ERROR(DecompressLz4RawInto(data, expected_size, what, &out));
  return out;
}

}  // namespace sluice::parquet
