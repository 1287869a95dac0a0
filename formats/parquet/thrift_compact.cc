#include "formats/parquet/thrift_compact.h"

#include <cstring>

namespace sluice::parquet {
namespace {

bool IsValueType(uint8_t code) { return code >= 1 && code <= 12; }

bool IsBool(ThriftType t) { return t == ThriftType::kBoolTrue || t == ThriftType::kBoolFalse; }

// The fewest bytes one element of a container can take: what lets a count
// be checked against the bytes that remain before anything is decoded.
size_t MinElementBytes(ThriftType t) { return t == ThriftType::kDouble ? 8 : 1; }

}  // namespace

std::string ThriftTypeName(ThriftType t) {
  switch (t) {
    case ThriftType::kStop: return "stop";
    case ThriftType::kBoolTrue:
    case ThriftType::kBoolFalse: return "bool";
    case ThriftType::kI8: return "i8";
    case ThriftType::kI16: return "i16";
    case ThriftType::kI32: return "i32";
    case ThriftType::kI64: return "i64";
    case ThriftType::kDouble: return "double";
    case ThriftType::kBinary: return "binary";
    case ThriftType::kList: return "list";
    case ThriftType::kSet: return "set";
    case ThriftType::kMap: return "map";
    case ThriftType::kStruct: return "struct";
  }
  return "type " + std::to_string(static_cast<int>(t));
}

Status ThriftCompactDecoder::ErrorAt(size_t offset, std::string_view what) const {
  return CorruptError("offset " + std::to_string(offset) + ": " + std::string(what));
}

Status ThriftCompactDecoder::FieldContext(const Status& s, std::string_view name, int16_t id) {
  return s.WithContext(std::string(name) + " field " + std::to_string(id));
}

Status ThriftCompactDecoder::Enter() {
  if (depth_ >= limits_.max_depth) {
    return Error("structs and containers nested deeper than " +
                 std::to_string(limits_.max_depth));
  }
  ++depth_;
  return Status::Ok();
}

Status ThriftCompactDecoder::ReadVarintSlow(uint64_t* out) {
  const size_t start = pos_;
  uint64_t v = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    if (pos_ >= data_.size()) return ErrorAt(start, "varint runs past the end of the input");
    const uint8_t b = static_cast<uint8_t>(data_[pos_++]);
    if (shift == 63 && b > 1) return ErrorAt(start, "varint longer than 64 bits");
    v |= uint64_t{b & 0x7fu} << shift;
    if ((b & 0x80) == 0) {
      *out = v;
      return Status::Ok();
    }
  }
  return ErrorAt(start, "varint longer than 10 bytes");
}

Status ThriftCompactDecoder::ReadZigzagSlow(int bits, int64_t* out) {
  const size_t start = pos_;
  uint64_t u = 0;
  // Offsets and sizes take several bytes: walked quick, and again checked
  // only for the error.
  if (VarintQuickSlow(&u) && (bits >= 64 || (u >> bits) == 0)) {
    *out = static_cast<int64_t>(u >> 1) ^ -static_cast<int64_t>(u & 1);
    return Status::Ok();
  }
  pos_ = start;
  SLUICE_RETURN_IF_ERROR(ReadVarint(&u));
  if (bits < 64 && (u >> bits) != 0) {
    return ErrorAt(start, "varint " + std::to_string(u) + " too large for an i" +
                              std::to_string(bits));
  }
  *out = static_cast<int64_t>(u >> 1) ^ -static_cast<int64_t>(u & 1);
  return Status::Ok();
}

Status ThriftCompactDecoder::ReadFieldHeaderSlow(int16_t* last_id, int16_t* id, ThriftType* type) {
  if (pos_ >= data_.size()) return Error("struct runs past the end of the input (no stop)");
  const size_t start = pos_;
  const uint8_t b = static_cast<uint8_t>(data_[pos_++]);
  const uint8_t code = b & 0x0f;
  if (code == 0) {
    if (b != 0) return ErrorAt(start, "stop byte with a field id delta");
    *type = ThriftType::kStop;
    return Status::Ok();
  }
  if (!IsValueType(code)) {
    return ErrorAt(start, "field of unknown type " + std::to_string(code));
  }
  const int delta = b >> 4;
  if (delta != 0) {
    if (*last_id > INT16_MAX - delta) return ErrorAt(start, "field id past 32767");
    *id = static_cast<int16_t>(*last_id + delta);
  } else {
    int64_t v = 0;
    SLUICE_RETURN_IF_ERROR(ReadZigzag(16, &v));
    *id = static_cast<int16_t>(v);
  }
  *last_id = *id;
  *type = static_cast<ThriftType>(code);
  return Status::Ok();
}

Status ThriftCompactDecoder::ExpectTypeSlow(ThriftType found, ThriftType wanted) const {
  if (found == wanted || (IsBool(found) && IsBool(wanted))) return Status::Ok();
  return Error("expected " + ThriftTypeName(wanted) + ", found " + ThriftTypeName(found));
}

Status ThriftCompactDecoder::ReadBool(ThriftType type, bool* out) {
  SLUICE_RETURN_IF_ERROR(ExpectType(type, ThriftType::kBoolTrue));
  if (!in_container_bool_) {
    *out = type == ThriftType::kBoolTrue;
    return Status::Ok();
  }
  if (pos_ >= data_.size()) return Error("bool runs past the end of the input");
  const uint8_t b = static_cast<uint8_t>(data_[pos_]);
  // Writers spell false as 2 (the compact type) or 0.
  if (b > 2) return Error("bool byte " + std::to_string(b) + " is not 0, 1 or 2");
  ++pos_;
  *out = b == 1;
  return Status::Ok();
}

Status ThriftCompactDecoder::ReadI8(ThriftType type, int8_t* out) {
  SLUICE_RETURN_IF_ERROR(ExpectType(type, ThriftType::kI8));
  if (pos_ >= data_.size()) return Error("i8 runs past the end of the input");
  *out = static_cast<int8_t>(data_[pos_++]);
  return Status::Ok();
}

Status ThriftCompactDecoder::ReadI16(ThriftType type, int16_t* out) {
  SLUICE_RETURN_IF_ERROR(ExpectType(type, ThriftType::kI16));
  int64_t v = 0;
  SLUICE_RETURN_IF_ERROR(ReadZigzag(16, &v));
  *out = static_cast<int16_t>(v);
  return Status::Ok();
}

Status ThriftCompactDecoder::ReadI32(ThriftType type, int32_t* out) {
  SLUICE_RETURN_IF_ERROR(ExpectType(type, ThriftType::kI32));
  int64_t v = 0;
  SLUICE_RETURN_IF_ERROR(ReadZigzag(32, &v));
  *out = static_cast<int32_t>(v);
  return Status::Ok();
}

Status ThriftCompactDecoder::ReadI64(ThriftType type, int64_t* out) {
  SLUICE_RETURN_IF_ERROR(ExpectType(type, ThriftType::kI64));
  return ReadZigzag(64, out);
}

Status ThriftCompactDecoder::ReadDouble(ThriftType type, double* out) {
  SLUICE_RETURN_IF_ERROR(ExpectType(type, ThriftType::kDouble));
  if (remaining() < 8) return Error("double runs past the end of the input");
  std::memcpy(out, data_.data() + pos_, 8);  // little-endian hosts only
  pos_ += 8;
  return Status::Ok();
}

Status ThriftCompactDecoder::ReadBinary(ThriftType type, std::string_view* out) {
  SLUICE_RETURN_IF_ERROR(ExpectType(type, ThriftType::kBinary));
  const size_t start = pos_;
  uint64_t n = 0;
  SLUICE_RETURN_IF_ERROR(ReadVarint(&n));
  if (n > limits_.max_binary_bytes) {
    return ErrorAt(start, "binary of " + std::to_string(n) + " bytes, more than the limit of " +
                              std::to_string(limits_.max_binary_bytes));
  }
  if (n > remaining()) {
    return ErrorAt(start, "binary of " + std::to_string(n) + " bytes with " +
                              std::to_string(remaining()) + " left");
  }
  *out = data_.substr(pos_, n);
  pos_ += n;
  return Status::Ok();
}

Status ThriftCompactDecoder::ReadString(ThriftType type, std::string* out) {
  std::string_view v;
  SLUICE_RETURN_IF_ERROR(ReadBinary(type, &v));
  out->assign(v);
  return Status::Ok();
}

Status ThriftCompactDecoder::ReadListHeader(ThriftType type, ListHeader* out) {
  if (type != ThriftType::kList && type != ThriftType::kSet) {
    return Error("expected list, found " + ThriftTypeName(type));
  }
  if (pos_ >= data_.size()) return Error("list header runs past the end of the input");
  const size_t start = pos_;
  const uint8_t b = static_cast<uint8_t>(data_[pos_++]);
  const uint8_t code = b & 0x0f;
  if (!IsValueType(code)) {
    return ErrorAt(start, "list of unknown element type " + std::to_string(code));
  }
  uint64_t count = b >> 4;
  if (count == 15) SLUICE_RETURN_IF_ERROR(ReadVarint(&count));
  const ThriftType element = static_cast<ThriftType>(code);
  if (count > limits_.max_container_elements) {
    return ErrorAt(start, "list of " + std::to_string(count) + " elements, more than the limit of " +
                              std::to_string(limits_.max_container_elements));
  }
  if (count > remaining() / MinElementBytes(element)) {
    return ErrorAt(start, "list of " + std::to_string(count) + " " + ThriftTypeName(element) +
                              " elements with " + std::to_string(remaining()) + " bytes left");
  }
  out->element = element;
  out->offset = start;
  out->count = static_cast<uint32_t>(count);
  return Status::Ok();
}

Status ThriftCompactDecoder::SkipElements(ThriftType element, uint64_t count) {
  const bool was = in_container_bool_;
  in_container_bool_ = true;
  for (uint64_t i = 0; i < count; ++i) {
    Status s = SkipChecked(element);
    if (!s.ok()) return s;
  }
  in_container_bool_ = was;
  return Status::Ok();
}

Status ThriftCompactDecoder::Skip(ThriftType type) {
  const Mark start = Here();
  if (SkipQuick(type)) return Status::Ok();
  Back(start);
  return SkipChecked(type);
}

Status ThriftCompactDecoder::SkipStruct(ThriftType type, std::string_view name) {
  SLUICE_RETURN_IF_ERROR(ExpectType(type, ThriftType::kStruct));
  const Mark start = Here();
  if (SkipStructQuick()) return Status::Ok();
  Back(start);
  return SkipStructChecked(name);
}

Status ThriftCompactDecoder::SkipStructChecked(std::string_view name) {
  return ReadStruct(name, [this](int16_t, ThriftType t) { return SkipChecked(t); });
}

Status ThriftCompactDecoder::SkipList(ThriftType type, ThriftType element,
                                      std::string_view struct_name) {
  const Mark start = Here();
  if (SkipListQuick(type, element)) return Status::Ok();
  Back(start);
  return ReadList(type, element, [&](ThriftType e) -> Status {
    if (struct_name.empty()) return SkipChecked(e);
    SLUICE_RETURN_IF_ERROR(ExpectType(e, ThriftType::kStruct));
    return SkipStructChecked(struct_name);
  });
}

bool ThriftCompactDecoder::SkipListQuick(ThriftType type, ThriftType element) {
  if (type != ThriftType::kList && type != ThriftType::kSet) return false;
  ListHeader h{};
  // The element type as ReadList checks it; elements are skipped as the
  // wanted type, as ReadList hands them on.
  if (!ListHeaderQuick(&h) ||
      !(h.count == 0 || h.element == element ||
        (element == ThriftType::kBoolTrue && h.element == ThriftType::kBoolFalse)) ||
      !EnterQuick() || !SkipElementsQuick(element, h.count)) {
    return false;
  }
  --depth_;
  return true;
}

bool ThriftCompactDecoder::VarintQuickSlow(uint64_t* out) {
  uint64_t v = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    if (pos_ >= data_.size()) return false;
    const uint8_t b = static_cast<uint8_t>(data_[pos_++]);
    if (shift == 63 && b > 1) return false;
    v |= uint64_t{b & 0x7fu} << shift;
    if ((b & 0x80) == 0) {
      *out = v;
      return true;
    }
  }
  return false;
}

bool ThriftCompactDecoder::ListHeaderQuick(ListHeader* out) {
  if (pos_ >= data_.size()) return false;
  const uint8_t b = static_cast<uint8_t>(data_[pos_++]);
  const uint8_t code = b & 0x0f;
  if (!IsValueType(code)) return false;
  uint64_t count = b >> 4;
  if (count == 15 && !VarintQuick(&count)) return false;
  const ThriftType element = static_cast<ThriftType>(code);
  if (count > limits_.max_container_elements || count > remaining() / MinElementBytes(element)) {
    return false;
  }
  out->element = element;
  out->count = static_cast<uint32_t>(count);
  return true;
}

bool ThriftCompactDecoder::SkipElementsQuick(ThriftType element, uint64_t count) {
  const bool was = in_container_bool_;
  in_container_bool_ = true;
  for (uint64_t i = 0; i < count; ++i) {
    if (!SkipQuick(element)) return false;
  }
  in_container_bool_ = was;
  return true;
}

bool ThriftCompactDecoder::SkipStructQuick() {
  if (!EnterQuick()) return false;
  const bool outer_in_container = in_container_bool_;
  in_container_bool_ = false;
  int16_t last_id = 0;
  while (true) {
    ThriftType type = ThriftType::kStop;
    if (!FieldHeaderQuick(&last_id, &type)) return false;
    if (type == ThriftType::kStop) break;
    if (!SkipQuick(type)) return false;
  }
  in_container_bool_ = outer_in_container;
  --depth_;
  return true;
}

bool ThriftCompactDecoder::SkipNestedQuick(ThriftType type) {
  switch (type) {
    case ThriftType::kList:
    case ThriftType::kSet: {
      ListHeader h{};
      if (!ListHeaderQuick(&h) || !EnterQuick() || !SkipElementsQuick(h.element, h.count)) {
        return false;
      }
      --depth_;
      return true;
    }
    case ThriftType::kMap: {
      uint64_t count = 0;
      if (!VarintQuick(&count)) return false;
      if (count == 0) return true;
      if (pos_ >= data_.size()) return false;
      const uint8_t kv = static_cast<uint8_t>(data_[pos_++]);
      if (!IsValueType(kv >> 4) || !IsValueType(kv & 0x0f)) return false;
      const ThriftType key = static_cast<ThriftType>(kv >> 4);
      const ThriftType value = static_cast<ThriftType>(kv & 0x0f);
      if (count > limits_.max_container_elements ||
          count > remaining() / (MinElementBytes(key) + MinElementBytes(value))) {
        return false;
      }
      if (!EnterQuick()) return false;
      for (uint64_t i = 0; i < count; ++i) {
        if (!SkipElementsQuick(key, 1) || !SkipElementsQuick(value, 1)) return false;
      }
      --depth_;
      return true;
    }
    case ThriftType::kStruct: return SkipStructQuick();
    default: return false;  // stop; the scalars are SkipQuick's
  }
}

Status ThriftCompactDecoder::SkipChecked(ThriftType type) {
  switch (type) {
    case ThriftType::kBoolTrue:
    case ThriftType::kBoolFalse: {
      bool b = false;
      return ReadBool(type, &b);
    }
    case ThriftType::kI8: {
      int8_t v = 0;
      return ReadI8(type, &v);
    }
    case ThriftType::kI16:
    case ThriftType::kI32:
    case ThriftType::kI64: {
      int64_t v = 0;
      const int bits = type == ThriftType::kI16 ? 16 : type == ThriftType::kI32 ? 32 : 64;
      return ReadZigzag(bits, &v);
    }
    case ThriftType::kDouble: {
      double v = 0;
      return ReadDouble(type, &v);
    }
    case ThriftType::kBinary: {
      std::string_view v;
      return ReadBinary(type, &v);
    }
    case ThriftType::kList:
    case ThriftType::kSet: {
      ListHeader h{};
      SLUICE_RETURN_IF_ERROR(ReadListHeader(type, &h));
      SLUICE_RETURN_IF_ERROR(Enter());
      SLUICE_RETURN_IF_ERROR(SkipElements(h.element, h.count));
      Leave();
      return Status::Ok();
    }
    case ThriftType::kMap: {
      const size_t start = pos_;
      uint64_t count = 0;
      SLUICE_RETURN_IF_ERROR(ReadVarint(&count));
      if (count == 0) return Status::Ok();
      if (pos_ >= data_.size()) return Error("map header runs past the end of the input");
      const uint8_t kv = static_cast<uint8_t>(data_[pos_++]);
      if (!IsValueType(kv >> 4) || !IsValueType(kv & 0x0f)) {
        return ErrorAt(start, "map of unknown key or value type");
      }
      const ThriftType key = static_cast<ThriftType>(kv >> 4);
      const ThriftType value = static_cast<ThriftType>(kv & 0x0f);
      if (count > limits_.max_container_elements ||
          count > remaining() / (MinElementBytes(key) + MinElementBytes(value))) {
        return ErrorAt(start, "map of " + std::to_string(count) + " entries with " +
                                  std::to_string(remaining()) + " bytes left");
      }
      SLUICE_RETURN_IF_ERROR(Enter());
      for (uint64_t i = 0; i < count; ++i) {
        SLUICE_RETURN_IF_ERROR(SkipElements(key, 1));
        SLUICE_RETURN_IF_ERROR(SkipElements(value, 1));
      }
      Leave();
      return Status::Ok();
    }
    case ThriftType::kStruct: return SkipStructChecked("struct");
    case ThriftType::kStop:
      break;
  }
  return Error("cannot skip a value of " + ThriftTypeName(type));
}

}  // namespace sluice::parquet
