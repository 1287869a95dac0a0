// A strict decoder of the Thrift compact protocol, as Parquet stores its
// footer and page headers.
//
// Our own rather than Apache Thrift's C++ library: no generated code, no
// exceptions, and limits a hostile file cannot talk past (nesting depth,
// container sizes checked against the bytes that remain, binary sizes), with
// the byte offset of every error.
//
// Wire format (the compact protocol): a struct is a run of field headers,
// each a byte whose high nibble is the field id's delta from the previous
// field (0 = a zigzag varint i16 id follows) and whose low nibble is the
// value's type; type 0 ends the struct. Booleans in a field header carry
// their value in the type (1 true, 2 false); in a list they are one byte.
// i16/i32/i64 are zigzag varints, i8 one byte, double 8 bytes little-endian,
// binary a varint length and the bytes. A list/set header is a byte with the
// element type in its low nibble and the count in its high nibble (15 = a
// varint count follows); a map header is a varint count and, when not empty,
// a byte with the key type (high nibble) and value type (low nibble).
//
// A decoder reads one buffer that it does not own (it must outlive the
// decoder and every view ReadBinary returns). Not thread-safe; cheap to make.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace sluice::parquet {

// The compact protocol's type codes.
enum class ThriftType : uint8_t {
  kStop = 0,
  kBoolTrue = 1,  // also "bool" as a container's element type
  kBoolFalse = 2,
  kI8 = 3,
  kI16 = 4,
  kI32 = 5,
  kI64 = 6,
  kDouble = 7,
  kBinary = 8,
  kList = 9,
  kSet = 10,
  kMap = 11,
  kStruct = 12,
};

// "i32", "struct", ...; "type 14" for a code that is not one.
std::string ThriftTypeName(ThriftType t);

struct ThriftLimits {
  uint32_t max_depth = 32;                      // nested structs and containers
  uint32_t max_container_elements = 1u << 24;   // per list, set or map
  uint32_t max_binary_bytes = 64u << 20;        // per binary or string

  bool operator==(const ThriftLimits&) const = default;
};

class ThriftCompactDecoder {
 public:
  explicit ThriftCompactDecoder(std::string_view bytes, ThriftLimits limits = {})
      : data_(bytes), limits_(limits) {}

  size_t offset() const { return pos_; }
  size_t remaining() const { return data_.size() - pos_; }

  // Reads one struct: calls `on_field(int16_t id, ThriftType type)` for each
  // field, which must consume the value (a Read* of that type, or Skip).
  // An error from on_field gets "<name> field <id>: " prepended, so a nested
  // error reads as a path: "FileMetaData field 4: RowGroup field 1: ...".
  template <typename F>
  Status ReadStruct(std::string_view name, F&& on_field);

  // Values of a field whose header said `type`; a different type is an error
  // ("expected i32, found binary"). In a container pass the element type.
  Status ReadBool(ThriftType type, bool* out);  // field header or element
  Status ReadI8(ThriftType type, int8_t* out);
  Status ReadI16(ThriftType type, int16_t* out);
  Status ReadI32(ThriftType type, int32_t* out);
  Status ReadI64(ThriftType type, int64_t* out);
  Status ReadDouble(ThriftType type, double* out);
  // A view into the decoder's buffer.
  Status ReadBinary(ThriftType type, std::string_view* out);
  Status ReadString(ThriftType type, std::string* out);

  // Reads a list (or set) whose elements must be `element`, calling
  // `on_element(ThriftType element)` once per element, which must consume it.
  // Reading a bool element: ReadBool(kBoolTrue, &b).
  template <typename F>
  Status ReadList(ThriftType type, ThriftType element, F&& on_element);
  // The same, calling `on_count(uint32_t count)` once the header is read,
  // before the first element (to reserve room: a count is at most the
  // bytes that remain, not what its elements will take in memory); an
  // error it returns is the list's.
  template <typename C, typename F>
  Status ReadList(ThriftType type, ThriftType element, C&& on_count, F&& on_element);

  // Skips one value of any type, containers and structs included.
  Status Skip(ThriftType type);
  // Skips a struct field's value (the header said `type`, which must be
  // struct) as ReadStruct(name, ...) skipping every field would: the same
  // checks, and errors named "<name> field <id>: ...".
  Status SkipStruct(ThriftType type, std::string_view name);
  // Skips a list (or set) as ReadList(type, element, ...) would, each
  // element skipped; struct elements as SkipStruct(element, struct_name)
  // when a name is given.
  Status SkipList(ThriftType type, ThriftType element, std::string_view struct_name = {});
  // Skip's checked walk alone, which makes a Status at every value: Skip
  // answers what it answers, and uses it only to name a fault.
  Status SkipChecked(ThriftType type);

  // The quick reads: each accepts exactly what its checked twin above
  // accepts and reads the same value, but answers only a bool, making no
  // Status (nor its string) a value. For a caller that walks a whole value
  // quick and, only on false, walks it again from where it began (Here,
  // Back) with the checked reads, so that every error keeps its text (the
  // index's footer decode, metadata_decoder.cc). After false the position,
  // depth and *out are unspecified.
  bool ReadI16Quick(ThriftType type, int16_t* out) {
    int64_t v = 0;
    if (type != ThriftType::kI16 || !ZigzagQuick(16, &v)) return false;
    *out = static_cast<int16_t>(v);
    return true;
  }
  bool ReadI32Quick(ThriftType type, int32_t* out) {
    int64_t v = 0;
    if (type != ThriftType::kI32 || !ZigzagQuick(32, &v)) return false;
    *out = static_cast<int32_t>(v);
    return true;
  }
  bool ReadI64Quick(ThriftType type, int64_t* out) {
    return type == ThriftType::kI64 && ZigzagQuick(64, out);
  }
  bool ReadBinaryQuick(ThriftType type, std::string_view* out) {
    uint64_t n = 0;
    if (type != ThriftType::kBinary || !VarintQuick(&n) || n > limits_.max_binary_bytes ||
        n > remaining()) {
      return false;
    }
    *out = data_.substr(pos_, n);
    pos_ += n;
    return true;
  }
  // ReadStruct's twin: `on_field(int16_t id, ThriftType type) -> bool`.
  template <typename F>
  bool ReadStructQuick(F&& on_field);
  // ReadList's twin (with on_count): `on_count(uint32_t) -> bool`,
  // `on_element(ThriftType) -> bool`.
  template <typename C, typename F>
  bool ReadListQuick(ThriftType type, ThriftType element, C&& on_count, F&& on_element);
  // Skip's, SkipStruct's and SkipList's quick walks alone. A scalar is
  // skipped inline (most of what a footer's index skips: statistics,
  // sizes, page stats); a container or struct by SkipNestedQuick.
  bool SkipQuick(ThriftType type) {
    switch (type) {
      case ThriftType::kBoolTrue:
      case ThriftType::kBoolFalse:
        // A field's bool is its header's type; in a container a byte: 0, 1 or 2.
        if (!in_container_bool_) return true;
        if (pos_ >= data_.size() || static_cast<uint8_t>(data_[pos_]) > 2) return false;
        ++pos_;
        return true;
      case ThriftType::kI8:
        if (pos_ >= data_.size()) return false;
        ++pos_;
        return true;
      case ThriftType::kI16: return ZigzagQuick(16);
      case ThriftType::kI32: return ZigzagQuick(32);
      case ThriftType::kI64: return ZigzagQuick(64);
      case ThriftType::kDouble:
        if (remaining() < 8) return false;
        pos_ += 8;
        return true;
      case ThriftType::kBinary: {
        uint64_t n = 0;
        if (!VarintQuick(&n) || n > limits_.max_binary_bytes || n > remaining()) return false;
        pos_ += n;
        return true;
      }
      default: return SkipNestedQuick(type);
    }
  }
  bool SkipStructQuick(ThriftType type) {
    return (type == ThriftType::kStruct) && SkipStructQuick();
  }
  bool SkipListQuick(ThriftType type, ThriftType element);

  // A value a quick skip accepted, kept by its bytes and the state it was
  // read in, to step over the same value again after one comparison
  // (SkipQuickAsBefore): a writer repeats many values a footer skips (a
  // file's key/value metadata, a chunk's encodings and encoding stats).
  struct SkippedValue {
    std::string bytes;  // empty: none yet
    ThriftType type = ThriftType::kStop;
    uint32_t depth = 0;
    bool in_container_bool = false;
    ThriftLimits limits;
  };
  // `skip()`: a quick skip of one value of `type`, the same skip at every
  // call with one `last`. When the bytes at the offset start with
  // last->bytes, read before in the same state (type, depth, container
  // state, limits), steps past them without `skip`: a compact value is
  // self-delimiting and every check of a quick skip depends only on its
  // bytes and that state (its bounds by the bytes left hold whenever the
  // value's bytes are all there, MinElementBytes being an element's least
  // size), so `skip` would accept them again and end at the same byte.
  // Else `skip` runs and, when it accepts, *last becomes its value.
  template <typename F>
  bool SkipQuickAsBefore(ThriftType type, SkippedValue* last, F&& skip) {
    if (!last->bytes.empty() && last->type == type && last->depth == depth_ &&
        last->in_container_bool == in_container_bool_ && last->limits == limits_ &&
        SkipIfNext(last->bytes)) {
      return true;
    }
    const Mark start = Here();
    if (!skip()) return false;
    last->bytes.assign(data_.substr(start.pos, pos_ - start.pos));
    last->type = type;
    last->depth = start.depth;
    last->in_container_bool = start.in_container_bool;
    last->limits = limits_;
    return true;
  }

  // Where a quick walk began, to walk again from there.
  struct Mark {
    size_t pos;
    uint32_t depth;
    bool in_container_bool;
  };
  Mark Here() const { return {pos_, depth_, in_container_bool_}; }
  void Back(const Mark& m) {
    pos_ = m.pos;
    depth_ = m.depth;
    in_container_bool_ = m.in_container_bool;
  }

  // When the bytes at the offset start with `prefix`, steps past them and
  // returns true (a caller that decoded the same bytes before, at the same
  // depth and with the same limits, keeps what it decoded then); else
  // returns false and reads nothing.
  bool SkipIfNext(std::string_view prefix) {
    if (prefix.size() > remaining() || data_.compare(pos_, prefix.size(), prefix) != 0) {
      return false;
    }
    pos_ += prefix.size();
    return true;
  }

  // OK when a field's `found` type is `wanted` (both bool codes are bool).
  Status ExpectType(ThriftType found, ThriftType wanted) const {
    if (found == wanted) return Status::Ok();
    return ExpectTypeSlow(found, wanted);
  }

  // kCorrupt "offset <n>: <what>" at the current offset.
  Status Error(std::string_view what) const { return ErrorAt(pos_, what); }
  Status ErrorAt(size_t offset, std::string_view what) const;

 private:
  // In a container, a bool is one byte rather than a header's type.
  struct ListHeader {
    ThriftType element;
    uint32_t count;
    size_t offset;  // of the header
  };
  // The common cases inline (a one-byte varint, a field header with an id
  // delta): footers are mostly small fields; the rest and every error in
  // the *Slow functions.
  Status ReadVarint(uint64_t* out) {
    if (pos_ < data_.size() && static_cast<uint8_t>(data_[pos_]) < 0x80) {
      *out = static_cast<uint8_t>(data_[pos_++]);
      return Status::Ok();
    }
    return ReadVarintSlow(out);
  }
  Status ReadVarintSlow(uint64_t* out);
  Status ReadZigzag(int bits, int64_t* out) {
    if (pos_ < data_.size() && static_cast<uint8_t>(data_[pos_]) < 0x80) {
      const uint64_t u = static_cast<uint8_t>(data_[pos_++]);  // < 2^7: fits every width
      *out = static_cast<int64_t>(u >> 1) ^ -static_cast<int64_t>(u & 1);
      return Status::Ok();
    }
    return ReadZigzagSlow(bits, out);
  }
  Status ReadZigzagSlow(int bits, int64_t* out);
  Status ReadFieldHeader(int16_t* last_id, int16_t* id, ThriftType* type) {
    if (pos_ < data_.size()) {
      const uint8_t b = static_cast<uint8_t>(data_[pos_]);
      const uint8_t code = b & 0x0f;
      const int delta = b >> 4;
      if (delta != 0 && code >= 1 && code <= 12 && *last_id <= INT16_MAX - delta) {
        ++pos_;
        *id = static_cast<int16_t>(*last_id + delta);
        *last_id = *id;
        *type = static_cast<ThriftType>(code);
        return Status::Ok();
      }
      if (b == 0) {
        ++pos_;
        *type = ThriftType::kStop;
        return Status::Ok();
      }
    }
    return ReadFieldHeaderSlow(last_id, id, type);
  }
  Status ReadFieldHeaderSlow(int16_t* last_id, int16_t* id, ThriftType* type);
  Status ReadListHeader(ThriftType type, ListHeader* out);
  Status ExpectTypeSlow(ThriftType found, ThriftType wanted) const;
  Status Enter();
  void Leave() { --depth_; }
  Status SkipElements(ThriftType element, uint64_t count);
  // The skips first walk with every check the checked walk makes, but
  // answer only whether the bytes pass (no Status, so no string, made a
  // value: most of a footer the index skips is small fields). Only when
  // they do not is the value walked again, checked, from where it began,
  // to make the error. Each Quick* accepts exactly what its checked twin
  // accepts; after false the position is unspecified.
  Status SkipStructChecked(std::string_view name);
  bool SkipStructQuick();
  bool SkipElementsQuick(ThriftType element, uint64_t count);
  // One and two bytes inline: a footer's ids, counts, lengths and small
  // sizes and offsets (below 2^14). Forced inline with the zigzags, where
  // the compiler called them (~30 instructions a call for ~10 of work:
  // the index's decode reads ~45 a footer of 5 columns).
  bool VarintQuick(uint64_t* out) {
    if (pos_ < data_.size()) {
      const uint8_t b0 = static_cast<uint8_t>(data_[pos_]);
      if (b0 < 0x80) {
        *out = b0;
        ++pos_;
        return true;
      }
      if (pos_ + 1 < data_.size()) {
        const uint8_t b1 = static_cast<uint8_t>(data_[pos_ + 1]);
        if (b1 < 0x80) {
          *out = (b0 & 0x7fu) | (uint64_t{b1} << 7);
          pos_ += 2;
          return true;
        }
      }
    }
    return VarintQuickSlow(out);
  }
  bool VarintQuickSlow(uint64_t* out);
  [[gnu::always_inline]] bool ZigzagQuick(int bits) {
    uint64_t u = 0;
    return VarintQuick(&u) && (bits >= 64 || (u >> bits) == 0);
  }
  [[gnu::always_inline]] bool ZigzagQuick(int bits, int64_t* out) {
    uint64_t u = 0;
    if (!VarintQuick(&u) || (bits < 64 && (u >> bits) != 0)) return false;
    *out = static_cast<int64_t>(u >> 1) ^ -static_cast<int64_t>(u & 1);
    return true;
  }
  // ReadFieldHeader's twin.
  bool FieldHeaderQuick(int16_t* last_id, ThriftType* type) {
    if (pos_ >= data_.size()) return false;
    const uint8_t b = static_cast<uint8_t>(data_[pos_++]);
    const uint8_t code = b & 0x0f;
    if (code == 0) {
      *type = ThriftType::kStop;
      return b == 0;
    }
    if (code > 12) return false;
    const int delta = b >> 4;
    if (delta != 0) {
      if (*last_id > INT16_MAX - delta) return false;
      *last_id = static_cast<int16_t>(*last_id + delta);
    } else {
      int64_t v = 0;
      if (!ZigzagQuick(16, &v)) return false;
      *last_id = static_cast<int16_t>(v);
    }
    *type = static_cast<ThriftType>(code);
    return true;
  }
  bool ListHeaderQuick(ListHeader* out);
  // SkipQuick's list, set, map and struct (and false for stop).
  bool SkipNestedQuick(ThriftType type);
  bool EnterQuick() {
    if (depth_ >= limits_.max_depth) return false;
    ++depth_;
    return true;
  }
  static Status FieldContext(const Status& s, std::string_view name, int16_t id);

  std::string_view data_;
  ThriftLimits limits_;
  size_t pos_ = 0;
  uint32_t depth_ = 0;
  bool in_container_bool_ = false;  // ReadBool reads a byte (list element)
};

template <typename F>
Status ThriftCompactDecoder::ReadStruct(std::string_view name, F&& on_field) {
  SLUICE_RETURN_IF_ERROR(Enter());
  const bool outer_in_container = in_container_bool_;
  in_container_bool_ = false;  // a field's bool is in its header again
  int16_t last_id = 0;
  while (true) {
    int16_t id = 0;
    ThriftType type = ThriftType::kStop;
    Status s = ReadFieldHeader(&last_id, &id, &type);
    if (!s.ok()) return FieldContext(s, name, last_id);
    if (type == ThriftType::kStop) break;
    s = on_field(id, type);
    if (!s.ok()) return FieldContext(s, name, id);
  }
  in_container_bool_ = outer_in_container;
  Leave();
  return Status::Ok();
}

template <typename F>
Status ThriftCompactDecoder::ReadList(ThriftType type, ThriftType element, F&& on_element) {
  return ReadList(type, element, [](uint32_t) { return Status::Ok(); }, on_element);
}

template <typename C, typename F>
Status ThriftCompactDecoder::ReadList(ThriftType type, ThriftType element, C&& on_count,
                                      F&& on_element) {
  ListHeader h{};
  SLUICE_RETURN_IF_ERROR(ReadListHeader(type, &h));
  if (h.count > 0 && h.element != element &&
      !(element == ThriftType::kBoolTrue && h.element == ThriftType::kBoolFalse)) {
    return ErrorAt(h.offset, "list of " + ThriftTypeName(h.element) + ", expected a list of " +
                 ThriftTypeName(element));
  }
  SLUICE_RETURN_IF_ERROR(Enter());
  SLUICE_RETURN_IF_ERROR(on_count(h.count));
  for (uint32_t i = 0; i < h.count; ++i) {
    const bool was = in_container_bool_;
    in_container_bool_ = true;
    Status s = on_element(element);
    in_container_bool_ = was;
    if (!s.ok()) return s.WithContext("element " + std::to_string(i));
  }
  Leave();
  return Status::Ok();
}

template <typename F>
bool ThriftCompactDecoder::ReadStructQuick(F&& on_field) {
  if (!EnterQuick()) return false;
  const bool outer_in_container = in_container_bool_;
  in_container_bool_ = false;
  int16_t id = 0;
  while (true) {
    ThriftType type = ThriftType::kStop;
    if (!FieldHeaderQuick(&id, &type)) return false;
    if (type == ThriftType::kStop) break;
    if (!on_field(id, type)) return false;
  }
  in_container_bool_ = outer_in_container;
  --depth_;
  return true;
}

template <typename C, typename F>
bool ThriftCompactDecoder::ReadListQuick(ThriftType type, ThriftType element, C&& on_count,
                                         F&& on_element) {
  ListHeader h{};
  if ((type != ThriftType::kList && type != ThriftType::kSet) || !ListHeaderQuick(&h)) {
    return false;
  }
  if (h.count > 0 && h.element != element &&
      !(element == ThriftType::kBoolTrue && h.element == ThriftType::kBoolFalse)) {
    return false;
  }
  if (!EnterQuick() || !on_count(h.count)) return false;
  const bool was = in_container_bool_;
  in_container_bool_ = true;
  for (uint32_t i = 0; i < h.count; ++i) {
    if (!on_element(element)) return false;
  }
  in_container_bool_ = was;
  --depth_;
  return true;
}

}  // namespace sluice::parquet
