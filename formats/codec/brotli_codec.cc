// br: a raw brotli stream (no framing), as the python `brotli` module writes
// it: generic mode, 22-bit window.
#include <brotli/decode.h>
#include <brotli/encode.h>

#include <memory>

#include "formats/codec/codec_internal.h"

namespace sluice::codec_internal {

namespace {

constexpr std::string_view kBrotliFamily = "br";

struct DecoderFree {
  void operator()(BrotliDecoderState* s) const { BrotliDecoderDestroyInstance(s); }
};
struct EncoderFree {
  void operator()(BrotliEncoderState* s) const { BrotliEncoderDestroyInstance(s); }
};

}  // namespace

Result<std::string> BrotliCompress(std::string_view raw, int quality) {
  std::unique_ptr<BrotliEncoderState, EncoderFree> enc(
      BrotliEncoderCreateInstance(nullptr, nullptr, nullptr));
  if (!enc) return InternalError("br: cannot allocate an encoder");
  if (!BrotliEncoderSetParameter(enc.get(), BROTLI_PARAM_QUALITY,
                                 static_cast<uint32_t>(quality)) ||
      !BrotliEncoderSetParameter(enc.get(), BROTLI_PARAM_LGWIN, BROTLI_DEFAULT_WINDOW) ||
      !BrotliEncoderSetParameter(enc.get(), BROTLI_PARAM_MODE, BROTLI_MODE_GENERIC)) {
    return InternalError("br: cannot set quality " + std::to_string(quality));
  }
  if (raw.size() < (size_t{1} << 30)) {
    // One call, like the python module: hint the encoder with the input size.
    BrotliEncoderSetParameter(enc.get(), BROTLI_PARAM_SIZE_HINT,
                              static_cast<uint32_t>(raw.size()));
  }
  std::string out;
  size_t avail_in = raw.size();
  const uint8_t* next_in = reinterpret_cast<const uint8_t*>(raw.data());
  while (true) {
    size_t avail_out = 0;
    if (!BrotliEncoderCompressStream(enc.get(), BROTLI_OPERATION_FINISH, &avail_in,
                                     &next_in, &avail_out, nullptr, nullptr)) {
      return InternalError("br: compression at quality " + std::to_string(quality) +
                           " failed");
    }
    size_t size = 0;
    const uint8_t* chunk = BrotliEncoderTakeOutput(enc.get(), &size);
    out.append(reinterpret_cast<const char*>(chunk), size);
    if (BrotliEncoderIsFinished(enc.get())) break;
  }
  return out;
}

Status BrotliDecode(std::string_view data, BoundedOutput& out, std::string_view what) {
  std::unique_ptr<BrotliDecoderState, DecoderFree> dec(
      BrotliDecoderCreateInstance(nullptr, nullptr, nullptr));
  if (!dec) return InternalError("br: cannot allocate a decoder");
  const uint64_t max_output = out.max_output();
  size_t avail_in = data.size();
  const uint8_t* next_in = reinterpret_cast<const uint8_t*>(data.data());
  while (true) {
    SLUICE_RETURN_IF_ERROR(out.Grow());
    size_t avail_out = out.free_size();
    const size_t room = avail_out;
    uint8_t* next_out = reinterpret_cast<uint8_t*>(out.free_begin());
    const BrotliDecoderResult r = BrotliDecoderDecompressStream(
        dec.get(), &avail_in, &next_in, &avail_out, &next_out, nullptr);
    out.Commit(room - avail_out);
    if (out.exceeded()) return OutputTooLarge(what, kBrotliFamily, max_output);
    const uint64_t consumed = data.size() - avail_in;
    switch (r) {
      case BROTLI_DECODER_RESULT_SUCCESS:
        if (avail_in != 0) {
          return TrailingData(what, kBrotliFamily, consumed, data.size(),
                              "expected the end of the file");
        }
        return Status::Ok();
      case BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT:
        return TruncatedData(what, kBrotliFamily,
                             "the input ends (" + std::to_string(data.size()) +
                                 " bytes) before the end of the stream, after " +
                                 std::to_string(out.produced()) + " output bytes");
      case BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT:
        if (out.free_size() == 0 && room == 0) {
          return OutputTooLarge(what, kBrotliFamily, max_output);
        }
        break;
      case BROTLI_DECODER_RESULT_ERROR:
      default:
        return CorruptData(
            what, kBrotliFamily,
            std::string(BrotliDecoderErrorString(BrotliDecoderGetErrorCode(dec.get()))) +
                " (near input offset " + std::to_string(consumed) + ")");
    }
  }
}

}  // namespace sluice::codec_internal
