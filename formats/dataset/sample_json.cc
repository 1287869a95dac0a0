#include "formats/dataset/sample_json.h"

#include <algorithm>
#include <limits>

#include "base/bytes.h"
#include "formats/mds/column_decoder.h"
#include "formats/parquet/field_encoding.h"

namespace sluice {
namespace {

using Object = JsonValue::Object;
using Array = JsonValue::Array;

// Mosaic's expected files list at most this many ndarray elements.
constexpr uint64_t kMaxListedElements = 4096;
constexpr uint64_t kHeadElements = 32;

JsonValue Str(std::string_view s) { return JsonValue{std::string(s)}; }
JsonValue Int(int64_t v) { return JsonValue{v}; }

JsonValue UInt(uint64_t v) {
  if (v <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return JsonValue{static_cast<int64_t>(v)};
  }
  return JsonValue{JsonValue::BigInt{std::to_string(v)}};
}

bool IsSignedInt(EncodingKind k) {
  return k == EncodingKind::kInt || k == EncodingKind::kInt8 || k == EncodingKind::kInt16 ||
         k == EncodingKind::kInt32 || k == EncodingKind::kInt64;
}
bool IsUnsignedInt(EncodingKind k) {
  return k == EncodingKind::kUInt8 || k == EncodingKind::kUInt16 ||
         k == EncodingKind::kUInt32 || k == EncodingKind::kUInt64;
}
bool IsFloat(EncodingKind k) {
  return k == EncodingKind::kFloat16 || k == EncodingKind::kFloat32 ||
         k == EncodingKind::kFloat64 || k == EncodingKind::kStrFloat;
}

JsonValue PilImage(const PilImageView& img) {
  return JsonValue{Object{{"height", Int(img.height)},
                          {"mode", Str(img.mode)},
                          {"pixels_hex", Str(HexEncode(img.pixels))},
                          {"width", Int(img.width)}}};
}

JsonValue NdValue(const NdArrayView& a, uint64_t i) {
  if (NdDtypeIsFloat(a.dtype)) return Str(PyFloatRepr(NdElementAsDouble(a, i)));
  if (NdDtypeIsSigned(a.dtype)) return Int(NdElementAsInt64(a, i));
  return UInt(NdElementAsUInt64(a, i));
}

}  // namespace

Result<JsonValue> MdsFieldToJson(const ColumnEncoding& enc, std::string_view stored) {
  Object o;
  o.emplace_back("encoding", Str(enc.name));
  o.emplace_back("raw_hex", Str(HexEncode(stored)));
  EncodingKind k = enc.kind;
  if (IsSignedInt(k)) {
    SLUICE_ASSIGN_OR_RETURN(int64_t v, DecodeInt64(enc, stored));
    o.emplace_back("value", Int(v));
  } else if (IsUnsignedInt(k)) {
    SLUICE_ASSIGN_OR_RETURN(uint64_t v, DecodeUInt64(enc, stored));
    o.emplace_back("value", UInt(v));
  } else if (IsFloat(k)) {
    SLUICE_ASSIGN_OR_RETURN(double v, DecodeDouble(enc, stored));
    o.emplace_back("value_repr", Str(PyFloatRepr(v)));
  } else if (k == EncodingKind::kStr) {
    SLUICE_ASSIGN_OR_RETURN(std::string_view t, DecodeText(enc, stored));
    o.emplace_back("value", Str(t));
  } else if (k == EncodingKind::kStrInt || k == EncodingKind::kStrDecimal) {
    SLUICE_ASSIGN_OR_RETURN(std::string_view t, DecodeText(enc, stored));
    o.emplace_back("value_str", Str(t));
  } else if (k == EncodingKind::kJson) {
    SLUICE_ASSIGN_OR_RETURN(std::string_view t, DecodeText(enc, stored));
    SLUICE_ASSIGN_OR_RETURN(JsonValue v, ParsePyJson(t));
    o.emplace_back("value", std::move(v));
  } else if (k == EncodingKind::kPil) {
    SLUICE_ASSIGN_OR_RETURN(PilImageView img, DecodePil(enc, stored));
    o.emplace_back("image", PilImage(img));
  } else if (k == EncodingKind::kJpegArray || k == EncodingKind::kListPil ||
             k == EncodingKind::kListJpeg || k == EncodingKind::kListPng) {
    SLUICE_ASSIGN_OR_RETURN(std::vector<ListItemView> items, DecodeList(enc, stored));
    const char* item_enc = k == EncodingKind::kListPil   ? "pil"
                           : k == EncodingKind::kListPng ? "png"
                                                         : "jpeg";
    Array arr;
    for (const ListItemView& it : items) {
      Object item;
      item.emplace_back("encoding", Str(item_enc));
      if (k == EncodingKind::kListPil) {
        SLUICE_ASSIGN_OR_RETURN(PilImageView img, DecodePilImage(it.bytes, enc.column));
        item.emplace_back("image", PilImage(img));
      }
      item.emplace_back("length", Int(it.length));
      item.emplace_back("offset", Int(it.offset));
      arr.push_back(JsonValue{std::move(item)});
    }
    o.emplace_back("items", JsonValue{std::move(arr)});
  } else if (k == EncodingKind::kNdarray) {
    SLUICE_ASSIGN_OR_RETURN(NdArrayView a, DecodeNdArray(enc, stored));
    o.emplace_back("dtype", Str(NdDtypeName(a.dtype)));
    Array shape;
    for (uint64_t d : a.shape) shape.push_back(UInt(d));
    o.emplace_back("shape", JsonValue{std::move(shape)});
    uint64_t n = a.element_count();
    bool head_only = n > kMaxListedElements;
    Array values;
    for (uint64_t i = 0; i < (head_only ? kHeadElements : n); ++i) values.push_back(NdValue(a, i));
    if (head_only) {
      o.emplace_back("values_head", JsonValue{std::move(values)});
      o.emplace_back("values_note",
                     Str("array too large to list; only the first 32 values; raw_hex has all"));
    } else {
      o.emplace_back(NdDtypeIsFloat(a.dtype) ? "values_repr" : "values", JsonValue{std::move(values)});
    }
  }
  // bytes, pkl, jpeg, png: raw_hex says it all.
  return JsonValue{std::move(o)};
}

Result<std::string> SampleToJson(DatasetReader& reader, uint64_t sample) {
  SampleFields f;
  f.wants_masks = true;  // Parquet null elements: shown as null (below)
  SLUICE_RETURN_IF_ERROR(reader.Read(sample, &f));
  SLUICE_ASSIGN_OR_RETURN(const LoadedShard* shard, reader.Shard(f.where.shard));
  Object top;
  top.emplace_back("index_in_shard", Int(f.where.index_in_shard));
  top.emplace_back("sample", UInt(sample));
  top.emplace_back("shard", UInt(f.where.shard));
  if (const MdsShardReader* mds = shard->mds()) {
    Object fields;
    for (size_t c = 0; c < f.fields.size(); ++c) {
      const ColumnEncoding& enc = mds->columns()[c];
      Result<JsonValue> v = MdsFieldToJson(enc, f.fields[c]);
      if (!v.ok()) {
        // Still show the stored bytes: `cat` is how one looks at a bad field.
        v = JsonValue{Object{{"encoding", Str(enc.name)},
                             {"error", Str(v.status().ToString())},
                             {"raw_hex", Str(HexEncode(f.fields[c]))}}};
      }
      fields.emplace_back(reader.column_names()[c], std::move(*v));
    }
    top.emplace_back("fields", JsonValue{std::move(fields)});
  } else if (shard->parquet() != nullptr) {
    Object fields;
    for (size_t c = 0; c < f.fields.size(); ++c) {
      const std::string& enc = reader.column_encodings()[c];
      Object field;
      field.emplace_back("encoding", Str(enc));
      field.emplace_back("raw_hex", Str(HexEncode(f.fields[c])));
      auto mask = std::find_if(f.masked.begin(), f.masked.end(), [&](const auto& m) {
        return m.field.data() == f.fields[c].data();
      });
      Result<std::vector<std::pair<std::string, JsonValue>>> members =
          mask == f.masked.end() ? parquet::FieldValueJson(enc, f.fields[c])
                                 : parquet::MaskedFieldValueJson(enc, f.fields[c], mask->validity);
      if (mask != f.masked.end()) {
        field.emplace_back("element_validity_hex", Str(HexEncode(mask->validity)));
      }
      if (!members.ok()) {
        field.emplace_back("error", Str(members.status().ToString()));
      } else {
        for (auto& m : *members) field.push_back(std::move(m));
      }
      std::sort(field.begin(), field.end(),
                [](const auto& a, const auto& b) { return a.first < b.first; });
      fields.emplace_back(reader.column_names()[c], JsonValue{std::move(field)});
    }
    top.emplace_back("fields", JsonValue{std::move(fields)});
  } else if (const JsonlShardReader* jsonl = shard->jsonl()) {
    SLUICE_ASSIGN_OR_RETURN(JsonValue v, jsonl->Sample(f.where.index_in_shard));
    top.emplace_back("line_hex", Str(HexEncode(f.raw)));
    top.emplace_back("value", std::move(v));
  } else {
    SLUICE_ASSIGN_OR_RETURN(std::vector<TextValue> values,
                            shard->xsv()->Sample(f.where.index_in_shard));
    Object fields;
    for (size_t c = 0; c < values.size(); ++c) {
      Object field;
      field.emplace_back("encoding", Str(reader.column_encodings()[c]));
      if (auto* i = std::get_if<int64_t>(&values[c])) {
        field.emplace_back("value", Int(*i));
      } else if (auto* big = std::get_if<TextBigInt>(&values[c])) {
        field.emplace_back("value", JsonValue{JsonValue::BigInt{big->digits}});
      } else if (auto* d = std::get_if<double>(&values[c])) {
        field.emplace_back("value_repr", Str(PyFloatRepr(*d)));
      } else {
        field.emplace_back("value", Str(std::get<std::string_view>(values[c])));
      }
      fields.emplace_back(reader.column_names()[c], JsonValue{std::move(field)});
    }
    top.emplace_back("fields", JsonValue{std::move(fields)});
    top.emplace_back("line_hex", Str(HexEncode(f.raw)));
  }
  return DumpPyJson(JsonValue{std::move(top)}, /*sort_keys=*/true);
}

}  // namespace sluice
