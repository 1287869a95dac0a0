#include "formats/parquet/encoding/plain.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>

#include "base/bytes.h"

namespace sluice::parquet {
namespace {

constexpr int64_t kUnixEpochJulianDay = 2440588;
constexpr uint64_t kNanosPerDay = uint64_t{86400} * 1000 * 1000 * 1000;

std::string ValuesOf(size_t count, size_t width, std::string_view type) {
  return std::to_string(count) + " " + std::string(type) + " values of " + std::to_string(width) +
         " bytes";
}

}  // namespace

int64_t Int96ToUnixNanos(const Int96& v) {
  const uint64_t days = static_cast<uint64_t>(int64_t{v.julian_day} - kUnixEpochJulianDay);
  return static_cast<int64_t>(days * kNanosPerDay + v.nanos_of_day);
}

void PlainDecoder::EndBits() {
  if (bit_ != 0) {
    in_.Skip(1);
    bit_ = 0;
  }
}

Status PlainDecoder::DecodeBooleans(size_t count, uint8_t* out) {
  // Bits available: the rest of the current byte and every byte after it.
  const uint64_t available = uint64_t{in_.remaining()} * 8 - bit_;
  if (count > available) {
    return in_.Error("expected " + std::to_string(count) + " BOOLEAN values, found " +
                     std::to_string(available) + " bits (the section ends)");
  }
  const uint8_t* p = in_.current();
  size_t i = 0;
  // Up to the next byte boundary, then whole bytes, then the tail.
  while (i < count && bit_ != 0) {
    out[i++] = (*p >> bit_) & 1;
    if (++bit_ == 8) {
      bit_ = 0;
      in_.Skip(1);
      p = in_.current();
    }
  }
  while (count - i >= 8) {
    const uint8_t b = *p++;
    for (unsigned k = 0; k < 8; ++k) out[i + k] = (b >> k) & 1;
    i += 8;
    in_.Skip(1);
  }
  while (i < count) {
    out[i++] = (*p >> bit_) & 1;
    ++bit_;  // the tail stays inside one byte
  }
  return Status::Ok();
}

Status PlainDecoder::Copy(size_t count, size_t width, void* out) {
  std::string_view bytes;
  SLUICE_RETURN_IF_ERROR(TakeFixedWidth(count, width, &bytes));
  if (!bytes.empty()) std::memcpy(out, bytes.data(), bytes.size());
  return Status::Ok();
}

Status PlainDecoder::TakeFixedWidth(size_t count, size_t width, std::string_view* bytes) {
  EndBits();
  if (width == 0) return in_.Error("a fixed width of 0 bytes; expected at least 1");
  if (count > in_.remaining() / width) {
    return in_.Error("expected " + ValuesOf(count, width, "fixed-width") + ", found " +
                     std::to_string(in_.remaining()) + " bytes (the section ends)");
  }
  *bytes = in_.rest().substr(0, count * width);
  in_.Skip(count * width);
  return Status::Ok();
}

Status PlainDecoder::DecodeInt96(size_t count, Int96* out) {
  std::string_view bytes;
  SLUICE_RETURN_IF_ERROR(TakeFixedWidth(count, 12, &bytes));
  for (size_t i = 0; i < count; ++i) {
    out[i].nanos_of_day = LoadLE<uint64_t>(bytes.data() + 12 * i);
    out[i].julian_day = LoadLE<uint32_t>(bytes.data() + 12 * i + 8);
  }
  return Status::Ok();
}

Status PlainDecoder::DecodeFixedLenByteArrays(size_t count, size_t width, std::string_view* out) {
  std::string_view bytes;
  SLUICE_RETURN_IF_ERROR(TakeFixedWidth(count, width, &bytes));
  for (size_t i = 0; i < count; ++i) out[i] = bytes.substr(i * width, width);
  return Status::Ok();
}

Status PlainDecoder::DecodeByteArrays(size_t count, std::string_view* out) {
  EndBits();
  const char* base = in_.rest().data();
  const size_t size = in_.remaining();
  size_t pos = 0;
  for (size_t i = 0; i < count; ++i) {
    if (size - pos < 4) {
      in_.Skip(pos);
      return in_.Error("expected the 4-byte length of byte array " + std::to_string(i) + " of " +
                       std::to_string(count) + ", found " + std::to_string(size - pos) +
                       " bytes (the section ends)");
    }
    const uint32_t length = LoadLE<uint32_t>(base + pos);
    if (length > uint32_t{std::numeric_limits<int32_t>::max()} || length > size - pos - 4) {
      const std::string shown = length > uint32_t{std::numeric_limits<int32_t>::max()}
                                    ? std::to_string(static_cast<int32_t>(length))
                                    : std::to_string(length);
      in_.Skip(pos);
      return in_.Error("byte array " + std::to_string(i) + " of " + std::to_string(count) +
                       " has length " + shown + "; expected 0 to the " +
                       std::to_string(size - pos - 4) + " bytes left");
    }
    out[i] = std::string_view(base + pos + 4, length);
    pos += 4 + size_t{length};
    // Each length is found only by reading the one before it: with values
    // of a KiB or more that is a cache miss per value, one after another.
    // The next values most likely lie a few lengths on (a hint only).
    __builtin_prefetch(base + std::min(size, pos + 4 * size_t{length}));
  }
  in_.Skip(pos);
  return Status::Ok();
}

size_t FindByteArrays(std::span<const ByteArraySection> sections) {
  // Eight walks at a time: about what a core keeps in flight.
  constexpr size_t kLanes = 8;
  struct Lane {
    const char* base;
    size_t size, pos, left;
    std::string_view* out;
    size_t index;
  };
  Lane lanes[kLanes];
  size_t active = 0, next = 0, first_bad = sections.size();
  const auto start = [&](Lane* lane) {
    const ByteArraySection& s = sections[next];
    *lane = Lane{s.section.data(), s.section.size(), 0, s.count, s.out, next};
    ++next;
  };
  while (active < kLanes && next < sections.size()) start(&lanes[active++]);
  while (active > 0) {
    for (size_t l = 0; l < active;) {
      Lane& a = lanes[l];
      bool done = a.left == 0;
      if (!done) {
        const size_t rest = a.size - a.pos;
        const uint32_t length = rest < 4 ? 0 : LoadLE<uint32_t>(a.base + a.pos);
        if (rest < 4 || length > uint32_t{std::numeric_limits<int32_t>::max()} || length > rest - 4) {
          first_bad = std::min(first_bad, a.index);
          done = true;
        } else {
          *a.out++ = std::string_view(a.base + a.pos + 4, length);
          a.pos += 4 + size_t{length};
          --a.left;
        }
      }
      if (!done) {
        ++l;
      } else if (next < sections.size()) {
        start(&a);
      } else {
        a = lanes[--active];
      }
    }
  }
  return first_bad;
}

}  // namespace sluice::parquet
