// Internals shared by the compression families: one compress/decompress pair
// per family, a growable output buffer with a hard size limit, and the error
// texts every family uses. Not a public header: include compression.h.
// Pure functions; thread-safe.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/env.h"
#include "base/status.h"

namespace sluice::codec_internal {

class BoundedOutput;

// Levels are already validated by the caller (compression.cc). The streaming
// decoders (zstd, br, gz, bz2) write into `out`, in memory or spilled to a
// file (see BoundedOutput); snappy's raw blocks refer back anywhere in their
// output, so it decodes in memory only.
Result<std::string> ZstdCompress(std::string_view raw, int level);
Result<std::string> ZstdDecompress(std::string_view data, uint64_t max_output,
                                   std::string_view what);
Status ZstdDecode(std::string_view data, BoundedOutput& out, std::string_view what);
// Into out[0, capacity) with libzstd's one-shot decoder; on failure the
// error is ZstdDecompress's.
Result<uint64_t> ZstdDecompressInto(std::string_view data, char* out, uint64_t capacity,
                                    std::string_view what);
Result<std::string> BrotliCompress(std::string_view raw, int quality);
Status BrotliDecode(std::string_view data, BoundedOutput& out, std::string_view what);
Result<std::string> GzipCompress(std::string_view raw, int level);
Status GzipDecode(std::string_view data, BoundedOutput& out, std::string_view what);
Result<std::string> Bzip2Compress(std::string_view raw, int level);
Status Bzip2Decode(std::string_view data, BoundedOutput& out, std::string_view what);
Result<std::string> SnappyCompress(std::string_view raw);
Result<std::string> SnappyDecompress(std::string_view data, uint64_t max_output,
                                     std::string_view what);
// Into out[0, capacity): no output buffer of its own, none zero-filled.
Result<uint64_t> SnappyDecompressInto(std::string_view data, char* out, uint64_t capacity,
                                      std::string_view what);

// zlib and bzip2 count bytes in 32-bit fields: feed them at most this much.
inline constexpr size_t kMaxChunk = size_t{1} << 30;

// Output of a streaming decoder, in memory or spilled to a file. It takes at
// most max_output + 1 bytes: one
// byte of room past the limit lets any decoder prove it has too much to say,
// whatever its end-of-stream bookkeeping. Neither max_output nor a size a
// header declares is ever allocated up front: both are untrusted (a 17-byte
// zstd frame may declare 1 TiB, a 14 MB gz of zeros expands 1000-fold). In
// memory, the first buffer is StartSize(input_size) (capped by max_output + 1, or by
// `declared` + 1 when the stream states its size), and it then grows only
// when the decoder has filled it, to the next of (max_output + 1) / 2^j at
// least twice its size. So memory follows the output that actually arrives:
// the buffer is under 4x the bytes produced (or the start), and filling the
// cap costs at most 1.5x (max_output + 1) during the last copy.
class BoundedOutput {
 public:
  // The first buffer for an input of `input_size` bytes: kStartRatio times
  // the input (bytes the caller already holds, so the cost is proportional
  // to memory in use), at least 64 KiB.
  static uint64_t StartSize(uint64_t input_size);
  static constexpr uint64_t kStartRatio = 4;  // typical of shard data
  // The buffer of a spilling output: what it writes to its file at a time.
  static constexpr size_t kSpillChunk = size_t{1} << 20;

  // In memory: the output is Take()n at the end.
  BoundedOutput(uint64_t max_output, uint64_t input_size,
                uint64_t declared = UINT64_MAX);
  // Spilling: a buffer of kSpillChunk bytes (or max_output + 1 if smaller)
  // is written to `fd` (at its offset; not owned) each time it fills, and by
  // Flush() at the end, so memory stays at one chunk whatever the output.
  // `path` names the file in write errors; the writes go through `env`.
  BoundedOutput(uint64_t max_output, int fd, std::string path, Env* env);

  // Ensures free space after the produced bytes (unless the hard cap of
  // max_output + 1 is reached, then free_size() stays 0): in memory by
  // growing the buffer, spilling by writing it out. Errors: a failed write
  // (kIoError naming the path).
  Status Grow();
  char* free_begin() { return buf_.data() + held_; }
  size_t free_size() const {
    return static_cast<size_t>(std::min<uint64_t>(buf_.size() - held_, cap_ - produced()));
  }
  void Commit(size_t n) { held_ += n; }

  uint64_t max_output() const { return max_output_; }
  uint64_t produced() const { return written_ + held_; }
  bool exceeded() const { return produced() > max_output_; }

  // In memory: the produced bytes; the object is left empty.
  std::string Take();
  // Spilling: writes the bytes still held.
  Status Flush();

 private:
  uint64_t max_output_;
  size_t cap_;  // max_output + 1, clamped to what a string can hold
  size_t held_ = 0;       // bytes in buf_
  uint64_t written_ = 0;  // bytes already written to fd_ (spilling)
  std::string buf_;
  int fd_ = -1;  // >= 0: spilling
  std::string path_;
  Env* env_ = nullptr;
};

// "<what>: <family> data is corrupt: <detail>" (kCorrupt).
Status CorruptData(std::string_view what, std::string_view family,
                   std::string_view detail);
// "<what>: <family> data is truncated: <detail>" (kCorrupt).
Status TruncatedData(std::string_view what, std::string_view family,
                     std::string_view detail);
// "<what>: <family> data decompresses to more than <max> bytes (the expected
// raw size)" (kCorrupt).
Status OutputTooLarge(std::string_view what, std::string_view family,
                      uint64_t max_output);
// "<what>: <n> bytes of trailing data after the <family> stream that ends at
// offset <end> (<expected>)" (kCorrupt).
Status TrailingData(std::string_view what, std::string_view family, uint64_t end,
                    uint64_t total, std::string_view expected);

}  // namespace sluice::codec_internal
