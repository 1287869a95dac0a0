// zstd: standard frames (python-zstd's format). Concatenated and skippable
// frames are accepted, as libzstd's own decoder does.
#include <zstd.h>

#include <cstring>
#include <memory>

#include "formats/codec/codec_internal.h"

namespace sluice::codec_internal {

namespace {

constexpr std::string_view kZstdFamily = "zstd";

struct DCtxFree {
  void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
};
struct CCtxFree {
  void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};

std::string ErrorName(size_t code) { return ZSTD_getErrorName(code); }

// Streaming decode: used when the frame does not state its size, states
// more than the input can be trusted for, holds several frames, or is
// damaged (this path gives the precise error), and for every spilled output.
Status StreamDecode(ZSTD_DCtx* dctx, std::string_view data, BoundedOutput& out,
                    std::string_view what) {
  const uint64_t max_output = out.max_output();
  ZSTD_inBuffer in{data.data(), data.size(), 0};
  size_t hint = 1;               // 0 = the last frame is complete
  uint64_t frame_end = 0;        // input offset where the last complete frame ends
  bool had_frame = false;
  while (true) {
    SLUICE_RETURN_IF_ERROR(out.Grow());
    if (out.free_size() == 0) return OutputTooLarge(what, kZstdFamily, max_output);
    ZSTD_outBuffer ob{out.free_begin(), out.free_size(), 0};
    const size_t r = ZSTD_decompressStream(dctx, &ob, &in);
    out.Commit(ob.pos);
    if (ZSTD_isError(r)) {
      if (had_frame && hint == 0) {
        return TrailingData(what, kZstdFamily, frame_end, data.size(),
                            "expected another zstd frame or the end of the file; " +
                                ErrorName(r));
      }
      // libzstd does not advance in.pos on error: name the frame instead.
      return CorruptData(what, kZstdFamily,
                         ErrorName(r) + " (in the frame at input offset " +
                             std::to_string(frame_end) + ")");
    }
    if (out.exceeded()) return OutputTooLarge(what, kZstdFamily, max_output);
    hint = r;
    if (r == 0) {
      had_frame = true;
      frame_end = in.pos;
    }
    // Done once all input is in and the decoder left output room unused, or
    // flushed a whole frame (0) that ends exactly at the buffer's end: asked
    // again, it would expect the next frame's header and overwrite `hint`.
    if (in.pos == in.size && (ob.pos < ob.size || r == 0)) break;
  }
  if (hint != 0) {
    if (had_frame && frame_end < data.size()) {
      return TruncatedData(what, kZstdFamily,
                           "the " + std::to_string(data.size() - frame_end) +
                               " bytes after the frame that ends at offset " +
                               std::to_string(frame_end) + " are an incomplete frame");
    }
    return TruncatedData(what, kZstdFamily,
                         "the input ends (" + std::to_string(data.size()) +
                             " bytes) before the end of the frame, after " +
                             std::to_string(out.produced()) + " output bytes");
  }
  return Status::Ok();
}

}  // namespace

Result<std::string> ZstdCompress(std::string_view raw, int level) {
  std::unique_ptr<ZSTD_CCtx, CCtxFree> cctx(ZSTD_createCCtx());
  if (!cctx) return InternalError("zstd: cannot allocate a compression context");
  std::string out(ZSTD_compressBound(raw.size()), '\0');
  const size_t n = ZSTD_compressCCtx(cctx.get(), out.data(), out.size(), raw.data(),
                                     raw.size(), level);
  if (ZSTD_isError(n)) {
    return InternalError("zstd: compression at level " + std::to_string(level) +
                         " failed: " + ErrorName(n));
  }
  out.resize(n);
  return out;
}

Result<std::string> ZstdDecompress(std::string_view data, uint64_t max_output,
                                   std::string_view what) {
  std::unique_ptr<ZSTD_DCtx, DCtxFree> dctx(ZSTD_createDCtx());
  if (!dctx) return InternalError("zstd: cannot allocate a decompression context");

  // Fast path: one frame that states its size, within the limit, and small
  // enough to allocate whole: no more than the first buffer of the streaming
  // path (a header is untrusted; a 17-byte frame may declare 1 TiB). libzstd
  // checks the stated size while decoding.
  const unsigned long long stated = ZSTD_getFrameContentSize(data.data(), data.size());
  uint64_t declared = UINT64_MAX;
  if (stated != ZSTD_CONTENTSIZE_UNKNOWN && stated != ZSTD_CONTENTSIZE_ERROR) {
    declared = stated;
    if (declared > max_output) {
      return CorruptData(what, kZstdFamily,
                         "the frame header declares " + std::to_string(declared) +
                             " bytes, more than the expected raw size of " +
                             std::to_string(max_output));
    }
    if (declared <= BoundedOutput::StartSize(data.size()) &&
        ZSTD_findFrameCompressedSize(data.data(), data.size()) == data.size()) {
      std::string out(static_cast<size_t>(declared), '\0');
      const size_t n = ZSTD_decompressDCtx(dctx.get(), out.data(), out.size(),
                                           data.data(), data.size());
      if (!ZSTD_isError(n) && n == out.size()) return out;
      if (!ZSTD_isError(n)) {
        return CorruptData(what, kZstdFamily,
                           "the frame holds " + std::to_string(n) +
                               " bytes but its header declares " + std::to_string(declared));
      }
      return CorruptData(what, kZstdFamily, ErrorName(n) + " (in the frame at input offset 0)");
    }
  }
  // `declared` caps the first buffer only.
  BoundedOutput out(max_output, data.size(), declared);
  SLUICE_RETURN_IF_ERROR(StreamDecode(dctx.get(), data, out, what));
  return out.Take();
}

Result<uint64_t> ZstdDecompressInto(std::string_view data, char* out, uint64_t capacity,
                                    std::string_view what) {
  std::unique_ptr<ZSTD_DCtx, DCtxFree> dctx(ZSTD_createDCtx());
  if (!dctx) return InternalError("zstd: cannot allocate a decompression context");
  // libzstd never writes past `capacity`; it decodes every frame (skippable
  // ones skipped) and refuses trailing bytes, as the streaming path does.
  const size_t n = ZSTD_decompressDCtx(dctx.get(), out, static_cast<size_t>(capacity),
                                       data.data(), data.size());
  if (!ZSTD_isError(n)) return n;
  // The streaming path says exactly what is wrong (and where).
  SLUICE_ASSIGN_OR_RETURN(std::string whole, ZstdDecompress(data, capacity, what));
  if (!whole.empty()) std::memcpy(out, whole.data(), whole.size());
  return whole.size();
}

Status ZstdDecode(std::string_view data, BoundedOutput& out, std::string_view what) {
  std::unique_ptr<ZSTD_DCtx, DCtxFree> dctx(ZSTD_createDCtx());
  if (!dctx) return InternalError("zstd: cannot allocate a decompression context");
  const unsigned long long stated = ZSTD_getFrameContentSize(data.data(), data.size());
  if (stated != ZSTD_CONTENTSIZE_UNKNOWN && stated != ZSTD_CONTENTSIZE_ERROR &&
      stated > out.max_output()) {
    return CorruptData(what, kZstdFamily,
                       "the frame header declares " + std::to_string(stated) +
                           " bytes, more than the expected raw size of " +
                           std::to_string(out.max_output()));
  }
  return StreamDecode(dctx.get(), data, out, what);
}

}  // namespace sluice::codec_internal
