// snappy: the raw block format (a varint length, then tags), as
// python-snappy's compress()/decompress() use it; not the framing format.
#include <snappy.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "formats/codec/codec_internal.h"
#include "formats/codec/snappy_pieces.h"
#include "formats/codec/snappy_prefix.h"

namespace sluice::codec_internal {

namespace {

constexpr std::string_view kSnappyFamily = "snappy";

// One tag of a raw snappy block at `pos`: a literal of `length` bytes that
// follow the tag (at `literal`), or a copy of `length` bytes from `offset`
// back. The one reader of the tag format (CheckTags, SnappyPieces).
struct Tag {
  uint64_t length = 0;
  uint64_t offset = 0;  // copies only; 0 for a literal
  size_t literal = 0;   // literals only: where their bytes start
  bool is_literal = false;
};

// Reads the tag at *pos and moves past it; false when the input ends inside
// it (a literal's bytes included).
bool NextTag(const unsigned char* p, size_t n, size_t* pos, Tag* t) {
  size_t at = *pos;
  const unsigned tag = p[at++];
  t->offset = 0;
  t->is_literal = (tag & 3) == 0;
  switch (tag & 3) {
    case 0: {  // literal; lengths above 60 follow in 1-4 bytes
      uint64_t length = tag >> 2;
      if (length >= 60) {
        const size_t extra = length - 59;
        if (n - at < extra) return false;
        length = 0;
        for (size_t i = 0; i < extra; ++i) length |= uint64_t{p[at + i]} << (8 * i);
        at += extra;
      }
      t->length = length + 1;
      if (n - at < t->length) return false;
      t->literal = at;
      at += t->length;
      break;
    }
    case 1:  // copy, 11-bit offset
      if (n - at < 1) return false;
      t->length = 4 + ((tag >> 2) & 7);
      t->offset = ((tag >> 5) << 8) | p[at];
      at += 1;
      break;
    case 2:  // copy, 16-bit offset
      if (n - at < 2) return false;
      t->length = (tag >> 2) + 1;
      t->offset = p[at] | (p[at + 1] << 8);
      at += 2;
      break;
    default:  // copy, 32-bit offset
      if (n - at < 4) return false;
      t->length = (tag >> 2) + 1;
      for (size_t i = 0; i < 4; ++i) t->offset |= uint64_t{p[at + i]} << (8 * i);
      at += 4;
      break;
  }
  *pos = at;
  return true;
}

// The library accepts some inputs with extra bytes after the last tag and
// cannot say why a block is bad. Walking the tags first (cheap: no output is
// written) gives exact errors: where the input ends inside a tag, a copy
// reaching before the start, or bytes left once `declared` bytes exist.
Status CheckTags(std::string_view data, size_t pos, uint64_t declared,
                 std::string_view what) {
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  const size_t n = data.size();
  uint64_t produced = 0;
  while (pos < n) {
    if (produced == declared) {
      return TrailingData(what, kSnappyFamily, pos, n,
                          "the header's " + std::to_string(declared) +
                              " bytes are complete; expected the end of the file");
    }
    const size_t tag_at = pos;
    Tag t;
    if (!NextTag(p, n, &pos, &t)) {
      return TruncatedData(what, kSnappyFamily,
                           "the input ends inside the tag at offset " + std::to_string(tag_at) +
                               ", after " + std::to_string(produced) + " of " +
                               std::to_string(declared) + " bytes");
    }
    if (!t.is_literal && (t.offset == 0 || t.offset > produced)) {
      return CorruptData(what, kSnappyFamily,
                         "the copy at offset " + std::to_string(tag_at) + " reaches back " +
                             std::to_string(t.offset) + " bytes, but only " +
                             std::to_string(produced) + " exist");
    }
    if (t.length > declared - produced) {
      return CorruptData(what, kSnappyFamily,
                         "the tag at offset " + std::to_string(tag_at) +
                             " goes past the " + std::to_string(declared) +
                             " bytes the header declares");
    }
    produced += t.length;
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

namespace sluice {

bool SnappyPieces(std::string_view data, char* scratch, uint64_t capacity, SnappyBody* body) {
  body->pieces.clear();
  body->starts.clear();
  body->scratch_used = 0;
  size_t declared = 0;
  const size_t header = codec_internal::HeaderLength(data);
  if (header == 0 || !snappy::GetUncompressedLength(data.data(), data.size(), &declared) ||
      declared > capacity) {
    return false;
  }
  // Copies, and literals too short to be worth a piece of their own, are
  // written to scratch one after another (each output byte at most once:
  // they fit); scratch pieces that meet are one.
  constexpr uint64_t kShortLiteral = 16;
  // Pieces pay per tag where libsnappy pays per tag and per byte, so they
  // win only on long tags (incompressible values: literals of kilobytes).
  // Every kCheckEvery bytes the block so far must be such: tags of
  // kMinTagBytes on average, copies at most an eighth. Text that only
  // just passes the caller's size test (a 1.2 MB dictionary page of words,
  // stored in 0.88 of it) fails here in its first 64 KiB, not at its end:
  // its whole walk then libsnappy cost twice libsnappy alone (issue 35).
  constexpr uint64_t kCheckEvery = 64 << 10;
  constexpr uint64_t kMinTagBytes = 64;
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  uint64_t produced = 0;
  uint64_t copied = 0;
  uint64_t tags = 0;
  uint64_t next_check = kCheckEvery;
  bool last_in_scratch = false;
  const auto add = [&](std::string_view piece, bool in_scratch) {
    if (in_scratch && last_in_scratch) {
      std::string_view& last = body->pieces.back();
      last = std::string_view(last.data(), last.size() + piece.size());
    } else {
      body->pieces.push_back(piece);
      body->starts.push_back(produced);
    }
    last_in_scratch = in_scratch;
    produced += piece.size();
    if (in_scratch) body->scratch_used += piece.size();
  };
  size_t pos = header;
  while (pos < data.size()) {
    codec_internal::Tag t;
    if (!codec_internal::NextTag(p, data.size(), &pos, &t) || t.length > declared - produced) {
      return false;
    }
    ++tags;
    if (produced >= next_check) {
      if (tags * kMinTagBytes > produced || copied > produced / 8) return false;
      next_check = produced + kCheckEvery;
    }
    char* const dst = scratch + body->scratch_used;
    if (t.is_literal) {
      const std::string_view bytes = data.substr(t.literal, t.length);
      if (t.length >= kShortLiteral) {
        add(bytes, false);
        continue;
      }
      std::memcpy(dst, bytes.data(), bytes.size());
      add(std::string_view(dst, t.length), true);
      continue;
    }
    if (t.offset == 0 || t.offset > produced) return false;
    // Compressible data: libsnappy decodes it faster than pieces help.
    copied += t.length;
    if (copied > declared / 8) return false;
    // The source's first min(offset, length) bytes, from whichever pieces
    // hold them; an overlapping copy then repeats them.
    const uint64_t first = std::min(t.offset, t.length);
    uint64_t from = produced - t.offset;
    size_t k = static_cast<size_t>(std::upper_bound(body->starts.begin(), body->starts.end(), from) -
                                   body->starts.begin()) - 1;
    for (uint64_t done = 0; done < first;) {
      const std::string_view piece = body->pieces[k];
      const uint64_t off = from - body->starts[k];
      const uint64_t take = std::min<uint64_t>(first - done, piece.size() - off);
      std::memcpy(dst + done, piece.data() + off, take);
      done += take;
      from += take;
      ++k;
    }
    for (uint64_t i = first; i < t.length; ++i) dst[i] = dst[i - t.offset];
    add(std::string_view(dst, t.length), true);
  }
  return produced == declared;
}

bool SnappyPrefix::Start(std::string_view data, char* out, uint64_t capacity) {
  size_t declared = 0;
  const size_t header = codec_internal::HeaderLength(data);
  failed_ = header == 0 || !snappy::GetUncompressedLength(data.data(), data.size(), &declared) ||
            declared > capacity;
  data_ = data;
  out_ = out;
  pos_ = header;
  declared_ = failed_ ? 0 : declared;
  produced_ = 0;
  return !failed_;
}

bool SnappyPrefix::DecodeTo(uint64_t bytes) {
  if (failed_) return false;
  const uint64_t want = std::min(bytes, declared_);
  const auto* p = reinterpret_cast<const unsigned char*>(data_.data());
  const size_t n = data_.size();
  while (produced_ < want) {
    codec_internal::Tag t;
    if (pos_ >= n || !codec_internal::NextTag(p, n, &pos_, &t) || t.length > declared_ - produced_ ||
        (!t.is_literal && (t.offset == 0 || t.offset > produced_))) {
      failed_ = true;
      return false;
    }
    char* const dst = out_ + produced_;
    if (t.is_literal) {
      std::memcpy(dst, data_.data() + t.literal, t.length);
    } else if (t.offset >= t.length) {
      std::memcpy(dst, dst - t.offset, t.length);
    } else {
      // An overlapping copy repeats its first `offset` bytes. Indexed
      // from its source, not dst[i - offset]: i < offset would wrap.
      const char* const src = dst - t.offset;
      for (uint64_t i = 0; i < t.length; ++i) dst[i] = src[i];
    }
    produced_ += t.length;
  }
  if (produced_ == declared_ && pos_ != n) failed_ = true;  // bytes after the last tag
  return !failed_;
}

}  // namespace sluice
