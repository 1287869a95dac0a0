// bz2: bzip2 streams as Python's bz2 module writes them (work factor 30).
// Concatenated streams are accepted; any other trailing byte is an error.
#include <bzlib.h>

#include <algorithm>

#include "formats/codec/codec_internal.h"

namespace sluice::codec_internal {

namespace {

constexpr std::string_view kBzip2Family = "bz2";

std::string Bzip2Message(int code) {
  switch (code) {
    case BZ_DATA_ERROR: return "data integrity error (BZ_DATA_ERROR)";
    case BZ_DATA_ERROR_MAGIC: return "bad stream magic, expected \"BZh\" (BZ_DATA_ERROR_MAGIC)";
    case BZ_PARAM_ERROR: return "bad stream parameters (BZ_PARAM_ERROR)";
    default: return "libbz2 error " + std::to_string(code);
  }
}

}  // namespace

Result<std::string> Bzip2Compress(std::string_view raw, int level) {
  bz_stream s{};
  if (BZ2_bzCompressInit(&s, level, 0, 0) != BZ_OK) {
    return InternalError("bz2: cannot initialise the compressor at level " +
                         std::to_string(level));
  }
  std::string out(std::min(raw.size() + raw.size() / 100 + 600, kMaxChunk), '\0');
  size_t in_pos = 0;
  size_t out_used = 0;
  int r = BZ_RUN_OK;
  while (true) {
    if (s.avail_in == 0 && in_pos < raw.size()) {
      const size_t n = std::min(raw.size() - in_pos, kMaxChunk);
      s.next_in = const_cast<char*>(raw.data() + in_pos);
      s.avail_in = static_cast<unsigned>(n);
      in_pos += n;
    }
    if (out_used == out.size()) out.resize(out.size() * 2);
    const size_t room = std::min(out.size() - out_used, kMaxChunk);
    s.next_out = out.data() + out_used;
    s.avail_out = static_cast<unsigned>(room);
    r = BZ2_bzCompress(&s, in_pos == raw.size() && s.avail_in == 0 ? BZ_FINISH : BZ_RUN);
    out_used += room - s.avail_out;
    if (r == BZ_STREAM_END || (r != BZ_RUN_OK && r != BZ_FINISH_OK)) break;
  }
  BZ2_bzCompressEnd(&s);
  if (r != BZ_STREAM_END) {
    return InternalError("bz2: compression at level " + std::to_string(level) +
                         " failed (" + std::to_string(r) + ")");
  }
  out.resize(out_used);
  return out;
}

Status Bzip2Decode(std::string_view data, BoundedOutput& out, std::string_view what) {
  const uint64_t max_output = out.max_output();
  bz_stream s{};
  if (BZ2_bzDecompressInit(&s, 0, 0) != BZ_OK) {
    return InternalError("bz2: cannot initialise the decompressor");
  }
  struct End {
    bz_stream* s;
    ~End() { BZ2_bzDecompressEnd(s); }
  } end{&s};

  size_t fed = 0;
  auto consumed = [&] { return fed - s.avail_in; };
  while (true) {
    if (s.avail_in == 0 && fed < data.size()) {
      const size_t n = std::min(data.size() - fed, kMaxChunk);
      s.next_in = const_cast<char*>(data.data() + fed);
      s.avail_in = static_cast<unsigned>(n);
      fed += n;
    }
    SLUICE_RETURN_IF_ERROR(out.Grow());
    if (out.free_size() == 0) return OutputTooLarge(what, kBzip2Family, max_output);
    const size_t room = std::min(out.free_size(), kMaxChunk);
    s.next_out = out.free_begin();
    s.avail_out = static_cast<unsigned>(room);
    const int r = BZ2_bzDecompress(&s);
    out.Commit(room - s.avail_out);
    if (out.exceeded()) return OutputTooLarge(what, kBzip2Family, max_output);
    if (r == BZ_STREAM_END) {
      const size_t pos = consumed();
      if (pos == data.size()) return Status::Ok();
      if (data.substr(pos, 3) != std::string_view("BZh").substr(0, std::min<size_t>(3, data.size() - pos))) {
        return TrailingData(what, kBzip2Family, pos, data.size(),
                            "expected another bzip2 stream (\"BZh\") or the end of the file");
      }
      // Another stream follows: start a fresh decoder on it.
      BZ2_bzDecompressEnd(&s);
      s = bz_stream{};
      if (BZ2_bzDecompressInit(&s, 0, 0) != BZ_OK) {
        return InternalError("bz2: cannot initialise the decompressor");
      }
      const size_t n = std::min(data.size() - pos, kMaxChunk);
      s.next_in = const_cast<char*>(data.data() + pos);
      s.avail_in = static_cast<unsigned>(n);
      fed = pos + n;
      continue;
    }
    if (r == BZ_OK) {
      if (s.avail_in == 0 && fed == data.size() && s.avail_out > 0) {
        return TruncatedData(what, kBzip2Family,
                             "the input ends (" + std::to_string(data.size()) +
                                 " bytes) before the end-of-stream marker, after " +
                                 std::to_string(out.produced()) + " output bytes");
      }
      continue;
    }
    if (r == BZ_MEM_ERROR) return InternalError("bz2: out of memory while decompressing");
    return CorruptData(what, kBzip2Family,
                       Bzip2Message(r) + " (near input offset " + std::to_string(consumed()) +
                           ")");
  }
}

}  // namespace sluice::codec_internal
