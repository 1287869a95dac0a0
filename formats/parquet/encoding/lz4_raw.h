// LZ4_RAW: Parquet's LZ4 codec, one LZ4 block (the block format, no frame
// and no Hadoop framing) per page, decompressed with Debian's liblz4.
//
// The contract of formats/codec/compression.h's decoders: the caller passes
// the page header's uncompressed size, which it has bounded (by its own
// budget); this is additionally checked against what an LZ4 block of
// `data.size()` bytes can produce (at most 255 bytes per input byte) before
// anything is allocated, so a small page never makes a large buffer. The
// output must be exactly `expected_size` bytes.
//
// Errors, all kCorrupt and starting with "<what>: ":
//   "LZ4_RAW data of <n> bytes cannot decompress to <m> bytes (...)"
//   "LZ4_RAW data is corrupt or truncated: liblz4 stopped at input offset <k>"
//   "LZ4_RAW data decompresses to <k> bytes; expected exactly <m> ..."
//   "LZ4_RAW data decompresses to more than the expected <m> bytes"
// except when memory runs out: kIoError "<what>: LZ4_RAW ...: out of memory
// (std::bad_alloc)". Pure functions; thread-safe; never throw.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace sluice::parquet {

Result<std::string> DecompressLz4Raw(std::string_view data, uint64_t expected_size,
                                     std::string_view what);

// The same into `*out` (resized to expected_size; its capacity is reused,
// so a page reader can keep one buffer). On error `*out` holds garbage.
Status DecompressLz4RawInto(std::string_view data, uint64_t expected_size, std::string_view what,
                            std::string* out);

}  // namespace sluice::parquet
