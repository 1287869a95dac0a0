// gz: gzip members (RFC 1952) as Python's gzip module writes and reads them.
// Like gzip.decompress, several members may follow each other and NUL
// padding between or after them is skipped; any other trailing byte is an
// error.
#include <zlib.h>

#include <algorithm>

#include "formats/codec/codec_internal.h"

namespace sluice::codec_internal {

namespace {

constexpr std::string_view kGzipFamily = "gz";
constexpr int kGzipWindowBits = 16 + MAX_WBITS;  // 16: gzip wrapper, not zlib

std::string ZlibMessage(const z_stream& z, int code) {
  if (z.msg != nullptr) return z.msg;
  return "zlib error " + std::to_string(code);
}

}  // namespace

Result<std::string> GzipCompress(std::string_view raw, int level) {
  z_stream z{};
  if (deflateInit2(&z, level, Z_DEFLATED, kGzipWindowBits, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return InternalError("gz: cannot initialise deflate at level " + std::to_string(level));
  }
  // Header as Python's gzip.compress writes it when given a write time (as
  // Mosaic's writer does): no name, OS 255 "unknown"; but mtime 0, so the
  // output is reproducible.
  gz_header header{};
  header.os = 255;
  if (deflateSetHeader(&z, &header) != Z_OK) {
    deflateEnd(&z);
    return InternalError("gz: cannot set the gzip header");
  }
  std::string out;
  size_t in_pos = 0;
  size_t out_used = 0;
  int r = Z_OK;
  out.resize(std::min<size_t>(deflateBound(&z, std::min(raw.size(), kMaxChunk)) + 64,
                              kMaxChunk));
  do {
    if (z.avail_in == 0 && in_pos < raw.size()) {
      const size_t n = std::min(raw.size() - in_pos, kMaxChunk);
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data() + in_pos));
      z.avail_in = static_cast<uInt>(n);
      in_pos += n;
    }
    if (out_used == out.size()) out.resize(out.size() * 2);
    const size_t room = std::min(out.size() - out_used, kMaxChunk);
    z.next_out = reinterpret_cast<Bytef*>(out.data() + out_used);
    z.avail_out = static_cast<uInt>(room);
    r = deflate(&z, in_pos == raw.size() ? Z_FINISH : Z_NO_FLUSH);
    out_used += room - z.avail_out;
  } while (r == Z_OK || r == Z_BUF_ERROR);
  deflateEnd(&z);
  if (r != Z_STREAM_END) {
    return InternalError("gz: deflate at level " + std::to_string(level) + " failed (" +
                         std::to_string(r) + ")");
  }
  out.resize(out_used);
  // XFL as Python sets it (zlib says 4, "fast", for level 0 too).
  out[8] = static_cast<char>(level == 9 ? 2 : level == 1 ? 4 : 0);
  return out;
}

Status GzipDecode(std::string_view data, BoundedOutput& out, std::string_view what) {
  const uint64_t max_output = out.max_output();
  z_stream z{};
  if (inflateInit2(&z, kGzipWindowBits) != Z_OK) {
    return InternalError("gz: cannot initialise inflate");
  }
  struct End {
    z_stream* z;
    ~End() { inflateEnd(z); }
  } end{&z};

  size_t fed = 0;  // input bytes handed to zlib so far
  auto consumed = [&] { return fed - z.avail_in; };
  while (true) {
    if (z.avail_in == 0 && fed < data.size()) {
      const size_t n = std::min(data.size() - fed, kMaxChunk);
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data() + fed));
      z.avail_in = static_cast<uInt>(n);
      fed += n;
    }
    SLUICE_RETURN_IF_ERROR(out.Grow());
    if (out.free_size() == 0) return OutputTooLarge(what, kGzipFamily, max_output);
    const size_t room = std::min(out.free_size(), kMaxChunk);
    z.next_out = reinterpret_cast<Bytef*>(out.free_begin());
    z.avail_out = static_cast<uInt>(room);
    const int r = inflate(&z, Z_NO_FLUSH);
    out.Commit(room - z.avail_out);
    if (out.exceeded()) return OutputTooLarge(what, kGzipFamily, max_output);
    if (r == Z_STREAM_END) {
      // A member ended: skip NUL padding, then only another member may follow.
      size_t pos = consumed();
      const size_t member_end = pos;
      while (pos < data.size() && data[pos] == '\0') ++pos;
      if (pos == data.size()) return Status::Ok();
      const bool magic = static_cast<unsigned char>(data[pos]) == 0x1f &&
                         (pos + 1 == data.size() ||
                          static_cast<unsigned char>(data[pos + 1]) == 0x8b);
      if (!magic) {
        return TrailingData(what, kGzipFamily, member_end, data.size(),
                            "expected another gzip member (1f 8b) or the end of the file");
      }
      if (inflateReset(&z) != Z_OK) return InternalError("gz: cannot reset inflate");
      const size_t n = std::min(data.size() - pos, kMaxChunk);
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data() + pos));
      z.avail_in = static_cast<uInt>(n);
      fed = pos + n;
      continue;
    }
    if (r == Z_OK || r == Z_BUF_ERROR) {
      // Output room left and every input byte taken: the member is cut short.
      if (z.avail_in == 0 && fed == data.size() && z.avail_out > 0) {
        return TruncatedData(what, kGzipFamily,
                             "the input ends (" + std::to_string(data.size()) +
                                 " bytes) before the end of the gzip member, after " +
                                 std::to_string(out.produced()) + " output bytes");
      }
      continue;
    }
    if (r == Z_MEM_ERROR) return InternalError("gz: out of memory while inflating");
    return CorruptData(what, kGzipFamily,
                       ZlibMessage(z, r) + " (near input offset " +
                           std::to_string(consumed()) + ")");
  }
}

}  // namespace sluice::codec_internal
