// Decodes one MDS field with the decoder its encoding calls for and checks
// what every decoder promises: views point into the stored bytes, sizes are
// the ones the layout implies, and values re-encode to the stored bytes
// where the encoding is canonical. Shared by mds_column_fuzz and
// mds_shard_fuzz.
#pragma once

#include <cmath>
#include <string>
#include <string_view>

#include "formats/json/py_json.h"
#include "formats/mds/column_decoder.h"
#include "formats/mds/column_encoder.h"
#include "formats/mds/column_encoding.h"
#include "tests/fuzz/fuzz_util.h"

namespace sluice::fuzz {

inline void CheckEncodedAs(const Result<std::string>& encoded, std::string_view stored,
                           const ColumnEncoding& enc) {
  FUZZ_CHECK(encoded.ok(), "%s: re-encoding a decoded value failed: %s", enc.name.c_str(),
             encoded.status().message().c_str());
  FUZZ_CHECK(*encoded == stored, "%s: decoded value re-encodes to other bytes",
             enc.name.c_str());
}

inline void CheckField(const ColumnEncoding& enc, std::string_view stored) {
  if (enc.fixed_size) {
    // Fixed-size fields are cut by the shard reader; the decoders must still
    // refuse a wrong size rather than read past it.
  }
  switch (enc.kind) {
    case EncodingKind::kInt: case EncodingKind::kInt8: case EncodingKind::kInt16:
    case EncodingKind::kInt32: case EncodingKind::kInt64: case EncodingKind::kUInt8:
    case EncodingKind::kUInt16: case EncodingKind::kUInt32: {
      Result<int64_t> v = DecodeInt64(enc, stored);
      if (v.ok()) CheckEncodedAs(EncodeInt64(enc, *v), stored, enc);
      break;
    }
    case EncodingKind::kUInt64: {
      Result<uint64_t> v = DecodeUInt64(enc, stored);
      if (v.ok()) CheckEncodedAs(EncodeUInt64(enc, *v), stored, enc);
      break;
    }
    case EncodingKind::kFloat16: case EncodingKind::kFloat32: case EncodingKind::kFloat64: {
      Result<double> v = DecodeDouble(enc, stored);
      if (v.ok() && !std::isnan(*v)) CheckEncodedAs(EncodeDouble(enc, *v), stored, enc);
      break;
    }
    case EncodingKind::kStrFloat: {
      (void)DecodeDouble(enc, stored);
      Result<std::string_view> t = DecodeText(enc, stored);
      if (t.ok()) FUZZ_CHECK(Within(*t, stored));
      break;
    }
    case EncodingKind::kStr: {
      Result<std::string_view> t = DecodeText(enc, stored);
      if (t.ok()) {
        FUZZ_CHECK(Within(*t, stored));
        CheckEncodedAs(EncodeText(enc, *t), stored, enc);
      }
      break;
    }
    case EncodingKind::kStrInt: case EncodingKind::kStrDecimal: {
      Result<std::string_view> t = DecodeText(enc, stored);
      if (t.ok()) FUZZ_CHECK(Within(*t, stored));
      if (enc.kind == EncodingKind::kStrInt) (void)DecodeInt64(enc, stored);
      break;
    }
    case EncodingKind::kJson: {
      Result<std::string_view> t = DecodeText(enc, stored);
      if (t.ok()) {
        FUZZ_CHECK(Within(*t, stored));
        (void)ParsePyJson(*t);
      }
      break;
    }
    case EncodingKind::kBytes: case EncodingKind::kPkl: case EncodingKind::kJpeg:
    case EncodingKind::kPng: {
      Result<std::string_view> b = DecodeRawBytes(enc, stored);
      if (b.ok()) {
        FUZZ_CHECK(b->data() == stored.data() && b->size() == stored.size(),
                   "%s: raw bytes are not the stored bytes", enc.name.c_str());
      }
      break;
    }
    case EncodingKind::kPil: {
      Result<PilImageView> img = DecodePil(enc, stored);
      if (!img.ok()) break;
      FUZZ_CHECK(Within(img->mode, stored) && Within(img->pixels, stored));
      int64_t want = PilPixelBytes(img->mode, img->width, img->height);
      if (want >= 0) {
        FUZZ_CHECK(img->pixels.size() == static_cast<uint64_t>(want),
                   "pil %s %ux%u: %zu pixel bytes, mode needs %lld",
                   std::string(img->mode).c_str(), img->width, img->height,
                   img->pixels.size(), static_cast<long long>(want));
        Result<std::string> again =
            EncodePil(enc, img->width, img->height, img->mode, img->pixels);
        FUZZ_CHECK(again.ok(), "%s", again.status().message().c_str());
        FUZZ_CHECK(stored.substr(0, again->size()) == *again, "pil header/pixels differ");
      }
      break;
    }
    case EncodingKind::kJpegArray: case EncodingKind::kListPil: case EncodingKind::kListJpeg:
    case EncodingKind::kListPng: {
      Result<std::vector<ListItemView>> items = DecodeList(enc, stored);
      if (!items.ok()) break;
      FUZZ_CHECK(items->size() <= stored.size(), "more items than bytes");
      for (const ListItemView& item : *items) {
        FUZZ_CHECK(item.bytes.size() == item.length);
        FUZZ_CHECK(uint64_t{item.offset} + item.length <= stored.size(),
                   "item [%u, +%u) past a %zu-byte field", item.offset, item.length,
                   stored.size());
        FUZZ_CHECK(item.bytes.data() == stored.data() + item.offset);
        if (enc.kind == EncodingKind::kListPil) (void)DecodePilImage(item.bytes, "fuzz item");
      }
      break;
    }
    case EncodingKind::kNdarray: {
      Result<NdArrayView> a = DecodeNdArray(enc, stored);
      if (!a.ok()) break;
      FUZZ_CHECK(!a->shape.empty() && a->shape.size() <= kMaxNdim);
      uint64_t count = 1;
      // A 0 dimension is an empty array (numpy reshapes b'' so too); the
      // product of the others must not overflow before it.
      for (uint64_t d : a->shape) {
        FUZZ_CHECK(!__builtin_mul_overflow(count, d, &count), "shape overflows");
      }
      FUZZ_CHECK(a->element_count() == count);
      FUZZ_CHECK(a->data.size() == count * NdDtypeItemSize(a->dtype),
                 "%zu data bytes for %llu elements", a->data.size(),
                 static_cast<unsigned long long>(count));
      FUZZ_CHECK(Within(a->data, stored) &&
                 a->data.data() + a->data.size() == stored.data() + stored.size(),
                 "data is not the field's tail");
      if (count > 0) {
        (void)NdElementAsDouble(*a, count - 1);
        (void)NdElementAsInt64(*a, 0);
        (void)NdElementAsUInt64(*a, count - 1);
      }
      break;
    }
  }
}

}  // namespace sluice::fuzz
