#include "formats/parquet/value_decoder.h"

#include <algorithm>
#include <cstring>

#include "formats/parquet/encoding/byte_stream_split.h"
#include "formats/parquet/encoding/delta_binary_packed.h"
#include "formats/parquet/encoding/delta_byte_array.h"
#include "formats/parquet/encoding/delta_length_byte_array.h"
#include "formats/parquet/encoding/plain.h"
#include "formats/parquet/encoding/rle_bit_packed.h"

namespace sluice::parquet {
namespace {

Status Unsupported(Encoding e, PhysicalType t) {
  return UnimplementedError("encoding " + EncodingName(e) + " of a " + PhysicalTypeName(t) +
                            " column is not supported");
}

bool IsDictionary(Encoding e) {
  return e == Encoding::kRleDictionary || e == Encoding::kPlainDictionary;
}

// The decoder of a page's dictionary indices, once the dictionary is known.
Result<RleBitPackedDecoder> IndicesDecoder(Encoding e, std::string_view section,
                                           const Dictionary* dictionary) {
  if (dictionary == nullptr) {
    return CorruptError(EncodingName(e) + " values without a dictionary page");
  }
  // The decoder keeps the name it is given: a literal, not a temporary.
  const std::string_view name = e == Encoding::kRleDictionary ? "RLE_DICTIONARY" : "PLAIN_DICTIONARY";
  return RleBitPackedDecoder::CreateForDictionaryIndices(section, name);
}

// The next `n` indices of `d` into *out, each checked against the
// dictionary; `first`: the first one's place in the page (for errors).
Status NextIndices(Encoding e, RleBitPackedDecoder& d, size_t n, uint64_t first,
                   const Dictionary* dictionary, SlotArray<uint32_t>* out) {
  out->resize(n);
  SLUICE_RETURN_IF_ERROR(d.Decode(n, out->data()));
  // The largest index first (a loop without a branch per index), the
  // offending one only when there is one.
  const uint32_t* idx = out->data();
  uint32_t largest = 0;
  for (size_t i = 0; i < n; ++i) largest = std::max(largest, idx[i]);
  if (largest < dictionary->count) return Status::Ok();
  for (size_t i = 0; i < n; ++i) {
    if (idx[i] >= dictionary->count) {
      return CorruptError(EncodingName(e) + ": value " + std::to_string(first + i) + " is index " +
                          std::to_string(idx[i]) + " of a dictionary of " +
                          std::to_string(dictionary->count));
    }
  }
  return Status::Ok();
}

// out[i * W, (i + 1) * W) = the dictionary's value idx[i], for i < n. The
// indices are read through a local pointer and four at a time before their
// values are stored: `out` is bytes, which may alias anything, so a store
// through it would otherwise reload the index array's address for every
// value (7 instructions a value where this takes about 4).
template <size_t W>
void GatherFixed(const char* base, const uint32_t* idx, size_t n, uint8_t* out) {
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const size_t a = idx[i], b = idx[i + 1], c = idx[i + 2], d = idx[i + 3];
    std::memcpy(out + i * W, base + a * W, W);
    std::memcpy(out + (i + 1) * W, base + b * W, W);
    std::memcpy(out + (i + 2) * W, base + c * W, W);
    std::memcpy(out + (i + 3) * W, base + d * W, W);
  }
  for (; i < n; ++i) std::memcpy(out + i * W, base + size_t{idx[i]} * W, W);
}

// Decodes `n` dictionary indices and checks each against the dictionary.
Status DictionaryIndices(Encoding e, std::string_view section, size_t n,
                         const Dictionary* dictionary, SlotArray<uint32_t>* out) {
  SLUICE_ASSIGN_OR_RETURN(RleBitPackedDecoder d, IndicesDecoder(e, section, dictionary));
  return NextIndices(e, d, n, 0, dictionary, out);
}

}  // namespace

size_t FixedWidth(const LeafColumn& leaf) {
  switch (leaf.physical_type) {
    case PhysicalType::kBoolean: return 1;
    case PhysicalType::kInt32:
    case PhysicalType::kFloat: return 4;
    case PhysicalType::kInt64:
    case PhysicalType::kDouble: return 8;
    case PhysicalType::kInt96: return 12;
    case PhysicalType::kFixedLenByteArray: return static_cast<size_t>(leaf.type_length);
    case PhysicalType::kByteArray: return 0;
  }
  return 0;
}

Result<Dictionary> DecodeDictionaryPage(std::string_view body, size_t count,
                                        const LeafColumn& leaf) {
  Dictionary d;
  d.count = count;
  const size_t width = FixedWidth(leaf);
  PlainDecoder plain(body);
  if (leaf.physical_type == PhysicalType::kByteArray) {
    if (count > body.size() / 4) {
      return CorruptError("dictionary of " + std::to_string(count) + " byte arrays in " +
                          std::to_string(body.size()) + " bytes");
    }
    d.binary.resize(count);
    SLUICE_RETURN_IF_ERROR(plain.DecodeByteArrays(count, d.binary.data()));
    return d;
  }
  if (leaf.physical_type == PhysicalType::kBoolean) {
    return CorruptError("a dictionary page in a BOOLEAN column");
  }
  SLUICE_RETURN_IF_ERROR(plain.TakeFixedWidth(count, width, &d.fixed));
  return d;
}

Status DecodeFixedValues(Encoding e, std::string_view section, size_t n, const LeafColumn& leaf,
                         const Dictionary* dictionary, uint8_t* out,
                         SlotArray<uint32_t>* scratch) {
  const PhysicalType t = leaf.physical_type;
  const size_t width = FixedWidth(leaf);
  if (n == 0) return Status::Ok();
  if (e == Encoding::kPlain) {
    PlainDecoder plain(section);
    if (t == PhysicalType::kBoolean) return plain.DecodeBooleans(n, out);
    std::string_view bytes;
    SLUICE_RETURN_IF_ERROR(plain.TakeFixedWidth(n, width, &bytes));
    std::memcpy(out, bytes.data(), bytes.size());
    return Status::Ok();
  }
  if (IsDictionary(e) && t != PhysicalType::kBoolean) {
    SLUICE_ASSIGN_OR_RETURN(DictionaryFixedValues values,
                            DictionaryFixedValues::Create(e, section, leaf, dictionary));
    return values.Next(n, out, scratch);
  }
  if (e == Encoding::kRle && t == PhysicalType::kBoolean) {
    size_t consumed = 0;
    SLUICE_ASSIGN_OR_RETURN(RleBitPackedDecoder d,
                            RleBitPackedDecoder::CreateWithLengthPrefix(section, 1, &consumed));
    std::vector<uint32_t> bits(n);
    SLUICE_RETURN_IF_ERROR(d.Decode(n, bits.data()));
    for (size_t i = 0; i < n; ++i) out[i] = static_cast<uint8_t>(bits[i]);
    return Status::Ok();
  }
  if (e == Encoding::kDeltaBinaryPacked && t == PhysicalType::kInt32) {
    SLUICE_ASSIGN_OR_RETURN(auto d, DeltaBinaryPackedDecoder<int32_t>::Create(section));
    return d.Decode(n, reinterpret_cast<int32_t*>(out));
  }
  if (e == Encoding::kDeltaBinaryPacked && t == PhysicalType::kInt64) {
    SLUICE_ASSIGN_OR_RETURN(auto d, DeltaBinaryPackedDecoder<int64_t>::Create(section));
    return d.Decode(n, reinterpret_cast<int64_t*>(out));
  }
  if (e == Encoding::kByteStreamSplit &&
      (t == PhysicalType::kFloat || t == PhysicalType::kDouble || t == PhysicalType::kInt32 ||
       t == PhysicalType::kInt64 || t == PhysicalType::kFixedLenByteArray)) {
    SLUICE_ASSIGN_OR_RETURN(ByteStreamSplitDecoder d, ByteStreamSplitDecoder::Create(section, width));
    if (d.value_count() != n) {
      return CorruptError("BYTE_STREAM_SPLIT section holds " + std::to_string(d.value_count()) +
                          " values, the page " + std::to_string(n));
    }
    return d.Decode(n, out);
  }
  if (e == Encoding::kDeltaByteArray && t == PhysicalType::kFixedLenByteArray) {
    SLUICE_ASSIGN_OR_RETURN(DeltaByteArrayDecoder d,
                            DeltaByteArrayDecoder::Create(section, uint64_t{n} * width, width));
    OwnedByteArrays values;
    SLUICE_RETURN_IF_ERROR(d.Decode(n, &values));
    std::memcpy(out, values.bytes.data(), uint64_t{n} * width);
    return Status::Ok();
  }
  return Unsupported(e, t);
}

Result<DictionaryFixedValues> DictionaryFixedValues::Create(Encoding encoding,
                                                           std::string_view section,
                                                           const LeafColumn& leaf,
                                                           const Dictionary* dictionary) {
  if (!IsDictionary(encoding) || leaf.physical_type == PhysicalType::kBoolean) {
    return Unsupported(encoding, leaf.physical_type);
  }
  SLUICE_ASSIGN_OR_RETURN(RleBitPackedDecoder d, IndicesDecoder(encoding, section, dictionary));
  return DictionaryFixedValues(encoding, std::move(d), dictionary, FixedWidth(leaf));
}

Status DictionaryFixedValues::Next(size_t n, uint8_t* out, SlotArray<uint32_t>* scratch) {
  if (n == 0) return Status::Ok();
  SlotArray<uint32_t> own;
  SlotArray<uint32_t>& idx = scratch != nullptr ? *scratch : own;
  SLUICE_RETURN_IF_ERROR(NextIndices(n, &idx));
  const char* base = dictionary_->fixed.data();
  const size_t width = width_;
  // The common widths as typed copies (a memcpy of a runtime width per
  // value costs several times more), four at a time.
  if (width == 4) {
    GatherFixed<4>(base, idx.data(), n, out);
  } else if (width == 8) {
    GatherFixed<8>(base, idx.data(), n, out);
  } else {
    for (size_t i = 0; i < n; ++i) std::memcpy(out + i * width, base + size_t{idx[i]} * width, width);
  }
  return Status::Ok();
}

Status DictionaryFixedValues::NextIndices(size_t n, SlotArray<uint32_t>* out) {
  SLUICE_RETURN_IF_ERROR(parquet::NextIndices(encoding_, indices_, n, done_, dictionary_, out));
  done_ += n;
  return Status::Ok();
}

Status DecodeBinaryValues(Encoding e, std::string_view section, size_t n,
                          const Dictionary* dictionary, uint64_t max_bytes,
                          std::vector<std::unique_ptr<std::string>>* owned,
                          std::string_view* out, SlotArray<uint32_t>* scratch) {
  if (n == 0) return Status::Ok();
  if (e == Encoding::kPlain) return PlainDecoder(section).DecodeByteArrays(n, out);
  if (IsDictionary(e)) {
    SlotArray<uint32_t> own;
    SlotArray<uint32_t>& idx = scratch != nullptr ? *scratch : own;
    SLUICE_RETURN_IF_ERROR(DictionaryIndices(e, section, n, dictionary, &idx));
    for (size_t i = 0; i < n; ++i) out[i] = dictionary->binary[idx[i]];
    return Status::Ok();
  }
  if (e == Encoding::kDeltaLengthByteArray) {
    SLUICE_ASSIGN_OR_RETURN(DeltaLengthByteArrayDecoder d, DeltaLengthByteArrayDecoder::Create(section));
    return d.Decode(n, out);
  }
  if (e == Encoding::kDeltaByteArray) {
    SLUICE_ASSIGN_OR_RETURN(DeltaByteArrayDecoder d, DeltaByteArrayDecoder::Create(section, max_bytes));
    OwnedByteArrays values;
    SLUICE_RETURN_IF_ERROR(d.Decode(n, &values));
    owned->push_back(std::make_unique<std::string>(std::move(values.bytes)));
    const std::string& bytes = *owned->back();
    for (size_t i = 0; i < n; ++i) {
      out[i] = std::string_view(bytes).substr(values.offsets[i], values.offsets[i + 1] - values.offsets[i]);
    }
    return Status::Ok();
  }
  return Unsupported(e, PhysicalType::kByteArray);
}

}  // namespace sluice::parquet
