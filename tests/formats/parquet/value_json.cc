#include "tests/formats/parquet/value_json.h"

#include "formats/parquet/decimal_text.h"

#include <cstring>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "formats/mds/float16.h"
#include "formats/parquet/encoding/plain.h"

namespace sluice::parquet::testing {
namespace {

bool IsText(const LeafColumn& l) {
  using K = LogicalType::Kind;
  const K k = l.logical_type.kind;
  return k == K::kString || k == K::kEnum || k == K::kJson ||
         l.converted_type == ConvertedType::kUtf8 || l.converted_type == ConvertedType::kEnum ||
         l.converted_type == ConvertedType::kJson;
}

bool IsDecimal(const LeafColumn& l) {
  return l.logical_type.kind == LogicalType::Kind::kDecimal ||
         l.converted_type == ConvertedType::kDecimal;
}

bool IsUnsigned(const LeafColumn& l) {
  if (l.logical_type.kind == LogicalType::Kind::kInteger) return !l.logical_type.is_signed;
  if (!l.converted_type) return false;
  const int c = static_cast<int>(*l.converted_type);
  return c >= static_cast<int>(ConvertedType::kUint8) && c <= static_cast<int>(ConvertedType::kUint64);
}

JsonValue Str(std::string s) { return JsonValue{std::move(s)}; }

std::string BigEndian(uint64_t v, int bytes) {
  std::string be(static_cast<size_t>(bytes), '\0');
  for (int i = 0; i < bytes; ++i) be[static_cast<size_t>(bytes - 1 - i)] = static_cast<char>(v >> (8 * i));
  return be;
}

JsonValue Leaf(const ColumnBuffer& c, size_t slot) {
  if (!c.validity[slot]) return JsonValue{};
  const LeafColumn& l = c.leaf;
  const char* p = c.width > 0 ? c.fixed_value(slot).data() : nullptr;
  switch (l.physical_type) {
    case PhysicalType::kBoolean:
      return JsonValue{*p != 0};
    case PhysicalType::kInt32: {
      const int32_t v = LoadLE<int32_t>(p);
      if (IsDecimal(l)) return Str(DecimalText(BigEndian(static_cast<uint32_t>(v), 4), l.scale));
      if (IsUnsigned(l)) return JsonValue{int64_t{static_cast<uint32_t>(v)}};
      return JsonValue{int64_t{v}};
    }
    case PhysicalType::kInt64: {
      const int64_t v = LoadLE<int64_t>(p);
      if (IsDecimal(l)) return Str(DecimalText(BigEndian(static_cast<uint64_t>(v), 8), l.scale));
      if (IsUnsigned(l) && v < 0) {
        return JsonValue{JsonValue::BigInt{std::to_string(static_cast<uint64_t>(v))}};
      }
      return JsonValue{v};
    }
    case PhysicalType::kInt96:
      return JsonValue{Int96ToUnixNanos(Int96{LoadLE<uint64_t>(p), LoadLE<uint32_t>(p + 8)})};
    case PhysicalType::kFloat: {
      float f;
      std::memcpy(&f, p, 4);
      return Str(PyFloatRepr(f));
    }
    case PhysicalType::kDouble: {
      double d;
      std::memcpy(&d, p, 8);
      return Str(PyFloatRepr(d));
    }
    case PhysicalType::kByteArray: {
      const std::string_view b = c.binary[slot];
      if (IsDecimal(l)) return Str(DecimalText(b, l.scale));
      if (IsText(l)) return Str(std::string(b));
      return JsonValue{JsonValue::Object{{"hex", Str(HexEncode(b))}}};
    }
    case PhysicalType::kFixedLenByteArray: {
      const std::string_view b = c.fixed_value(slot);
      if (l.logical_type.kind == LogicalType::Kind::kFloat16) {
        return Str(PyFloatRepr(HalfToDouble(LoadLE<uint16_t>(b.data()))));
      }
      if (IsDecimal(l)) return Str(DecimalText(b, l.scale));
      return JsonValue{JsonValue::Object{{"hex", Str(HexEncode(b))}}};
    }
  }
  return JsonValue{};
}

JsonValue Slot(const ColumnBuffer& c, size_t level, size_t slot) {
  if (level == c.list_depth) return Leaf(c, slot);
  const ListSlots& list = c.lists[level];
  if (!list.validity[slot]) return JsonValue{};
  JsonValue::Array items;
  for (int64_t i = list.offsets[slot]; i < list.offsets[slot + 1]; ++i) {
    items.push_back(Slot(c, level + 1, static_cast<size_t>(i)));
  }
  return JsonValue{std::move(items)};
}

}  // namespace

Result<JsonValue> RowAsJson(const ColumnBuffer& column, size_t row) {
  if (row >= column.num_rows) return OutOfRangeError("row " + std::to_string(row));
  return Slot(column, 0, row);
}

}  // namespace sluice::parquet::testing
