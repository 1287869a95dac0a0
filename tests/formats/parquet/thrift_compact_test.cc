// The Thrift compact decoder on hand-made bytes: every type, field id deltas
// and the long form, skipping, and each limit with its exact error.
#include "formats/parquet/thrift_compact.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "tests/formats/parquet/thrift_test_writer.h"

namespace sluice::parquet {
namespace {

using testing::ThriftWriter;

struct Seen {
  bool t = false, f = false;
  int8_t i8 = 0;
  int16_t i16 = 0;
  int32_t i32 = 0;
  int64_t i64 = 0;
  double d = 0;
  std::string s;
  std::vector<int32_t> list;
  std::vector<bool> bools;
  int16_t far_id = 0;
};

Status Decode(std::string_view bytes, Seen* out, ThriftLimits limits = {}) {
  ThriftCompactDecoder d(bytes, limits);
  Status s = d.ReadStruct("Test", [&](int16_t id, ThriftType type) -> Status {
    switch (id) {
      case 1: return d.ReadBool(type, &out->t);
      case 2: return d.ReadBool(type, &out->f);
      case 3: return d.ReadI8(type, &out->i8);
      case 4: return d.ReadI16(type, &out->i16);
      case 5: return d.ReadI32(type, &out->i32);
      case 6: return d.ReadI64(type, &out->i64);
      case 7: return d.ReadDouble(type, &out->d);
      case 8: return d.ReadString(type, &out->s);
      case 9:
        return d.ReadList(type, ThriftType::kI32, [&](ThriftType e) {
          int32_t v = 0;
          SLUICE_RETURN_IF_ERROR(d.ReadI32(e, &v));
          out->list.push_back(v);
          return Status::Ok();
        });
      case 10:
        return d.ReadList(type, ThriftType::kBoolTrue, [&](ThriftType e) {
          bool v = false;
          SLUICE_RETURN_IF_ERROR(d.ReadBool(e, &v));
          out->bools.push_back(v);
          return Status::Ok();
        });
      case 300:
        out->far_id = id;
        return d.Skip(type);
      default:
        return d.Skip(type);
    }
  });
  if (s.ok() && d.remaining() != 0) return d.Error("trailing bytes");
  return s;
}

TEST(ThriftCompact, DecodesEveryTypeWithDeltasAndTheLongForm) {
  ThriftWriter w;
  w.BeginStruct();
  w.Bool(1, true);
  w.Bool(2, false);
  w.I8(3, -7);
  w.I16(4, -32768);
  w.I32(5, 2147483647);
  w.I64(6, INT64_MIN);
  w.Double(7, -1.5);
  w.Binary(8, std::string("a\0b", 3));
  w.I32List(9, {0, -1, 1, 1000000});
  w.List(10, 1, 3);  // bools in a list are one byte each: 1 true, 2 or 0 false
  w.bytes += "\x01\x02";
  w.bytes.push_back('\0');
  w.I32(300, 5);  // delta > 15: the long form
  w.EndStruct();
  Seen s;
  ASSERT_TRUE(Decode(w.bytes, &s).ok()) << Decode(w.bytes, &s).ToString();
  EXPECT_TRUE(s.t);
  EXPECT_FALSE(s.f);
  EXPECT_EQ(s.i8, -7);
  EXPECT_EQ(s.i16, -32768);
  EXPECT_EQ(s.i32, 2147483647);
  EXPECT_EQ(s.i64, INT64_MIN);
  EXPECT_EQ(s.d, -1.5);
  EXPECT_EQ(s.s, std::string("a\0b", 3));
  EXPECT_EQ(s.list, (std::vector<int32_t>{0, -1, 1, 1000000}));
  EXPECT_EQ(s.bools, (std::vector<bool>{true, false, false}));
  EXPECT_EQ(s.far_id, 300);
}

TEST(ThriftCompact, ExactBytesOfAShortStruct) {
  // field 5 i32 = -2 (delta 5, zigzag 3), field 8 binary "hi" (delta 3),
  // field 1 bool true in the long form (ids may go down), stop.
  const std::string bytes("\x55\x03\x38\x02hi\x01\x02\x00", 9);
  Seen s;
  ASSERT_TRUE(Decode(bytes, &s).ok());
  EXPECT_EQ(s.i32, -2);
  EXPECT_EQ(s.s, "hi");
  EXPECT_TRUE(s.t);
}

TEST(ThriftCompact, SkipsUnknownFieldsOfEveryType) {
  ThriftWriter w;
  w.BeginStruct();
  w.I32(20, 1);
  w.Double(21, 2.0);
  w.Bool(22, true);
  w.I8(23, 1);
  w.Binary(24, "skip me");
  w.StringList(25, {"a", "bc"});
  w.Struct(26);
  w.I64(1, 9);
  w.Struct(2);
  w.List(1, 12, 2);  // list of two structs
  w.BeginStruct(); w.Bool(1, false); w.EndStruct();
  w.BeginStruct(); w.EndStruct();
  w.EndStruct();
  w.EndStruct();
  w.Field(27, 11);  // map<i32, binary> of 2 entries
  w.Varint(2);
  w.bytes.push_back(static_cast<char>(0x58));
  w.Zigzag(1); w.Varint(1); w.bytes += "x";
  w.Zigzag(2); w.Varint(0);
  w.Field(28, 11);  // an empty map is one byte
  w.Varint(0);
  w.Field(29, 10);  // set<bool>
  w.ListHeader(1, 2);
  w.bytes += "\x01\x02";
  w.I32(5, 42);
  w.EndStruct();
  Seen s;
  Status st = Decode(w.bytes, &s);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(s.i32, 42);
}

std::string Err(std::string_view bytes, ThriftLimits limits = {}) {
  Seen s;
  return Decode(bytes, &s, limits).ToString();
}

TEST(ThriftCompact, ErrorsNameTheOffsetAndTheField) {
  EXPECT_EQ(Err(""), "corrupt: Test field 0: offset 0: struct runs past the end of the input (no stop)");
  EXPECT_EQ(Err(std::string("\x55\x03", 2)),
            "corrupt: Test field 5: offset 2: struct runs past the end of the input (no stop)");
  EXPECT_EQ(Err("\x55\x80"), "corrupt: Test field 5: offset 1: varint runs past the end of the input");
  EXPECT_EQ(Err("\x55\x80\x80\x80\x80\x10"), "corrupt: Test field 5: offset 1: varint 4294967296 too large for an i32");
  EXPECT_EQ(Err("\x88\x05hi"), "corrupt: Test field 8: offset 1: binary of 5 bytes with 2 left");
  EXPECT_EQ(Err("\x58\x01x"), "corrupt: Test field 5: offset 1: expected i32, found binary");
  EXPECT_EQ(Err("\x1d"), "corrupt: Test field 0: offset 0: field of unknown type 13");
  EXPECT_EQ(Err("\x10"), "corrupt: Test field 0: offset 0: stop byte with a field id delta");
  EXPECT_EQ(Err("\xa9\x21\x01\x03"),
            "corrupt: Test field 10: element 1: offset 3: bool byte 3 is not 0, 1 or 2");
  EXPECT_EQ(Err(std::string("\x99\xf5\xff\xff\xff\x0f\x00", 7)),
            "corrupt: Test field 9: offset 1: list of 33554431 elements, more than the limit of 16777216");
  EXPECT_EQ(Err(std::string("\x99\xf5\x64\x00", 4)),
            "corrupt: Test field 9: offset 1: list of 100 i32 elements with 1 bytes left");
  EXPECT_EQ(Err(std::string("\x99\x18\x00", 3)),
            "corrupt: Test field 9: offset 1: list of binary, expected a list of i32");
  EXPECT_EQ(Err("\x66\x80\x80\x80\x80\x80\x80\x80\x80\x80\x02"),
            "corrupt: Test field 6: offset 1: varint longer than 64 bits");
}

TEST(ThriftCompact, LimitsBinarySizeAndNestingDepth) {
  ThriftLimits small;
  small.max_binary_bytes = 3;
  EXPECT_EQ(Err(std::string("\x88\x04" "abcd\x00", 7), small),
            "corrupt: Test field 8: offset 1: binary of 4 bytes, more than the limit of 3");
  // 40 nested structs in an unknown field: refused at depth 32.
  std::string nested = "\xfc";
  for (int i = 0; i < 40; ++i) nested += "\x1c";
  nested += std::string(41, '\0');
  nested += '\0';
  const std::string e = Err(nested);
  EXPECT_NE(e.find("structs and containers nested deeper than 32"), std::string::npos) << e;
  EXPECT_EQ(e.rfind("corrupt: Test field 15: struct field 1: ", 0), 0u) << e;
}

// SkipQuickAsBefore steps over a value equal to the one it kept only when
// read in the same state: for another type, depth or limits, or a value cut
// short, the skip runs (and answers for those bytes).
TEST(ThriftCompact, AValueSkippedBeforeIsSteppedOverOnlyInTheSameState) {
  ThriftWriter w;  // a struct: a binary of 4 bytes and a list of two i32s
  w.BeginStruct();
  w.Binary(1, "abcd");
  w.I32List(2, {7, -7});
  w.EndStruct();
  const std::string value = w.bytes;
  ThriftLimits three;
  three.max_depth = 3;
  ThriftCompactDecoder::SkippedValue last;
  int skips = 0;
  const auto step = [&](ThriftCompactDecoder& d, ThriftType type) {
    return d.SkipQuickAsBefore(type, &last, [&] {
      ++skips;
      return d.SkipQuick(type);
    });
  };
  {  // twice in a row: skipped, then stepped over
    const std::string two = value + value;
    ThriftCompactDecoder d(two, three);
    ASSERT_TRUE(step(d, ThriftType::kStruct));
    EXPECT_EQ(d.offset(), value.size());
    ASSERT_TRUE(step(d, ThriftType::kStruct));
    EXPECT_EQ(d.offset(), two.size());
    EXPECT_EQ(skips, 1);
    EXPECT_EQ(last.bytes, value);
  }
  {  // in another buffer of the same limits, as in the next file's footer
    ThriftCompactDecoder d(value, three);
    ASSERT_TRUE(step(d, ThriftType::kStruct));
    EXPECT_EQ(d.offset(), value.size());
    EXPECT_EQ(skips, 1);
  }
  {  // the same bytes as a binary: its length is their first byte
    const std::string padded = value + std::string(30, 'x');
    ThriftCompactDecoder d(padded, three);
    ASSERT_TRUE(step(d, ThriftType::kBinary));
    EXPECT_EQ(d.offset(), 1 + static_cast<size_t>(value[0]));
    EXPECT_EQ(skips, 2);
  }
  last = {};
  ASSERT_TRUE([&] {  // kept again as a struct at depth 0
    ThriftCompactDecoder d(value, three);
    return step(d, ThriftType::kStruct);
  }());
  EXPECT_EQ(skips, 3);
  {  // inside two structs its list is at depth 4, past the limit
    const std::string nested = "\x1c\x1c" + value + std::string(2, '\0');
    ThriftCompactDecoder d(nested, three);
    bool inner = true;
    EXPECT_FALSE(d.ReadStructQuick([&](int16_t, ThriftType) {
      return d.ReadStructQuick([&](int16_t, ThriftType t) { return inner = step(d, t); });
    }));
    EXPECT_FALSE(inner);
    EXPECT_EQ(skips, 4);
  }
  {  // under limits that refuse its binary
    ThriftLimits small = three;
    small.max_binary_bytes = 3;
    ThriftCompactDecoder d(value, small);
    EXPECT_FALSE(step(d, ThriftType::kStruct));
    EXPECT_EQ(skips, 5);
  }
  {  // cut short by its last byte
    ThriftCompactDecoder d(std::string_view(value).substr(0, value.size() - 1), three);
    EXPECT_FALSE(step(d, ThriftType::kStruct));
    EXPECT_EQ(skips, 6);
  }
  EXPECT_EQ(last.bytes, value);
}

TEST(ThriftCompact, TruncationAtEveryByteIsAnError) {
  ThriftWriter w;
  w.BeginStruct();
  w.I64(6, 1234567890123);
  w.Double(7, 3.25);
  w.Binary(8, "hello");
  w.I32List(9, {1, 2, 3});
  w.Struct(40);
  w.StringList(2, {"x"});
  w.EndStruct();
  w.EndStruct();
  Seen ok;
  ASSERT_TRUE(Decode(w.bytes, &ok).ok());
  for (size_t n = 0; n < w.bytes.size(); ++n) {
    Seen s;
    Status st = Decode(std::string_view(w.bytes).substr(0, n), &s);
    EXPECT_TRUE(IsCorrupt(st)) << n;
  }
}

// Skip, SkipStruct and SkipList first walk without making a Status and
// walk again, checked, only on a fault: on every truncation and every
// single-byte change of a value using every type (and under tight
// limits), each answers as its checked walk does, with the same error
// text, or OK at the same offset.
TEST(ThriftCompact, EveryQuickSkipAnswersAsItsCheckedWalkOnEveryDamagedByte) {
  ThriftWriter w;
  w.ListHeader(12, 2);  // a list of two structs; the first uses every type
  w.BeginStruct();
  w.Bool(1, true);
  w.Bool(2, false);
  w.I8(3, -7);
  w.I16(4, -300);
  w.I32(5, 70000);
  w.I64(6, -1234567890123);
  w.Double(7, 2.5);
  w.Binary(8, "abc");
  w.I32List(9, {1, -200, 30000});
  w.StringList(10, {"x", "yz"});
  w.List(11, 1, 2);  // bools in a list: a byte each
  w.bytes += "\x01\x02";
  w.Field(12, 11);  // map<i32, binary> of 2 entries
  w.Varint(2);
  w.bytes.push_back(static_cast<char>(0x58));
  w.Zigzag(1); w.Varint(1); w.bytes += "k";
  w.Zigzag(-2); w.Varint(0);
  w.Field(13, 11);  // an empty map
  w.Varint(0);
  w.Struct(14);
  w.Struct(1);
  w.I32(300, 9);  // the long form of a field id
  w.EndStruct();
  w.EndStruct();
  w.Field(15, 10);  // set<i16>
  w.ListHeader(4, 1);
  w.Zigzag(5);
  w.EndStruct();
  w.BeginStruct();
  w.EndStruct();
  const std::string list = w.bytes;
  const std::string one = list.substr(1, list.size() - 2);  // the first struct
  const std::string ints("\x35\x02\x03\x04", 4);  // list<i32> {1, -2, 2}

  ThriftLimits tight;
  tight.max_depth = 3;
  tight.max_container_elements = 2;
  tight.max_binary_bytes = 2;
  using Walk = std::function<Status(ThriftCompactDecoder&)>;
  struct Pair {
    std::string bytes;
    Walk quick, checked;
  };
  const auto struct_checked = [](ThriftCompactDecoder& d, std::string_view name) {
    return d.ReadStruct(name, [&](int16_t, ThriftType t) { return d.SkipChecked(t); });
  };
  const std::vector<Pair> pairs = {
      {one, [](auto& d) { return d.Skip(ThriftType::kStruct); },
       [](auto& d) { return d.SkipChecked(ThriftType::kStruct); }},
      {list, [](auto& d) { return d.Skip(ThriftType::kList); },
       [](auto& d) { return d.SkipChecked(ThriftType::kList); }},
      {one, [](auto& d) { return d.SkipStruct(ThriftType::kStruct, "Named"); },
       [&](auto& d) { return struct_checked(d, "Named"); }},
      {list, [](auto& d) { return d.SkipList(ThriftType::kList, ThriftType::kStruct, "Elem"); },
       [&](auto& d) {
         return d.ReadList(ThriftType::kList, ThriftType::kStruct, [&](ThriftType e) -> Status {
           SLUICE_RETURN_IF_ERROR(d.ExpectType(e, ThriftType::kStruct));
           return struct_checked(d, "Elem");
         });
       }},
      {ints, [](auto& d) { return d.SkipList(ThriftType::kSet, ThriftType::kI32); },
       [](auto& d) {
         return d.ReadList(ThriftType::kSet, ThriftType::kI32,
                           [&](ThriftType e) { return d.SkipChecked(e); });
       }},
  };
  const auto answer = [](const std::string& bytes, ThriftLimits limits, const Walk& walk) {
    ThriftCompactDecoder d(bytes, limits);
    const Status s = walk(d);
    return s.ok() ? "ok at " + std::to_string(d.offset()) : s.ToString();
  };
  size_t cases = 0, faults = 0;
  for (const Pair& p : pairs) {
    std::vector<std::string> inputs;
    for (size_t n = 0; n <= p.bytes.size(); ++n) inputs.push_back(p.bytes.substr(0, n));
    for (size_t i = 0; i < p.bytes.size(); ++i) {
      const auto b = static_cast<uint8_t>(p.bytes[i]);
      for (int v : {0x00, 0x01, 0x02, 0x03, 0x0c, 0x0d, 0x0f, 0x10, 0x19, 0x1a, 0x1b, 0x1c,
                    0x7f, 0x80, 0xf9, 0xff, b + 1, b - 1, b ^ 0x80}) {
        std::string m = p.bytes;
        m[i] = static_cast<char>(v);
        inputs.push_back(m);
      }
    }
    for (const std::string& in : inputs) {
      for (const ThriftLimits& limits : {ThriftLimits{}, tight}) {
        const std::string want = answer(in, limits, p.checked);
        ASSERT_EQ(answer(in, limits, p.quick), want) << ::testing::PrintToString(in);
        ++cases;
        faults += want.rfind("ok at", 0) != 0;
      }
    }
  }
  // The walks met both answers, many times over.
  EXPECT_GT(cases, 4000u);
  EXPECT_GT(faults, 1000u);
  EXPECT_GT(cases - faults, 1000u);
}

// The quick reads take one- and two-byte varints inline: at every length
// boundary, with every truncation, an overlong two-byte zero and a value
// too wide for the type, ReadI16Quick, ReadI32Quick, ReadI64Quick and
// SkipQuick answer as the checked reads: the same value and offset, or
// false where they fail.
TEST(ThriftCompact, QuickIntegerReadsAnswerAsTheCheckedAtEveryVarintLength) {
  std::vector<std::string> inputs = {std::string("\x80\x00", 2), std::string("\xff\x00", 2),
                                     "\x80", "\xff", std::string("\x80\x80\x00", 3)};
  for (int64_t v : {int64_t{0}, int64_t{-1}, int64_t{63}, int64_t{-64}, int64_t{64},
                    int64_t{-65}, int64_t{8191}, int64_t{-8192}, int64_t{8192}, int64_t{-8193},
                    int64_t{32767}, int64_t{-32768}, int64_t{32768}, int64_t{1} << 20,
                    int64_t{INT32_MAX}, int64_t{INT32_MIN}, int64_t{INT32_MAX} + 1,
                    int64_t{INT64_MAX}, int64_t{INT64_MIN}}) {
    ThriftWriter w;
    w.Zigzag(v);
    for (size_t n = 0; n <= w.bytes.size(); ++n) inputs.push_back(w.bytes.substr(0, n));
    inputs.push_back(w.bytes + "\x05");  // a byte after the varint is not read
  }
  const auto answer = [](const std::string& bytes, ThriftType type, bool quick) {
    ThriftCompactDecoder d(bytes);
    int64_t v = 0;
    bool ok = false;
    if (type == ThriftType::kI16) {
      int16_t x = 0;
      ok = quick ? d.ReadI16Quick(type, &x) : d.ReadI16(type, &x).ok();
      v = x;
    } else if (type == ThriftType::kI32) {
      int32_t x = 0;
      ok = quick ? d.ReadI32Quick(type, &x) : d.ReadI32(type, &x).ok();
      v = x;
    } else {
      ok = quick ? d.ReadI64Quick(type, &v) : d.ReadI64(type, &v).ok();
    }
    return ok ? std::to_string(v) + " at " + std::to_string(d.offset()) : std::string("fault");
  };
  const auto skipped = [](const std::string& bytes, ThriftType type, bool quick) {
    ThriftCompactDecoder d(bytes);
    const bool ok = quick ? d.SkipQuick(type) : d.SkipChecked(type).ok();
    return ok ? "at " + std::to_string(d.offset()) : std::string("fault");
  };
  size_t two_byte_values = 0;
  for (const std::string& in : inputs) {
    for (ThriftType t : {ThriftType::kI16, ThriftType::kI32, ThriftType::kI64}) {
      const std::string want = answer(in, t, false);
      EXPECT_EQ(answer(in, t, true), want) << ::testing::PrintToString(in) << " as "
                                           << ThriftTypeName(t);
      EXPECT_EQ(skipped(in, t, true), skipped(in, t, false)) << ::testing::PrintToString(in);
      two_byte_values += want.ends_with(" at 2");
    }
  }
  // Spot checks of the answers themselves, the checked reads included.
  EXPECT_EQ(answer(std::string("\x80\x01", 2), ThriftType::kI32, true), "64 at 2");
  EXPECT_EQ(answer(std::string("\xff\x7f", 2), ThriftType::kI16, true), "-8192 at 2");
  EXPECT_EQ(answer(std::string("\x80\x00", 2), ThriftType::kI64, true), "0 at 2");
  EXPECT_EQ(answer("\x80", ThriftType::kI64, true), "fault");
  EXPECT_GT(two_byte_values, 20u);
}

}  // namespace
}  // namespace sluice::parquet
