#include "engine/packing/token_decoder.h"

#include <cstring>
#include <optional>
#include <variant>

#include "formats/dataset/format_descriptor.h"
#include "formats/json/py_json.h"
#include "formats/mds/column_decoder.h"

namespace sluice {
namespace {

struct IntLayout {
  unsigned width;
  bool is_signed;
};

std::optional<IntLayout> IntByName(std::string_view name) {
  if (name == "int8") return IntLayout{1, true};
  if (name == "int16") return IntLayout{2, true};
  if (name == "int32") return IntLayout{4, true};
  if (name == "int64") return IntLayout{8, true};
  if (name == "uint8") return IntLayout{1, false};
  if (name == "uint16") return IntLayout{2, false};
  if (name == "uint32") return IntLayout{4, false};
  if (name == "uint64") return IntLayout{8, false};
  return std::nullopt;
}

template <typename T>
void Widen(const char* data, size_t n, int64_t* out) {
  for (size_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, data + i * sizeof(T), sizeof(T));
    out[i] = static_cast<int64_t>(v);
  }
}

// Little-endian host (the engine's MDS readers assume it too).
void AppendPacked(const char* data, size_t n, unsigned width, bool is_signed,
                  std::vector<int64_t>* out) {
  const size_t at = out->size();
  out->resize(at + n);
  int64_t* dst = out->data() + at;
  switch (width * 2 + (is_signed ? 1 : 0)) {
    case 3: Widen<int8_t>(data, n, dst); break;
    case 2: Widen<uint8_t>(data, n, dst); break;
    case 5: Widen<int16_t>(data, n, dst); break;
    case 4: Widen<uint16_t>(data, n, dst); break;
    case 9: Widen<int32_t>(data, n, dst); break;
    case 8: Widen<uint32_t>(data, n, dst); break;
    default: std::memcpy(dst, data, n * 8); break;  // int64, uint64 (as the same bits)
  }
}

}  // namespace

Result<TokenDecoder> TokenDecoder::For(std::string_view format, std::string_view encoding,
                                       std::string_view column, std::string_view bytes_dtype) {
  TokenDecoder d;
  d.what_ = "column '" + std::string(column) + "' (" + std::string(encoding) + ") of format " +
            std::string(format);
  const auto refuse = [&](std::string_view why) -> Status {
    return InvalidArgumentError("token packing: " + d.what_ + " " + std::string(why));
  };
  // What a read field holds, as the format's descriptor says (no format
  // name is compared outside formats/): MDS's stored bytes, a JSONL member's
  // JSON text, a Parquet value.
  const ShardFormatDescriptor* descriptor = FindShardFormat(format);
  const std::optional<FieldForm> form =
      descriptor != nullptr ? std::optional<FieldForm>(descriptor->fields) : std::nullopt;
  if (form == FieldForm::kStoredBytes) {
    auto enc = ParseColumnEncoding(encoding, column);
    if (!enc.ok() || enc->custom) return refuse("is no MDS ndarray of integers nor bytes");
    if (enc->kind == EncodingKind::kBytes) {
      const auto layout = IntByName(bytes_dtype);
      if (!layout) return refuse("has bytes_dtype " + std::string(bytes_dtype));
      d.kind_ = Kind::kPacked;
      d.width_ = layout->width;
      d.signed_ = layout->is_signed;
      return d;
    }
    if (enc->kind != EncodingKind::kNdarray) {
      return refuse("is no MDS ndarray of integers nor bytes");
    }
    if (enc->nd_dtype && NdDtypeIsFloat(*enc->nd_dtype)) {
      return refuse("holds floats, not token ids");
    }
    d.kind_ = Kind::kNdarray;
    d.mds_ = std::move(*enc);
    return d;
  }
  if (form == FieldForm::kJsonText) {
    d.kind_ = Kind::kJson;
    return d;
  }
  if (form == FieldForm::kParquetValue) {
    if (encoding.starts_with("list<") && encoding.ends_with(">")) {
      const auto layout = IntByName(encoding.substr(5, encoding.size() - 6));
      if (layout) {
        d.kind_ = Kind::kPacked;
        d.width_ = layout->width;
        d.signed_ = layout->is_signed;
        return d;
      }
    }
    return refuse("is no list of integers");
  }
  return refuse("cannot hold token ids (mds, raw, json or parquet only)");
}

Result<uint64_t> TokenDecoder::Count(const char* data, size_t size) const {
  if (kind_ == Kind::kPacked && size % width_ == 0) return uint64_t{size / width_};
  if (kind_ == Kind::kNdarray) {
    SLUICE_ASSIGN_OR_RETURN(NdArrayView nd, DecodeNdArray(mds_, std::string_view(data, size)));
    if (!NdDtypeIsFloat(nd.dtype)) return nd.element_count();
  }
  // JSON text, and the errors: Append's.
  std::vector<int64_t> ids;
  SLUICE_RETURN_IF_ERROR(Append(data, size, &ids));
  return uint64_t{ids.size()};
}

Status TokenDecoder::Append(const char* data, size_t size, std::vector<int64_t>* out) const {
  switch (kind_) {
    case Kind::kPacked:
      if (size % width_ != 0) {
        return CorruptError("token packing: " + what_ + ": a field of " + std::to_string(size) +
                            " bytes is no whole number of " + std::to_string(width_) +
                            "-byte ids");
      }
      AppendPacked(data, size / width_, width_, signed_, out);
      return Status::Ok();
    case Kind::kNdarray: {
      SLUICE_ASSIGN_OR_RETURN(NdArrayView nd, DecodeNdArray(mds_, std::string_view(data, size)));
      if (NdDtypeIsFloat(nd.dtype)) {
        return CorruptError("token packing: " + what_ + ": a field holds " +
                            NdDtypeName(nd.dtype) + ", not integer ids");
      }
      const unsigned width = NdDtypeItemSize(nd.dtype);
      AppendPacked(nd.data.data(), nd.data.size() / width, width, NdDtypeIsSigned(nd.dtype), out);
      return Status::Ok();
    }
    case Kind::kJson: {
      auto parsed = ParsePyJson(std::string_view(data, size));
      if (!parsed.ok()) {
        return CorruptError("token packing: " + what_ + ": " + parsed.status().message());
      }
      const auto* items = std::get_if<JsonValue::Array>(&parsed->v);
      if (items == nullptr) {
        return CorruptError("token packing: " + what_ + ": a field is no JSON array");
      }
      out->reserve(out->size() + items->size());
      for (size_t i = 0; i < items->size(); ++i) {
        const auto* v = std::get_if<int64_t>(&(*items)[i].v);
        if (v == nullptr) {
          return CorruptError("token packing: " + what_ + ": element " + std::to_string(i) +
                              " of a field is no integer (int64)");
        }
        out->push_back(*v);
      }
      return Status::Ok();
    }
  }
  return Status::Ok();
}

}  // namespace sluice
