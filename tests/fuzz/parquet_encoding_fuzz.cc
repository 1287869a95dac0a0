// Parquet's value encodings (formats/parquet/encoding): every decoder over
// a values section the fuzzer writes.
//
// Input: a decoder byte (its value mod 10: 0 RLE runs, 1 RLE with a length
// prefix, 2 dictionary indices, 3 PLAIN, 4 DELTA_BINARY_PACKED INT32, 5
// DELTA_BINARY_PACKED INT64, 6 DELTA_LENGTH_BYTE_ARRAY, 7 DELTA_BYTE_ARRAY,
// 8 BYTE_STREAM_SPLIT, 9 LZ4_RAW), a parameter byte (bit width, PLAIN type
// and width, value width, batch sizes), a u16 value count (an LZ4_RAW
// expected size), then the section.
// Checks: errors are kCorrupt, name the encoding and an offset inside the
// section (LZ4_RAW: the page, kIoError only for a failed allocation);
// decoding the count in one call and in uneven batches agree (same values,
// or both fail); views lie inside the section; RLE values fit their width;
// DELTA_BYTE_ARRAY output stays within its budget; DELTA_BINARY_PACKED's
// EncodedSize lies inside the section; LZ4_RAW output has the expected size.
#include <lz4.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "formats/parquet/encoding/byte_stream_split.h"
#include "formats/parquet/encoding/delta_binary_packed.h"
#include "formats/parquet/encoding/delta_byte_array.h"
#include "formats/parquet/encoding/delta_length_byte_array.h"
#include "formats/parquet/encoding/lz4_raw.h"
#include "formats/parquet/encoding/plain.h"
#include "formats/parquet/encoding/rle_bit_packed.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using sluice::Result;
using sluice::Status;
using sluice::fuzz::Within;
namespace pq = sluice::parquet;

constexpr uint64_t kDeltaByteArrayBudget = 1 << 20;

// "<ENCODING> at offset <n>: ..." with n <= the section's size.
void CheckError(const Status& s, std::string_view section) {
  FUZZ_CHECK(sluice::IsCorrupt(s), "code: %s", s.ToString().c_str());
  const std::string& m = s.message();
  const size_t at = m.find(" at offset ");
  FUZZ_CHECK(at != std::string::npos && at > 0, "no offset: %s", m.c_str());
  const unsigned long long offset = std::strtoull(m.c_str() + at + 11, nullptr, 10);
  FUZZ_CHECK(offset <= section.size(), "offset %llu past %zu: %s", offset, section.size(),
             m.c_str());
}

// Batch sizes from the parameter byte: 1, 2, 3, 5, 8, 13, ... cycling
// (one call for no values, which may still fail, e.g. on a width of 0).
std::vector<size_t> Batches(size_t count, uint8_t param) {
  if (count == 0) return {0};
  std::vector<size_t> out;
  size_t a = 1 + param % 7, b = 1 + param % 3;
  while (count > 0) {
    const size_t n = std::min(count, a);
    out.push_back(n);
    count -= n;
    const size_t c = a + b;
    a = b;
    b = c > 200 ? 1 : c;
  }
  return out;
}

// Whether two decoded values are the same (views: the same bytes in place).
template <typename T>
bool Same(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}
bool Same(const std::string_view& a, const std::string_view& b) {
  return a.data() == b.data() && a.size() == b.size();
}
bool Same(const pq::Int96& a, const pq::Int96& b) {
  return a.nanos_of_day == b.nanos_of_day && a.julian_day == b.julian_day;
}

// Runs `decode(decoder, n, out)` once for `count` and over batches on a copy
// of the decoder; both outcomes must agree.
template <typename D, typename T, typename Fn>
void OneAndBatched(const D& decoder, size_t count, uint8_t param, std::string_view section,
                   Fn decode, std::vector<T>* values) {
  D once = decoder;
  values->assign(count, T{});
  const Status s1 = decode(once, count, values->data());
  D batched = decoder;
  std::vector<T> parts(count);
  Status s2;
  size_t pos = 0;
  for (size_t n : Batches(count, param)) {
    s2 = decode(batched, n, parts.data() + pos);
    if (!s2.ok()) break;
    pos += n;
  }
  FUZZ_CHECK(s1.ok() == s2.ok(), "once: %s, batched: %s", s1.ToString().c_str(),
             s2.ToString().c_str());
  if (!s1.ok()) {
    CheckError(s1, section);
    CheckError(s2, section);
    values->clear();
    return;
  }
  for (size_t i = 0; i < count; ++i) {
    FUZZ_CHECK(Same((*values)[i], parts[i]), "value %zu differs", i);
  }
}

void FuzzRle(std::string_view section, int mode, uint8_t param, size_t count) {
  size_t consumed = 0;
  // Widths up to 39: those above 32 must be refused.
  Result<pq::RleBitPackedDecoder> d =
      mode == 0   ? pq::RleBitPackedDecoder::Create(section, param % 40)
      : mode == 1 ? pq::RleBitPackedDecoder::CreateWithLengthPrefix(section, param % 40, &consumed)
                  : pq::RleBitPackedDecoder::CreateForDictionaryIndices(section);
  if (!d.ok()) return CheckError(d.status(), section);
  if (mode == 1) FUZZ_CHECK(consumed <= section.size(), "consumed %zu", consumed);
  std::vector<uint32_t> values;
  OneAndBatched<pq::RleBitPackedDecoder, uint32_t>(
      *d, count, param, section,
      [](pq::RleBitPackedDecoder& x, size_t n, uint32_t* out) { return x.Decode(n, out); },
      &values);
  const int width = d->bit_width();
  for (uint32_t v : values) {
    FUZZ_CHECK(width == 32 || (v >> width) == 0, "value %u wider than %d bits", v, width);
  }
  // Skipping then decoding the last value gives the same as decoding all.
  if (!values.empty()) {
    pq::RleBitPackedDecoder s = *d;
    uint32_t last = 0;
    FUZZ_CHECK(s.Skip(count - 1).ok() && s.Decode(1, &last).ok(), "skip failed");
    FUZZ_CHECK(last == values.back(), "skip then decode: %u, not %u", last, values.back());
  }
}

void FuzzPlain(std::string_view section, uint8_t param, size_t count) {
  const pq::PlainDecoder d(section);
  auto views_inside = [&](const std::vector<std::string_view>& v) {
    for (std::string_view x : v) FUZZ_CHECK(Within(x, section), "view outside the section");
  };
  switch (param % 8) {
    case 0: {
      std::vector<uint8_t> v;
      OneAndBatched<pq::PlainDecoder, uint8_t>(
          d, count, param, section,
          [](pq::PlainDecoder& x, size_t n, uint8_t* out) { return x.DecodeBooleans(n, out); }, &v);
      for (uint8_t b : v) FUZZ_CHECK(b <= 1, "boolean %u", b);
      break;
    }
    case 1: {
      std::vector<int32_t> v;
      OneAndBatched<pq::PlainDecoder, int32_t>(
          d, count, param, section,
          [](pq::PlainDecoder& x, size_t n, int32_t* out) { return x.DecodeInt32(n, out); }, &v);
      break;
    }
    case 2: {
      std::vector<double> v;
      OneAndBatched<pq::PlainDecoder, double>(
          d, count, param, section,
          [](pq::PlainDecoder& x, size_t n, double* out) { return x.DecodeDouble(n, out); }, &v);
      break;
    }
    case 3: {
      std::vector<pq::Int96> v;
      OneAndBatched<pq::PlainDecoder, pq::Int96>(
          d, count, param, section,
          [](pq::PlainDecoder& x, size_t n, pq::Int96* out) { return x.DecodeInt96(n, out); },
          &v);
      for (const pq::Int96& x : v) (void)pq::Int96ToUnixNanos(x);
      break;
    }
    case 4:
    case 5: {
      std::vector<std::string_view> v;
      OneAndBatched<pq::PlainDecoder, std::string_view>(
          d, count, param, section,
          [](pq::PlainDecoder& x, size_t n, std::string_view* out) {
            return x.DecodeByteArrays(n, out);
          },
          &v);
      views_inside(v);
      // FindByteArrays over the section given 1 to 16 times (walked
      // together) agrees with DecodeByteArrays: all found, the same views;
      // else the first section named.
      const size_t copies = 1 + param % 16;
      std::vector<std::vector<std::string_view>> found(copies, std::vector<std::string_view>(count));
      std::vector<pq::ByteArraySection> sections;
      for (size_t k = 0; k < copies; ++k) {
        sections.push_back(pq::ByteArraySection{section, count, found[k].data()});
      }
      const size_t bad = pq::FindByteArrays(sections);
      const bool decoded = v.size() == count;  // OneAndBatched clears it on an error
      FUZZ_CHECK(bad == (decoded ? copies : 0), "FindByteArrays: %zu of %zu sections", bad, copies);
      if (decoded) {
        for (size_t k = 0; k < copies; ++k) {
          for (size_t i = 0; i < count; ++i) FUZZ_CHECK(Same(found[k][i], v[i]), "value %zu differs", i);
        }
      }
      break;
    }
    default: {
      const size_t width = param / 8;  // 0..31: 0 must be refused
      std::vector<std::string_view> v;
      OneAndBatched<pq::PlainDecoder, std::string_view>(
          d, count, param, section,
          [width](pq::PlainDecoder& x, size_t n, std::string_view* out) {
            return x.DecodeFixedLenByteArrays(n, width, out);
          },
          &v);
      views_inside(v);
      for (std::string_view x : v) FUZZ_CHECK(x.size() == width, "width %zu", x.size());
      break;
    }
  }
}

template <typename T>
void FuzzDelta(std::string_view section, uint8_t param, size_t count) {
  auto d = pq::DeltaBinaryPackedDecoder<T>::Create(section);
  if (!d.ok()) return CheckError(d.status(), section);
  auto size = d->EncodedSize();
  if (size.ok()) {
    FUZZ_CHECK(*size <= section.size(), "encoded size %zu of %zu", *size, section.size());
  } else {
    CheckError(size.status(), section);
  }
  std::vector<T> values;
  OneAndBatched<pq::DeltaBinaryPackedDecoder<T>, T>(
      *d, count, param, section,
      [](pq::DeltaBinaryPackedDecoder<T>& x, size_t n, T* out) { return x.Decode(n, out); },
      &values);
  // Every value decoded means the stream's values up to there exist; all
  // of them decoded means the whole stream does.
  if (!values.empty() && count == d->total_count()) FUZZ_CHECK(size.ok(), "decoded all, no size");
}

void FuzzDeltaLength(std::string_view section, uint8_t param, size_t count) {
  auto d = pq::DeltaLengthByteArrayDecoder::Create(section);
  if (!d.ok()) return CheckError(d.status(), section);
  std::vector<std::string_view> values;
  OneAndBatched<pq::DeltaLengthByteArrayDecoder, std::string_view>(
      *d, count, param, section,
      [](pq::DeltaLengthByteArrayDecoder& x, size_t n, std::string_view* out) {
        return x.Decode(n, out);
      },
      &values);
  for (std::string_view v : values) FUZZ_CHECK(Within(v, section), "view outside the section");
}

void FuzzDeltaByteArray(std::string_view section, uint8_t param, size_t count) {
  const size_t width = param % 4 == 0 ? param / 4 : 0;
  auto d = pq::DeltaByteArrayDecoder::Create(section, kDeltaByteArrayBudget, width);
  if (!d.ok()) return CheckError(d.status(), section);
  pq::DeltaByteArrayDecoder once = *d;
  pq::OwnedByteArrays all;
  const Status s1 = once.Decode(count, &all);
  pq::DeltaByteArrayDecoder batched = *d;
  pq::OwnedByteArrays parts;
  Status s2;
  for (size_t n : Batches(count, param)) {
    s2 = batched.Decode(n, &parts);
    if (!s2.ok()) break;
  }
  FUZZ_CHECK(s1.ok() == s2.ok(), "once: %s, batched: %s", s1.ToString().c_str(),
             s2.ToString().c_str());
  FUZZ_CHECK(all.bytes.size() <= kDeltaByteArrayBudget, "%zu bytes", all.bytes.size());
  if (!s1.ok()) {
    CheckError(s1, section);
    return CheckError(s2, section);
  }
  FUZZ_CHECK(all.size() == count && all.bytes == parts.bytes && all.offsets == parts.offsets,
             "batches differ");
  for (size_t i = 0; width != 0 && i < count; ++i) FUZZ_CHECK(all[i].size() == width, "width");
}

void FuzzByteStreamSplit(std::string_view section, uint8_t param, size_t count) {
  const size_t width = param % 20;  // 0 must be refused
  auto d = pq::ByteStreamSplitDecoder::Create(section, width);
  if (!d.ok()) return CheckError(d.status(), section);
  FUZZ_CHECK(d->value_count() * width == section.size(), "value count");
  std::vector<uint8_t> once(count * width), parts(count * width);
  pq::ByteStreamSplitDecoder a = *d, b = *d;
  const Status s1 = a.Decode(count, once.data());
  Status s2;
  size_t pos = 0;
  for (size_t n : Batches(count, param)) {
    s2 = b.Decode(n, parts.data() + pos * width);
    if (!s2.ok()) break;
    pos += n;
  }
  FUZZ_CHECK(s1.ok() == s2.ok(), "once: %s", s1.ToString().c_str());
  FUZZ_CHECK(s1.ok() == (count <= d->value_count()), "count");
  if (!s1.ok()) return CheckError(s1, section);
  FUZZ_CHECK(once == parts, "batches differ");
  // Value i's byte k is stream k's byte i.
  for (size_t i = 0; i < count; ++i) {
    for (size_t k = 0; k < width; ++k) {
      FUZZ_CHECK(once[i * width + k] ==
                     static_cast<uint8_t>(section[k * d->value_count() + i]),
                 "byte %zu of value %zu", k, i);
    }
  }
}

void FuzzLz4(std::string_view data, size_t expected) {
  auto out = pq::DecompressLz4Raw(data, expected, "fuzz/page");
  if (!out.ok()) {
    const Status& s = out.status();
    FUZZ_CHECK(sluice::IsCorrupt(s) || s.code() == sluice::StatusCode::kIoError, "%s",
               s.ToString().c_str());
    FUZZ_CHECK(s.message().rfind("fuzz/page: LZ4_RAW data ", 0) == 0, "%s", s.message().c_str());
    return;
  }
  FUZZ_CHECK(out->size() == expected, "%zu bytes, not %zu", out->size(), expected);
  // What decompressed compresses and decompresses back.
  std::string packed(static_cast<size_t>(LZ4_compressBound(static_cast<int>(expected))), '\0');
  const int n = LZ4_compress_default(out->data(), packed.data(), static_cast<int>(expected),
                                     static_cast<int>(packed.size()));
  FUZZ_CHECK(n > 0 || expected == 0, "compress failed");
  packed.resize(static_cast<size_t>(n));
  auto back = pq::DecompressLz4Raw(packed, expected, "fuzz/roundtrip");
  FUZZ_CHECK(back.ok() && *back == *out, "round trip: %s", back.status().ToString().c_str());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sluice::fuzz::Input in(data, size);
  const uint8_t which = in.Byte() % 10;
  const uint8_t param = in.Byte();
  const size_t count = in.U16();
  // A copy of exactly the section's size, so ASan sees any read past it.
  const std::string_view rest = in.Rest();
  std::unique_ptr<char[]> copy(new char[rest.size()]);
  if (!rest.empty()) std::memcpy(copy.get(), rest.data(), rest.size());
  const std::string_view section(copy.get(), rest.size());
  switch (which) {
    case 0:
    case 1:
    case 2: FuzzRle(section, which, param, count); break;
    case 3: FuzzPlain(section, param, count); break;
    case 4: FuzzDelta<int32_t>(section, param, count); break;
    case 5: FuzzDelta<int64_t>(section, param, count); break;
    case 6: FuzzDeltaLength(section, param, count); break;
    case 7: FuzzDeltaByteArray(section, param, count); break;
    case 8: FuzzByteStreamSplit(section, param, count); break;
    default: FuzzLz4(section, count); break;
  }
  return 0;
}
