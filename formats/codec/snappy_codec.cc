// snappy: the raw block format (a varint length, then tags), as
// python-snappy's compress()/decompress() use it; not the framing format.
#include <snappy.h>

#include <cstdint>

#include "formats/codec/codec_internal.h"

namespace sluice::codec_internal {

namespace {

constexpr std::string_view kSnappyFamily = "snappy";

// The library accepts some inputs with extra bytes after the last tag and
// cannot say why a block is bad. Walking the tags first (cheap: no output is
// written) gives exact errors: where the input ends inside a tag, a copy
// reaching before the start, or bytes left once `declared` bytes exist.
Status CheckTags(std::string_view data, size_t pos, uint64_t declared,
                 std::string_view what) {
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  const size_t n = data.size();
  uint64_t produced = 0;
  auto cut = [&](size_t tag_at) {
    return TruncatedData(what, kSnappyFamily,
                         "the input ends inside the tag at offset " + std::to_string(tag_at) +
                             ", after " + std::to_string(produced) + " of " +
                             std::to_string(declared) + " bytes");
  };
  while (pos < n) {
    if (produced == declared) {
      return TrailingData(what, kSnappyFamily, pos, n,
                          "the header's " + std::to_string(declared) +
                              " bytes are complete; expected the end of the file");
    }
    const size_t tag_at = pos;
    const unsigned tag = p[pos++];
    uint64_t length = 0;
    uint64_t offset = 0;
    switch (tag & 3) {
      case 0: {  // literal; lengths above 60 follow in 1-4 bytes
        length = tag >> 2;
        if (length >= 60) {
          const size_t extra = length - 59;
          if (n - pos < extra) return cut(tag_at);
          length = 0;
          for (size_t i = 0; i < extra; ++i) length |= uint64_t{p[pos + i]} << (8 * i);
          pos += extra;
        }
        length += 1;
        if (n - pos < length) return cut(tag_at);
        pos += length;
        break;
      }
      case 1:  // copy, 11-bit offset
        if (n - pos < 1) return cut(tag_at);
        length = 4 + ((tag >> 2) & 7);
        offset = ((tag >> 5) << 8) | p[pos];
        pos += 1;
        break;
      case 2:  // copy, 16-bit offset
        if (n - pos < 2) return cut(tag_at);
        length = (tag >> 2) + 1;
        offset = p[pos] | (p[pos + 1] << 8);
        pos += 2;
        break;
      default:  // copy, 32-bit offset
        if (n - pos < 4) return cut(tag_at);
        length = (tag >> 2) + 1;
        for (size_t i = 0; i < 4; ++i) offset |= uint64_t{p[pos + i]} << (8 * i);
        pos += 4;
        break;
    }
    if ((tag & 3) != 0 && (offset == 0 || offset > produced)) {
      return CorruptData(what, kSnappyFamily,
                         "the copy at offset " + std::to_string(tag_at) + " reaches back " +
                             std::to_string(offset) + " bytes, but only " +
                             std::to_string(produced) + " exist");
    }
    if (length > declared - produced) {
      return CorruptData(what, kSnappyFamily,
                         "the tag at offset " + std::to_string(tag_at) +
                             " goes past the " + std::to_string(declared) +
                             " bytes the header declares");
    }
    produced += length;
  }
  if (produced < declared) {
    return TruncatedData(what, kSnappyFamily,
                         "the input ends after " + std::to_string(produced) + " of the " +
                             std::to_string(declared) + " bytes the header declares");
  }
  return Status::Ok();
}

// Length of the varint header (1-5 bytes), or 0 when `data` ends inside it.
size_t HeaderLength(std::string_view data) {
  for (size_t i = 0; i < data.size() && i < 5; ++i) {
    if ((static_cast<unsigned char>(data[i]) & 0x80) == 0) return i + 1;
  }
  return 0;
}

}  // namespace

Result<std::string> SnappyCompress(std::string_view raw) {
  // The block header stores the length as a 32-bit varint.
  if (raw.size() > UINT32_MAX) {
    return InvalidArgumentError("snappy: cannot compress " + std::to_string(raw.size()) +
                                " bytes: the raw format holds at most 4294967295");
  }
  std::string out;
  snappy::Compress(raw.data(), raw.size(), &out);
  return out;
}

namespace {

// The declared size once the header and tags are checked (see CheckTags).
Result<size_t> SnappyCheckedSize(std::string_view data, uint64_t max_output,
                                 std::string_view what) {
  size_t declared = 0;
  if (!snappy::GetUncompressedLength(data.data(), data.size(), &declared)) {
    if (HeaderLength(data) == 0 && data.size() < 5) {
      return TruncatedData(what, kSnappyFamily,
                           "the input (" + std::to_string(data.size()) +
                               " bytes) ends inside the length header");
    }
    return CorruptData(what, kSnappyFamily, "bad length header");
  }
  if (declared > max_output) {
    return CorruptData(what, kSnappyFamily,
                       "the header declares " + std::to_string(declared) +
                           " bytes, more than the expected raw size of " +
                           std::to_string(max_output));
  }
  SLUICE_RETURN_IF_ERROR(CheckTags(data, HeaderLength(data), declared, what));
  return declared;
}

Status SnappyUncompressTo(std::string_view data, size_t declared, char* out,
                          std::string_view what) {
  if (!snappy::RawUncompress(data.data(), data.size(), out)) {
    return CorruptData(what, kSnappyFamily,
                       "the block does not decode to the " + std::to_string(declared) +
                           " bytes its header declares");
  }
  return Status::Ok();
}

}  // namespace

Result<std::string> SnappyDecompress(std::string_view data, uint64_t max_output,
                                     std::string_view what) {
  SLUICE_ASSIGN_OR_RETURN(const size_t declared, SnappyCheckedSize(data, max_output, what));
  std::string out(declared, '\0');
  SLUICE_RETURN_IF_ERROR(SnappyUncompressTo(data, declared, out.data(), what));
  return out;
}

// The caller's buffer is already allocated, so the tags need not be walked
// before decoding: libsnappy never writes past the declared size and fails
// unless the tags produce exactly it from all of the input. The walk then
// only explains a failure, with Decompress's words.
Result<uint64_t> SnappyDecompressInto(std::string_view data, char* out, uint64_t capacity,
                                      std::string_view what) {
  size_t declared = 0;
  if (snappy::GetUncompressedLength(data.data(), data.size(), &declared) && declared <= capacity &&
      snappy::RawUncompress(data.data(), data.size(), out)) {
    return declared;
  }
  SLUICE_ASSIGN_OR_RETURN(declared, SnappyCheckedSize(data, capacity, what));
  SLUICE_RETURN_IF_ERROR(SnappyUncompressTo(data, declared, out, what));
  return declared;
}

}  // namespace sluice::codec_internal
