// Encoders and decoders of single fields: exact bytes, exact errors.
#include <gtest/gtest.h>

#include <cmath>

#include "base/bytes.h"
#include "formats/mds/column_decoder.h"
#include "formats/mds/column_encoder.h"

namespace sluice {
namespace {

ColumnEncoding Enc(const char* name) {
  auto e = ParseColumnEncoding(name, "c");
  EXPECT_TRUE(e.ok()) << name;
  return e.ok() ? *e : ColumnEncoding{};
}

std::string Hex(const Result<std::string>& r) {
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? HexEncode(*r) : "<error>";
}

std::string Unhex(std::string_view hex) {
  std::string out;
  EXPECT_TRUE(HexDecode(hex, &out));
  return out;
}

TEST(ColumnEncoder, IntegersLittleEndianWithRangeChecks) {
  EXPECT_EQ(Hex(EncodeInt64(Enc("int"), 123456789)), "15cd5b0700000000");
  EXPECT_EQ(Hex(EncodeInt64(Enc("int8"), -128)), "80");
  EXPECT_EQ(Hex(EncodeInt64(Enc("int16"), -18133)), "2bb9");
  EXPECT_EQ(Hex(EncodeInt64(Enc("int32"), INT32_MIN)), "00000080");
  EXPECT_EQ(Hex(EncodeInt64(Enc("int64"), INT64_MIN)), "0000000000000080");
  EXPECT_EQ(Hex(EncodeInt64(Enc("uint8"), 255)), "ff");
  EXPECT_EQ(Hex(EncodeUInt64(Enc("uint64"), UINT64_MAX)), "ffffffffffffffff");
  EXPECT_EQ(Hex(EncodeUInt64(Enc("uint16"), 51273)), "49c8");
  EXPECT_EQ(Hex(EncodeUInt64(Enc("int8"), 127)), "7f");
  EXPECT_EQ(Hex(EncodeUInt64(Enc("int"), INT64_MAX)), "ffffffffffffff7f");
  EXPECT_EQ(Hex(EncodeInt64(Enc("str_int"), -1)), "2d31");

  struct Bad {
    const char* enc;
    int64_t v;
  };
  for (const Bad& b : {Bad{"int8", 128}, Bad{"int8", -129}, Bad{"int16", 32768},
                       Bad{"int32", int64_t{1} << 31}, Bad{"uint8", 256}, Bad{"uint8", -1},
                       Bad{"uint64", -1}, Bad{"uint32", int64_t{1} << 32}}) {
    auto r = EncodeInt64(Enc(b.enc), b.v);
    ASSERT_FALSE(r.ok()) << b.enc << " " << b.v;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(r.status().message(), "column 'c' (" + std::string(b.enc) + "): value " +
                                        std::to_string(b.v) + " is out of range for " + b.enc);
  }
  EXPECT_FALSE(EncodeUInt64(Enc("int"), uint64_t{1} << 63).ok());
  EXPECT_FALSE(EncodeUInt64(Enc("int16"), 32768).ok());
  EXPECT_FALSE(EncodeUInt64(Enc("uint32"), uint64_t{1} << 32).ok());
  auto wrong = EncodeInt64(Enc("str"), 1);
  EXPECT_EQ(wrong.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(wrong.status().message(), "column 'c' (str): cannot store an integer");
  EXPECT_FALSE(EncodeInt64(Enc("str_float"), 1).ok());
}

TEST(ColumnEncoder, FloatsAsNumpyCasts) {
  EXPECT_EQ(Hex(EncodeDouble(Enc("float16"), 70000.0)), "007c");
  EXPECT_EQ(Hex(EncodeDouble(Enc("float16"), -643.5)), "07e1");
  EXPECT_EQ(Hex(EncodeDouble(Enc("float16"), 6e-08)), "0100");
  EXPECT_EQ(Hex(EncodeDouble(Enc("float16"), NAN)), "007e");
  EXPECT_EQ(Hex(EncodeDouble(Enc("float32"), 1e-07)), "95bfd633");
  EXPECT_EQ(Hex(EncodeDouble(Enc("float32"), 1e39)), "0000807f");
  EXPECT_EQ(Hex(EncodeDouble(Enc("float32"), -0.0)), "00000080");
  EXPECT_EQ(Hex(EncodeDouble(Enc("float64"), 1e-07)), "48afbc9af2d77a3e");
  EXPECT_EQ(Hex(EncodeInt64(Enc("float32"), 16777217)), "0000804b");  // rounds once, to even
  EXPECT_EQ(Hex(EncodeInt64(Enc("float64"), 3)), "0000000000000840");
  auto s = EncodeDouble(Enc("str_float"), 1e-07);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*s, "1e-07");
  EXPECT_EQ(EncodeDouble(Enc("str_float"), -0.0).value(), "-0.0");
  EXPECT_EQ(EncodeDouble(Enc("str_float"), INFINITY).value(), "inf");
  EXPECT_EQ(EncodeDouble(Enc("str_float"), 65504.0).value(), "65504.0");
  EXPECT_FALSE(EncodeDouble(Enc("int"), 1.0).ok());
}

TEST(ColumnEncoder, TextJsonAndRaw) {
  EXPECT_EQ(EncodeText(Enc("str"), "emoji \xf0\x9f\x8e\x89").value(), "emoji \xf0\x9f\x8e\x89");
  auto bad = EncodeText(Enc("str"), "ab\xff");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "column 'c' (str): invalid UTF-8 at byte 2");
  EXPECT_FALSE(EncodeText(Enc("str"), "\xed\xa0\x80").ok());  // a surrogate
  EXPECT_EQ(EncodeText(Enc("str_int"), "-1000000000000000000000000000007").value(),
            "-1000000000000000000000000000007");
  for (const char* t : {"", "-", "01", "-0", "+1", "1.0", "1 "}) {
    EXPECT_FALSE(EncodeText(Enc("str_int"), t).ok()) << t;
  }
  EXPECT_EQ(EncodeText(Enc("str_int"), "0").value(), "0");
  EXPECT_EQ(EncodeText(Enc("str_decimal"), "-0.000").value(), "-0.000");
  EXPECT_EQ(EncodeText(Enc("str_decimal"), "1E+3").value(), "1E+3");
  EXPECT_FALSE(EncodeText(Enc("str_decimal"), "").ok());
  EXPECT_FALSE(EncodeText(Enc("json"), "{}").ok());

  JsonValue obj{JsonValue::Object{{"z", JsonValue{1e100}},
                                  {"a", JsonValue{JsonValue::Array{JsonValue{int64_t{1}},
                                                                   JsonValue{std::string("\xc3\xa9")}}}}}};
  EXPECT_EQ(EncodeJson(Enc("json"), obj).value(), "{\"z\": 1e+100, \"a\": [1, \"\\u00e9\"]}");
  EXPECT_FALSE(EncodeJson(Enc("str"), obj).ok());

  EXPECT_EQ(EncodeRawBytes(Enc("pkl"), std::string("\x80\x04N.", 4)).value(), std::string("\x80\x04N.", 4));
  EXPECT_EQ(EncodeRawBytes(Enc("bytes"), "").value(), "");
  EXPECT_FALSE(EncodeRawBytes(Enc("str"), "x").ok());
}

TEST(ColumnEncoder, PilAndLists) {
  // all_encodings sample 1, column g_list_pil: one 1x4 "1"-mode image.
  auto item = EncodePilImage(1, 4, "L", Unhex("6bb304fe"));
  ASSERT_TRUE(item.ok());
  EXPECT_EQ(HexEncode(*item), "0100000004000000010000004c" "6bb304fe");
  EXPECT_EQ(Hex(EncodeList(Enc("list[pil]"), {*item})),
            "000000000100000011000000" "0100000004000000010000004c6bb304fe");
  EXPECT_EQ(Hex(EncodeList(Enc("list[png]"), {})), "0000000000000000");
  EXPECT_EQ(Hex(EncodeList(Enc("jpeg_array"), {"ab", "c"})), "02000000020000000100000061" "6263");
  EXPECT_EQ(Hex(EncodeList(Enc("jpegarray"), {})), "00000000");
  EXPECT_FALSE(EncodeList(Enc("bytes"), {}).ok());

  EXPECT_EQ(Hex(EncodePil(Enc("pil"), 2, 1, "RGB", "abcdef")), "02000000010000000300000052474261" "6263646566");
  auto short_pixels = EncodePil(Enc("pil"), 2, 2, "RGB", "abcdef");
  ASSERT_FALSE(short_pixels.ok());
  EXPECT_EQ(short_pixels.status().message(),
            "column 'c' (pil): PIL RGB image 2x2 needs 12 pixel bytes, got 6");
  EXPECT_TRUE(EncodePil(Enc("pil"), 3, 1, "XYZ", "anything").ok());  // unknown mode: as given
  EXPECT_FALSE(EncodePil(Enc("png"), 1, 1, "L", "a").ok());
}

TEST(ColumnEncoder, NdarrayHeaderOnlyForWhatTheNameLacks) {
  // README example: ndarray:int16 with shape (1, 4).
  EXPECT_EQ(Hex(EncodeNdArray(Enc("ndarray:int16"), NdDtype::kInt16, {1, 4}, Unhex("30b10cfc6bdfb03b"))),
            "080104" "30b10cfc6bdfb03b");
  EXPECT_EQ(Hex(EncodeNdArray(Enc("ndarray"), NdDtype::kUInt8, {1}, "0")), "08040130");
  EXPECT_EQ(Hex(EncodeNdArray(Enc("ndarray:uint8:5"), NdDtype::kUInt8, {5}, Unhex("a566e9c900"))),
            "a566e9c900");
  // The largest dimension picks the shape word: 300 needs u16, 65536 needs u32.
  std::string d300(600, '\0');
  auto a = EncodeNdArray(Enc("ndarray"), NdDtype::kInt16, {300}, d300);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(HexEncode(a->substr(0, 4)), "11052c01");
  std::string d65536(65536, '\0');
  auto b = EncodeNdArray(Enc("ndarray"), NdDtype::kUInt8, {1, 65536}, d65536);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(HexEncode(b->substr(0, 10)), "080a0100000000000100");

  auto wrong_dtype = EncodeNdArray(Enc("ndarray:int16"), NdDtype::kInt32, {1}, "abcd");
  ASSERT_FALSE(wrong_dtype.ok());
  EXPECT_EQ(wrong_dtype.status().message(),
            "column 'c' (ndarray:int16): array dtype int32 differs from the column's int16");
  EXPECT_FALSE(EncodeNdArray(Enc("ndarray:uint8:5"), NdDtype::kUInt8, {1, 5}, "abcde").ok());
  EXPECT_FALSE(EncodeNdArray(Enc("ndarray"), NdDtype::kUInt8, {}, "").ok());
  EXPECT_FALSE(EncodeNdArray(Enc("ndarray"), NdDtype::kUInt8, {0}, "").ok());
  EXPECT_FALSE(EncodeNdArray(Enc("ndarray"), NdDtype::kUInt8, {2}, "a").ok());
  EXPECT_FALSE(EncodeNdArray(Enc("ndarray"), NdDtype::kUInt8, std::vector<uint64_t>(64, 1), "a").ok());
  EXPECT_FALSE(EncodeNdArray(Enc("bytes"), NdDtype::kUInt8, {1}, "a").ok());
}

TEST(ColumnDecoder, ScalarsAndWrongTypes) {
  EXPECT_EQ(DecodeInt64(Enc("int16"), Unhex("2bb9")).value(), -18133);
  EXPECT_EQ(DecodeInt64(Enc("uint32"), Unhex("ffffffff")).value(), 4294967295);
  EXPECT_EQ(DecodeUInt64(Enc("uint64"), Unhex("86cb3f651127bca8")).value(), 12158636049660103558u);
  EXPECT_EQ(DecodeDouble(Enc("float16"), Unhex("0100")).value(), 0x1p-24);
  EXPECT_EQ(DecodeDouble(Enc("float32"), Unhex("95bfd633")).value(), 1.0000000116860974e-07);
  EXPECT_EQ(DecodeDouble(Enc("str_float"), "1e-07").value(), 1e-07);
  EXPECT_EQ(DecodeDouble(Enc("str_float"), "-inf").value(), -INFINITY);
  EXPECT_TRUE(std::isnan(DecodeDouble(Enc("str_float"), "nan").value()));
  EXPECT_TRUE(std::signbit(DecodeDouble(Enc("str_float"), "-0.0").value()));
  EXPECT_EQ(DecodeDouble(Enc("str_float"), "1e999").value(), INFINITY);

  auto short_int = DecodeInt64(Enc("int"), "abc");
  ASSERT_FALSE(short_int.ok());
  EXPECT_EQ(short_int.status().code(), StatusCode::kCorrupt);
  EXPECT_EQ(short_int.status().message(), "column 'c' (int): field is 3 bytes, expected 8");
  auto not_float = DecodeDouble(Enc("str_float"), "0x1p3");
  ASSERT_FALSE(not_float.ok());
  EXPECT_EQ(not_float.status().message(), "column 'c' (str_float): '0x1p3' is not a float");
  EXPECT_FALSE(DecodeDouble(Enc("str_float"), "").ok());
  EXPECT_FALSE(DecodeDouble(Enc("str_float"), "1e").ok());
  auto wrong = DecodeUInt64(Enc("int8"), "a");
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(wrong.status().message(), "column 'c' (int8): cannot be decoded as an unsigned integer");
  auto bad_utf8 = DecodeText(Enc("str"), "ok\xc3");
  ASSERT_FALSE(bad_utf8.ok());
  EXPECT_EQ(bad_utf8.status().message(), "column 'c' (str): invalid UTF-8 at byte 2 of the field");
  EXPECT_FALSE(DecodeRawBytes(Enc("pil"), "").ok());
}

TEST(ColumnDecoder, StrFloatReadsAsPythonsFloatDoes) {
  // One parser for Python's float() text (formats/json/py_number_text.h):
  // the MDS decoder once refused the underscores the CSV reader took.
  EXPECT_EQ(DecodeDouble(Enc("str_float"), "1_0.5").value(), 10.5);
  EXPECT_EQ(DecodeDouble(Enc("str_float"), " 1_000e-3\n").value(), 1.0);
  EXPECT_EQ(DecodeDouble(Enc("str_float"), "Infinity").value(), INFINITY);
  EXPECT_TRUE(std::signbit(DecodeDouble(Enc("str_float"), "-nan").value()));
  for (const char* bad : {"1__0", "_1", "1_", "0x1p3", "", "1.0.0"}) {
    Result<double> r = DecodeDouble(Enc("str_float"), bad);
    EXPECT_EQ(r.status().message(), "column 'c' (str_float): '" + std::string(bad) +
                                        "' is not a float") << bad;
  }
}

TEST(ColumnDecoder, PilListAndNdarrayBounds) {
  const std::string pil_bytes = Unhex("0200000001000000030000005247426162636465666768");
  auto pil = DecodePil(Enc("pil"), pil_bytes);
  ASSERT_TRUE(pil.ok());
  EXPECT_EQ(pil->mode, "RGB");
  EXPECT_EQ(pil->pixels, "abcdef");  // extra bytes ignored, as Pillow does
  auto pil_short = DecodePil(Enc("pil"), Unhex("02000000010000000300000052474261"));
  ASSERT_FALSE(pil_short.ok());
  EXPECT_EQ(pil_short.status().code(), StatusCode::kCorrupt);
  EXPECT_EQ(pil_short.status().message(),
            "column 'c' (pil): PIL RGB image 2x1 needs 6 pixel bytes, found 1");
  EXPECT_FALSE(DecodePil(Enc("pil"), Unhex("0200000001000000")).ok());
  EXPECT_FALSE(DecodePil(Enc("pil"), Unhex("020000000100000009000000524742")).ok());
  // A huge image cannot overflow the size computation.
  EXPECT_FALSE(DecodePil(Enc("pil"), Unhex("ffffffffffffffff0400000052474241")).ok());

  const std::string list_bytes = Unhex("0200000002000000010000006162637a");
  auto list = DecodeList(Enc("jpeg_array"), list_bytes);
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].offset, 12u);
  EXPECT_EQ((*list)[0].bytes, "ab");
  EXPECT_EQ((*list)[1].bytes, "c");
  auto huge_count = DecodeList(Enc("list[png]"), Unhex("00000000ffffffff"));
  ASSERT_FALSE(huge_count.ok());
  EXPECT_EQ(huge_count.status().message(),
            "column 'c' (list[png]): list count 4294967295 needs 17179869188 header bytes, field has 8");
  auto past_end = DecodeList(Enc("list[jpeg]"), Unhex("000000000100000005000000616263"));
  ASSERT_FALSE(past_end.ok());
  EXPECT_EQ(past_end.status().message(),
            "column 'c' (list[jpeg]): list item 0 of 5 bytes at offset 12 runs past the field end 15");
  EXPECT_FALSE(DecodeList(Enc("list[pil]"), Unhex("000000")).ok());

  const std::string nd_bytes = Unhex("11052c01") + std::string(600, '\x01');
  auto nd = DecodeNdArray(Enc("ndarray"), nd_bytes);
  ASSERT_TRUE(nd.ok());
  EXPECT_EQ(nd->shape, std::vector<uint64_t>{300});
  EXPECT_EQ(NdElementAsInt64(*nd, 299), 0x0101);
  auto bad_code = DecodeNdArray(Enc("ndarray"), Unhex("070401ff"));
  ASSERT_FALSE(bad_code.ok());
  EXPECT_EQ(bad_code.status().message(), "column 'c' (ndarray): unknown ndarray dtype code 7 at offset 0");
  auto overflow = DecodeNdArray(Enc("ndarray"), Unhex("420bffffffffffffffffffffffffffffffff00"));
  ASSERT_FALSE(overflow.ok());
  EXPECT_EQ(overflow.status().code(), StatusCode::kCorrupt);
  EXPECT_FALSE(DecodeNdArray(Enc("ndarray"), Unhex("080403")).ok());       // shape runs out
  EXPECT_FALSE(DecodeNdArray(Enc("ndarray"), Unhex("08040361")).ok());     // data too short
  EXPECT_FALSE(DecodeNdArray(Enc("ndarray"), Unhex("0800")).ok());         // ndim 0
  EXPECT_FALSE(DecodeNdArray(Enc("ndarray:uint8:5"), "abcd").ok());
  EXPECT_FALSE(DecodeNdArray(Enc("ndarray"), "").ok());
}

}  // namespace
}  // namespace sluice
