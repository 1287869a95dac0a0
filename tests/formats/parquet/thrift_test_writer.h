// A minimal Thrift compact-protocol writer for the tests: builds the
// hand-made footers and page headers that the decoders are checked against
// (valid ones, and ones broken in one precise place).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::parquet::testing {

class ThriftWriter {
 public:
  std::string bytes;

  void Varint(uint64_t v) {
    while (v >= 0x80) {
      bytes.push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    bytes.push_back(static_cast<char>(v));
  }
  void Zigzag(int64_t v) {
    Varint((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63));
  }
  // A field header; ids step by delta when they can, else the long form.
  void Field(int16_t id, uint8_t type) {
    const int delta = id - last_.back();
    if (delta > 0 && delta <= 15) {
      bytes.push_back(static_cast<char>((delta << 4) | type));
    } else {
      bytes.push_back(static_cast<char>(type));
      Zigzag(id);
    }
    last_.back() = id;
  }
  void BeginStruct() { last_.push_back(0); }
  void EndStruct() {
    bytes.push_back(0);
    last_.pop_back();
  }
  void I32(int16_t id, int32_t v) { Field(id, 5); Zigzag(v); }
  void I64(int16_t id, int64_t v) { Field(id, 6); Zigzag(v); }
  void I16(int16_t id, int16_t v) { Field(id, 4); Zigzag(v); }
  void I8(int16_t id, int8_t v) { Field(id, 3); bytes.push_back(static_cast<char>(v)); }
  void Bool(int16_t id, bool v) { Field(id, v ? 1 : 2); }
  void Double(int16_t id, double v) {
    Field(id, 7);
    char b[8];
    std::memcpy(b, &v, 8);
    bytes.append(b, 8);
  }
  void Binary(int16_t id, std::string_view v) {
    Field(id, 8);
    Varint(v.size());
    bytes.append(v);
  }
  void Struct(int16_t id) { Field(id, 12); BeginStruct(); }
  void ListHeader(uint8_t element_type, uint64_t count) {
    if (count < 15) {
      bytes.push_back(static_cast<char>((count << 4) | element_type));
    } else {
      bytes.push_back(static_cast<char>(0xf0 | element_type));
      Varint(count);
    }
  }
  void List(int16_t id, uint8_t element_type, uint64_t count) {
    Field(id, 9);
    ListHeader(element_type, count);
  }
  void I32List(int16_t id, const std::vector<int32_t>& v) {
    List(id, 5, v.size());
    for (int32_t x : v) Zigzag(x);
  }
  void StringList(int16_t id, const std::vector<std::string>& v) {
    List(id, 8, v.size());
    for (const std::string& s : v) {
      Varint(s.size());
      bytes.append(s);
    }
  }

 private:
  std::vector<int16_t> last_{0};
};

}  // namespace sluice::parquet::testing
