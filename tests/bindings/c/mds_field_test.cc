// sluice_mds_field_layout / _form, sluice_mds_encode_* / sluice_mds_decode_*: every
// built-in MDS encoding's field written and read through the C ABI, with
// Mosaic's bytes (bindings/c/c_api_mds_field.cc).
#include "sluice.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace {

const uint8_t* U8(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }
std::string Str(sluice_bytes b) { return std::string(reinterpret_cast<const char*>(b.data), b.size); }

std::string EncodeBytes(const char* encoding, const std::string& value,
                        sluice_status want = SLUICE_OK) {
  uint8_t buf[256];
  uint64_t len = 0;
  EXPECT_EQ(sluice_mds_encode_value(encoding, SLUICE_VALUE_BYTES, U8(value), value.size(), buf,
                                    sizeof buf, &len),
            want)
      << sluice_last_error();
  return want == SLUICE_OK ? std::string(reinterpret_cast<char*>(buf), len) : sluice_last_error();
}

TEST(CApiMdsField, FixedFieldsHaveTheEnginesNumpyLayout) {
  sluice_ndarray out;
  ASSERT_EQ(sluice_mds_field_layout("int", &out), SLUICE_OK);
  EXPECT_STREQ(out.dtype, "int64");
  EXPECT_EQ(out.ndim, 0u);
  ASSERT_EQ(sluice_mds_field_layout("float16", &out), SLUICE_OK);
  EXPECT_STREQ(out.dtype, "float16");
  ASSERT_EQ(sluice_mds_field_layout("ndarray:uint16:2,3", &out), SLUICE_OK);
  EXPECT_STREQ(out.dtype, "uint16");
  ASSERT_EQ(out.ndim, 2u);
  EXPECT_EQ(out.shape[0], 2u);
  EXPECT_EQ(out.shape[1], 3u);
  for (const char* varying : {"str", "ndarray", "ndarray:int8", "pil", "json"}) {
    ASSERT_EQ(sluice_mds_field_layout(varying, &out), SLUICE_OK) << varying;
    EXPECT_EQ(out.dtype, nullptr) << varying;
  }
  EXPECT_EQ(sluice_mds_field_layout("jpge", &out), SLUICE_EUNIMPLEMENTED);
}

TEST(CApiMdsField, TextAndRawValuesAreCheckedAndStored) {
  EXPECT_EQ(EncodeBytes("str", "\xc3\xa9"), "\xc3\xa9");
  EXPECT_EQ(EncodeBytes("str", ""), "");
  EXPECT_EQ(EncodeBytes("str", "\xff", SLUICE_EINVAL),
            "invalid argument: str encoding: invalid UTF-8 at byte 0");
  EXPECT_EQ(EncodeBytes("str_int", "-12345678901234567890123"), "-12345678901234567890123");
  EXPECT_EQ(EncodeBytes("str_int", "007", SLUICE_EINVAL),
            "invalid argument: str_int encoding: '007' is not the decimal text of an integer");
  EXPECT_EQ(EncodeBytes("str_decimal", "1E+3"), "1E+3");
  EXPECT_EQ(EncodeBytes("pkl", std::string("\x80\x04\x00", 3)), std::string("\x80\x04\x00", 3));
  // json: the text json.dumps wrote, written again as json.dumps writes it.
  EXPECT_EQ(EncodeBytes("json", "{\"a\":[1,2.50,\"\xc3\xa9\"]}"), "{\"a\": [1, 2.5, \"\\u00e9\"]}");
  EXPECT_EQ(EncodeBytes("json", "NaN"), "NaN");
  EXPECT_EQ(EncodeBytes("int", "12345678", SLUICE_EINVAL),
            "invalid argument: int encoding: cannot store raw bytes");
}

TEST(CApiMdsField, AShortBufferSaysTheSizeNeeded) {
  const std::string text = "twelve bytes";
  uint8_t buf[4];
  uint64_t len = 0;
  EXPECT_EQ(sluice_mds_encode_value("str", SLUICE_VALUE_BYTES, U8(text), text.size(), buf,
                                    sizeof buf, &len),
            SLUICE_ERANGE);
  EXPECT_EQ(len, 12u);
}

TEST(CApiMdsField, TextFieldsDecodeToTheirTextAndBadUtf8IsRefused) {
  sluice_bytes out;
  const std::string field = "h\xc3\xa9";
  ASSERT_EQ(sluice_mds_decode_bytes("str", U8(field), field.size(), &out), SLUICE_OK);
  EXPECT_EQ(Str(out), field);
  EXPECT_EQ(out.data, U8(field));  // a view into the field
  const std::string bad = "\xc3";
  EXPECT_EQ(sluice_mds_decode_bytes("json", U8(bad), bad.size(), &out), SLUICE_ECORRUPT);
  ASSERT_EQ(sluice_mds_decode_bytes("bytes", nullptr, 0, &out), SLUICE_OK);
  EXPECT_EQ(out.size, 0u);
}

TEST(CApiMdsField, PilFieldsAreSizeModeAndPixels) {
  const std::string pixels = "\x01\x02\x03\x04\x05\x06";
  uint8_t buf[64];
  uint64_t len = 0;
  ASSERT_EQ(sluice_mds_encode_pil("pil", 2, 1, "RGB", U8(pixels), pixels.size(), buf, sizeof buf,
                                  &len),
            SLUICE_OK)
      << sluice_last_error();
  const std::string field(reinterpret_cast<char*>(buf), len);
  EXPECT_EQ(field, std::string("\x02\0\0\0\x01\0\0\0\x03\0\0\0RGB", 15) + pixels);
  sluice_mds_pil image;
  ASSERT_EQ(sluice_mds_decode_pil("pil", U8(field), field.size(), &image), SLUICE_OK);
  EXPECT_EQ(image.width, 2u);
  EXPECT_EQ(image.height, 1u);
  EXPECT_EQ(Str(image.mode), "RGB");
  EXPECT_EQ(Str(image.pixels), pixels);
  EXPECT_EQ(sluice_mds_encode_pil("pil", 2, 2, "RGB", U8(pixels), pixels.size(), buf, sizeof buf,
                                  &len),
            SLUICE_EINVAL);
  EXPECT_STREQ(sluice_last_error(),
               "invalid argument: pil encoding: PIL RGB image 2x2 needs 12 pixel bytes, got 6");
}

TEST(CApiMdsField, ListsAreFramedByTheEngineAndReadBackAsViews) {
  const std::string a = "ab", b = "";
  const sluice_bytes items[] = {{U8(a), a.size()}, {U8(b), b.size()}};
  uint8_t buf[64];
  uint64_t len = 0;
  ASSERT_EQ(sluice_mds_encode_list("list[png]", items, 2, buf, sizeof buf, &len), SLUICE_OK);
  const std::string field(reinterpret_cast<char*>(buf), len);
  EXPECT_EQ(field, std::string("\0\0\0\0\x02\0\0\0\x02\0\0\0\0\0\0\0ab", 18));
  ASSERT_EQ(sluice_mds_encode_list("jpeg_array", items, 1, buf, sizeof buf, &len), SLUICE_OK);
  EXPECT_EQ(std::string(reinterpret_cast<char*>(buf), len), std::string("\x01\0\0\0\x02\0\0\0ab", 10));

  sluice_bytes out[2];
  uint32_t count = 0;
  EXPECT_EQ(sluice_mds_decode_list("list[png]", U8(field), field.size(), out, 1, &count),
            SLUICE_ERANGE);
  EXPECT_EQ(count, 2u);
  ASSERT_EQ(sluice_mds_decode_list("list[png]", U8(field), field.size(), out, 2, &count),
            SLUICE_OK);
  EXPECT_EQ(Str(out[0]), "ab");
  EXPECT_EQ(Str(out[1]), "");
  const std::string truncated = field.substr(0, 17);
  EXPECT_EQ(sluice_mds_decode_list("list[png]", U8(truncated), truncated.size(), out, 2, &count),
            SLUICE_ECORRUPT);
}

TEST(CApiMdsField, ScalarsAreRangeCheckedNamingTheEncoding) {
  uint8_t buf[16];
  uint64_t len = 0;
  EXPECT_EQ(sluice_encode_int64("int8", 300, buf, sizeof buf, &len), SLUICE_EINVAL);
  EXPECT_STREQ(sluice_last_error(), "invalid argument: int8 encoding: value 300 is out of range for int8");
  ASSERT_EQ(sluice_encode_double("str_float", 1e16, buf, sizeof buf, &len), SLUICE_OK);
  EXPECT_EQ(std::string(reinterpret_cast<char*>(buf), len), "1e+16");
}

TEST(CApiMdsField, NumbersAreHandedInEightBytes) {
  uint8_t buf[16];
  uint64_t len = 0;
  const int64_t v = -2;
  ASSERT_EQ(sluice_mds_encode_value("int16", SLUICE_VALUE_INT64, reinterpret_cast<const uint8_t*>(&v),
                                    8, buf, sizeof buf, &len),
            SLUICE_OK);
  EXPECT_EQ(std::string(reinterpret_cast<char*>(buf), len), "\xfe\xff");
  EXPECT_EQ(sluice_mds_encode_value("int16", SLUICE_VALUE_INT64, reinterpret_cast<const uint8_t*>(&v),
                                    4, buf, sizeof buf, &len),
            SLUICE_EINVAL);
  EXPECT_STREQ(sluice_last_error(), "invalid argument: int16 encoding: a number is given in 8 bytes, got 4");
  EXPECT_EQ(sluice_mds_encode_value("int16", 9, nullptr, 0, buf, sizeof buf, &len), SLUICE_EINVAL);
}

TEST(CApiMdsField, EveryBuiltinEncodingSaysHowItsFieldHoldsItsValue) {
  const std::pair<const char*, uint32_t> forms[] = {
      {"int", SLUICE_MDS_FIELD_VALUES},       {"float16", SLUICE_MDS_FIELD_VALUES},
      {"ndarray:int8:2", SLUICE_MDS_FIELD_VALUES}, {"str", SLUICE_MDS_FIELD_TEXT},
      {"str_int", SLUICE_MDS_FIELD_TEXT},     {"str_float", SLUICE_MDS_FIELD_TEXT},
      {"str_decimal", SLUICE_MDS_FIELD_TEXT}, {"json", SLUICE_MDS_FIELD_TEXT},
      {"bytes", SLUICE_MDS_FIELD_BYTES},      {"pkl", SLUICE_MDS_FIELD_BYTES},
      {"jpeg", SLUICE_MDS_FIELD_BYTES},       {"png", SLUICE_MDS_FIELD_BYTES},
      {"pil", SLUICE_MDS_FIELD_FRAMED},       {"list[pil]", SLUICE_MDS_FIELD_FRAMED},
      {"jpeg_array", SLUICE_MDS_FIELD_FRAMED}, {"ndarray", SLUICE_MDS_FIELD_FRAMED},
  };
  for (const auto& [encoding, want] : forms) {
    uint32_t form = 99;
    ASSERT_EQ(sluice_mds_field_form(encoding, &form), SLUICE_OK) << encoding;
    EXPECT_EQ(form, want) << encoding;
  }
}

}  // namespace
