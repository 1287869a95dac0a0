#include "formats/mds/column_encoding.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

TEST(ColumnEncoding, EveryScalarNameAndItsSize) {
  struct Case {
    const char* name;
    EncodingKind kind;
    std::optional<uint64_t> size;
  };
  const Case cases[] = {
      {"bytes", EncodingKind::kBytes, std::nullopt},
      {"str", EncodingKind::kStr, std::nullopt},
      {"int", EncodingKind::kInt, 8},
      {"int8", EncodingKind::kInt8, 1},
      {"int16", EncodingKind::kInt16, 2},
      {"int32", EncodingKind::kInt32, 4},
      {"int64", EncodingKind::kInt64, 8},
      {"uint8", EncodingKind::kUInt8, 1},
      {"uint16", EncodingKind::kUInt16, 2},
      {"uint32", EncodingKind::kUInt32, 4},
      {"uint64", EncodingKind::kUInt64, 8},
      {"float16", EncodingKind::kFloat16, 2},
      {"float32", EncodingKind::kFloat32, 4},
      {"float64", EncodingKind::kFloat64, 8},
      {"str_int", EncodingKind::kStrInt, std::nullopt},
      {"str_float", EncodingKind::kStrFloat, std::nullopt},
      {"str_decimal", EncodingKind::kStrDecimal, std::nullopt},
      {"json", EncodingKind::kJson, std::nullopt},
      {"pkl", EncodingKind::kPkl, std::nullopt},
      {"pil", EncodingKind::kPil, std::nullopt},
      {"jpeg", EncodingKind::kJpeg, std::nullopt},
      {"png", EncodingKind::kPng, std::nullopt},
      {"jpeg_array", EncodingKind::kJpegArray, std::nullopt},
      {"jpegarray", EncodingKind::kJpegArray, std::nullopt},
      {"list[pil]", EncodingKind::kListPil, std::nullopt},
      {"list[jpeg]", EncodingKind::kListJpeg, std::nullopt},
      {"list[png]", EncodingKind::kListPng, std::nullopt},
      {"ndarray", EncodingKind::kNdarray, std::nullopt},
  };
  for (const Case& c : cases) {
    auto e = ParseColumnEncoding(c.name, "col");
    ASSERT_TRUE(e.ok()) << c.name << ": " << e.status().ToString();
    EXPECT_EQ(e->kind, c.kind) << c.name;
    EXPECT_EQ(e->fixed_size, c.size) << c.name;
    EXPECT_EQ(e->name, c.name);
    EXPECT_EQ(e->column, "col");
    EXPECT_FALSE(e->nd_dtype.has_value());
    EXPECT_TRUE(IsMdsEncoding(c.name));
  }
}

TEST(ColumnEncoding, NdarrayWithDtypeAndShape) {
  auto a = ParseColumnEncoding("ndarray:int16", "x");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->kind, EncodingKind::kNdarray);
  EXPECT_EQ(a->nd_dtype, NdDtype::kInt16);
  EXPECT_FALSE(a->nd_shape.has_value());
  EXPECT_FALSE(a->fixed_size.has_value());

  auto b = ParseColumnEncoding("ndarray:uint64:1,2,2", "x");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->nd_dtype, NdDtype::kUInt64);
  EXPECT_EQ(*b->nd_shape, (std::vector<uint64_t>{1, 2, 2}));
  EXPECT_EQ(b->fixed_size, 32u);

  auto c = ParseColumnEncoding("ndarray:float32:2,3", "x");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->fixed_size, 24u);
  auto d = ParseColumnEncoding("ndarray:uint8:5", "x");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->fixed_size, 5u);

  for (const char* dt : {"uint8", "int8", "uint16", "int16", "float16", "uint32", "int32",
                         "float32", "uint64", "int64", "float64"}) {
    auto e = ParseColumnEncoding(std::string("ndarray:") + dt + ":3", "x");
    ASSERT_TRUE(e.ok()) << dt;
    EXPECT_STREQ(NdDtypeName(*e->nd_dtype), dt);
    EXPECT_EQ(e->fixed_size, 3u * NdDtypeItemSize(*e->nd_dtype));
    EXPECT_EQ(NdDtypeFromCode(static_cast<uint8_t>(*e->nd_dtype)), e->nd_dtype);
  }
  EXPECT_EQ(ColumnEncodingSize("ndarray:int16:2,2").value(), 8u);
  EXPECT_EQ(ColumnEncodingSize("str").value(), std::nullopt);
}

TEST(ColumnEncoding, UnknownNamesTheEncodingAndColumn) {
  for (const char* bad : {"", "int128", "float", "uint", "Str", "list[bytes]", "ndarray:",
                          "ndarray:bool", "ndarray:int8:", "ndarray:int8:0", "ndarray:int8:2,",
                          "ndarray:int8:,2", "ndarray:int8:2,x", "ndarray:int8:-1",
                          "ndarray:int8:2:3", "ndarray:int8: 2", "ndarray:float64:65536,65536",
                          "ndarray::2"}) {
    auto e = ParseColumnEncoding(bad, "my_col");
    ASSERT_FALSE(e.ok()) << bad;
    EXPECT_EQ(e.status().code(), StatusCode::kUnimplemented) << bad;
    EXPECT_NE(e.status().message().find("'" + std::string(bad) + "'"), std::string::npos)
        << e.status().message();
    EXPECT_NE(e.status().message().find("my_col"), std::string::npos) << e.status().message();
    EXPECT_FALSE(IsMdsEncoding(bad));
  }
  // 63 dimensions are allowed, 64 are not.
  std::string dims = "1";
  for (int i = 1; i < 63; ++i) dims += ",1";
  EXPECT_TRUE(ParseColumnEncoding("ndarray:int8:" + dims, "c").ok());
  EXPECT_FALSE(ParseColumnEncoding("ndarray:int8:" + dims + ",1", "c").ok());
}

TEST(ColumnEncoding, BuiltinNamesAreWhatTheParserKnows) {
  const std::vector<std::string_view> expected = {
      "bytes", "str", "int", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
      "uint64", "float16", "float32", "float64", "str_int", "str_float", "str_decimal", "json",
      "pkl", "pil", "jpeg", "png", "jpeg_array", "jpegarray", "list[pil]", "list[jpeg]",
      "list[png]", "ndarray"};
  EXPECT_EQ(BuiltinEncodingNames(), expected);
  for (std::string_view name : BuiltinEncodingNames()) {
    EXPECT_TRUE(IsMdsEncoding(name)) << name;
    EXPECT_FALSE(IsCustomEncodingName(name)) << name;
  }
}

TEST(ColumnEncoding, UnregisteredNamesAreRefused) {
  const CustomEncodings none;
  Status st = CheckEncodingRegistered("jpge", "x", none);
  EXPECT_EQ(st.ToString(),
            "unimplemented: column 'x' has encoding 'jpge', which is neither built in nor "
            "registered");
  EXPECT_EQ(CheckEncodingRegistered("complex128:le", "z", none).ToString(),
            "unimplemented: column 'z' has encoding 'complex128:le', which is neither built in "
            "nor registered");
  // Built-in names pass, malformed ones too: the parser names what is wrong.
  EXPECT_TRUE(CheckEncodingRegistered("jpeg", "x", none).ok());
  EXPECT_TRUE(CheckEncodingRegistered("ndarray:complex", "x", none).ok());
  EXPECT_TRUE(CheckEncodingRegistered("int:8", "x", none).ok());

  // A registered name, alone or configured after ':' (Mosaic's registry is
  // keyed by the part before it), and a registered full encoding string.
  CustomEncodings mine;
  mine.names = {"complex128", "pair:2"};
  EXPECT_TRUE(CheckEncodingRegistered("complex128", "z", mine).ok());
  EXPECT_TRUE(CheckEncodingRegistered("complex128:le", "z", mine).ok());
  EXPECT_TRUE(CheckEncodingRegistered("pair:2", "p", mine).ok());
  EXPECT_EQ(CheckEncodingRegistered("pair:3", "p", mine).ToString(),
            "unimplemented: column 'p' has encoding 'pair:3', which is neither built in nor "
            "registered");
  EXPECT_EQ(CheckEncodingRegistered("complex", "z", mine).code(), StatusCode::kUnimplemented);

  CustomEncodings any;
  any.any = true;
  EXPECT_TRUE(CheckEncodingRegistered("jpge", "x", any).ok());
}

}  // namespace
}  // namespace sluice
