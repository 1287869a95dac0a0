// sluice_compress / sluice_decompress / sluice_hash*: the shard codecs and
// hashes through libsluice.so, with Mosaic's names and bytes.
#include "sluice.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

const uint8_t* U8(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

// Runs a call that hands out a malloc'd buffer; returns its bytes (or "" on error).
std::string Take(sluice_status want, sluice_status got, char* out, uint64_t size) {
  EXPECT_EQ(got, want) << sluice_last_error();
  std::string bytes = out ? std::string(out, size) : std::string();
  sluice_free(out);
  return bytes;
}

std::string Compress(const std::string& name, const std::string& data, sluice_status want = SLUICE_OK) {
  char* out = nullptr;
  uint64_t size = 0;
  sluice_status st = sluice_compress(name.c_str(), U8(data), data.size(), &out, &size);
  return Take(want, st, out, size);
}

std::string Decompress(const std::string& name, const std::string& data, uint64_t max,
                       sluice_status want = SLUICE_OK) {
  char* out = nullptr;
  uint64_t size = 0;
  sluice_status st = sluice_decompress(name.c_str(), U8(data), data.size(), max, &out, &size);
  return Take(want, st, out, size);
}

std::string Hash(const std::string& algo, const std::string& data, sluice_status want = SLUICE_OK) {
  char* out = nullptr;
  sluice_status st = sluice_hash(algo.c_str(), U8(data), data.size(), &out);
  return Take(want, st, out, out ? std::string(out).size() : 0);
}

TEST(CodecCApi, CompressesAsMosaicAndRoundTripsEveryFamily) {
  // Mosaic's own expected bytes for brotli level 1 of "hello".
  EXPECT_EQ(Compress("br:1", "hello"), std::string("\x0b\x02\x80hello\x03", 9));
  const std::string data(5000, 'x');
  for (const char* name : {"br", "br:0", "bz2", "bz2:1", "gz", "gz:0", "snappy", "zstd", "zstd:22"}) {
    SCOPED_TRACE(name);
    std::string packed = Compress(name, data);
    // Level 0 stores (gz, br): no smaller, but still the family's stream.
    if (std::string(name).find(":0") == std::string::npos) {
      EXPECT_LT(packed.size(), data.size());
    }
    EXPECT_EQ(Decompress(name, packed, data.size()), data);
  }
  EXPECT_EQ(Decompress("zstd", Compress("zstd", ""), 0), "");
}

TEST(CodecCApi, RefusesUnknownNamesBadLevelsAndOversizedOutput) {
  EXPECT_EQ(sluice_compression_check("zstd:7"), SLUICE_OK);
  EXPECT_EQ(sluice_compression_check("xyz"), SLUICE_EUNIMPLEMENTED);
  EXPECT_EQ(sluice_compression_check("br:99"), SLUICE_EINVAL);
  EXPECT_EQ(sluice_compression_check("snappy:1"), SLUICE_EINVAL);
  EXPECT_EQ(sluice_compression_check(nullptr), SLUICE_EINVAL);
  Compress("gz:10", "hello", SLUICE_EINVAL);
  const std::string packed = Compress("zstd", std::string(1000, 'a'));
  Decompress("zstd", packed, 999, SLUICE_ECORRUPT);
  EXPECT_NE(std::string(sluice_last_error()).find("more than the expected raw size of 999"), std::string::npos)
      << sluice_last_error();
  Decompress("zstd", packed.substr(0, packed.size() / 2), 1000, SLUICE_ECORRUPT);
  char* out = reinterpret_cast<char*>(1);
  uint64_t size = 0;
  EXPECT_EQ(sluice_compress("zstd", nullptr, 3, &out, &size), SLUICE_EINVAL);
}

TEST(CodecCApi, HashesAsHashlibAndXxhash) {
  EXPECT_EQ(Hash("md5", "hello"), "5d41402abc4b2a76b9719d911017c592");
  EXPECT_EQ(Hash("sha3_256", "hello"), "3338be694f50c5f338814986cdf0686453a888b84f424d792af4b9202398f392");
  EXPECT_EQ(Hash("xxh3_64", "hello"), "9555e8555c62dcfd");
  Hash("sha3", "hello", SLUICE_EUNIMPLEMENTED);
  char* names = nullptr;
  ASSERT_EQ(sluice_hash_names(&names), SLUICE_OK);
  EXPECT_STREQ(names,
               "[\"blake2b\", \"blake2s\", \"md5\", \"sha1\", \"sha224\", \"sha256\", \"sha384\", "
               "\"sha3_224\", \"sha3_256\", \"sha3_384\", \"sha3_512\", \"sha512\", \"xxh128\", "
               "\"xxh32\", \"xxh3_128\", \"xxh3_64\", \"xxh64\"]");
  sluice_free(names);
}

// The engine's one list of built-in MDS encodings, which bindings read.
TEST(CodecCApi, MdsEncodingNames) {
  char* names = nullptr;
  ASSERT_EQ(sluice_mds_encoding_names(&names), SLUICE_OK);
  EXPECT_STREQ(names,
               "[\"bytes\", \"str\", \"int\", \"int8\", \"int16\", \"int32\", \"int64\", "
               "\"uint8\", \"uint16\", \"uint32\", \"uint64\", \"float16\", \"float32\", "
               "\"float64\", \"str_int\", \"str_float\", \"str_decimal\", \"json\", \"pkl\", "
               "\"pil\", \"jpeg\", \"png\", \"jpeg_array\", \"jpegarray\", \"list[pil]\", "
               "\"list[jpeg]\", \"list[png]\", \"ndarray\"]");
  sluice_free(names);
  EXPECT_EQ(sluice_mds_encoding_names(nullptr), SLUICE_EINVAL);
}

// The column_sizes entry Mosaic writes; -1 where fields vary in size.
TEST(CApiCodec, MdsEncodingSizes) {
  auto size = [](const char* encoding, sluice_status want = SLUICE_OK) {
    int64_t out = -2;
    EXPECT_EQ(sluice_mds_encoding_size(encoding, &out), want) << encoding << ": "
                                                               << sluice_last_error();
    return out;
  };
  EXPECT_EQ(size("int"), 8);
  EXPECT_EQ(size("uint8"), 1);
  EXPECT_EQ(size("float16"), 2);
  EXPECT_EQ(size("float64"), 8);
  EXPECT_EQ(size("str"), -1);
  EXPECT_EQ(size("pkl"), -1);
  EXPECT_EQ(size("ndarray"), -1);
  EXPECT_EQ(size("ndarray:int16"), -1);
  EXPECT_EQ(size("ndarray:int16:3,4"), 24);
  EXPECT_EQ(size("ndarray:uint8:0,2", SLUICE_EUNIMPLEMENTED), -2);  // Mosaic: 1 <= dim
  EXPECT_EQ(size("nope", SLUICE_EUNIMPLEMENTED), -2);
  EXPECT_NE(std::string(sluice_last_error()).find("'nope'"), std::string::npos);
  EXPECT_EQ(sluice_mds_encoding_size(nullptr, nullptr), SLUICE_EINVAL);
}

// What an ndarray encoding names, by the engine's one parser.
TEST(CApiCodec, MdsNdarrayEncodings) {
  sluice_ndarray out;
  ASSERT_EQ(sluice_mds_ndarray_encoding("ndarray:int16:3,4", &out), SLUICE_OK);
  EXPECT_EQ(std::string(out.dtype), "int16");
  ASSERT_EQ(out.ndim, 2u);
  EXPECT_EQ(out.shape[0], 3u);
  EXPECT_EQ(out.shape[1], 4u);
  EXPECT_EQ(out.data.size, 0u);
  ASSERT_EQ(sluice_mds_ndarray_encoding("ndarray:float16", &out), SLUICE_OK);
  EXPECT_EQ(std::string(out.dtype), "float16");
  EXPECT_EQ(out.ndim, 0u);
  ASSERT_EQ(sluice_mds_ndarray_encoding("ndarray", &out), SLUICE_OK);
  EXPECT_EQ(out.dtype, nullptr);
  EXPECT_EQ(out.ndim, 0u);
  EXPECT_EQ(sluice_mds_ndarray_encoding("ndarray:uint8:0,2", &out), SLUICE_EUNIMPLEMENTED);
  EXPECT_EQ(std::string(sluice_last_error()),
            "unimplemented: unknown MDS encoding 'ndarray:uint8:0,2': the shape must be 1 to 63 "
            "positive integers separated by ','");
  EXPECT_EQ(sluice_mds_ndarray_encoding("ndarray:bool", &out), SLUICE_EUNIMPLEMENTED);
  EXPECT_EQ(sluice_mds_ndarray_encoding("int8", &out), SLUICE_EINVAL);
  EXPECT_EQ(std::string(sluice_last_error()),
            "invalid argument: sluice_mds_ndarray_encoding: 'int8' is not an ndarray encoding");
  EXPECT_EQ(sluice_mds_ndarray_encoding(nullptr, &out), SLUICE_EINVAL);
  EXPECT_EQ(sluice_mds_ndarray_encoding("ndarray", nullptr), SLUICE_EINVAL);
}

// The column an ndarray encoding string describes.
sluice_ndarray Column(const char* encoding) {
  sluice_ndarray c;
  EXPECT_EQ(sluice_mds_ndarray_encoding(encoding, &c), SLUICE_OK) << sluice_last_error();
  return c;
}

// The header sluice_mds_ndarray_header writes, or "error: <text>".
std::string NdHeader(const sluice_ndarray& column, const char* dtype, std::vector<uint64_t> shape) {
  uint8_t buf[SLUICE_MAX_NDARRAY_HEADER];
  uint64_t len = 0;
  if (sluice_mds_ndarray_header(&column, dtype, static_cast<uint32_t>(shape.size()), shape.data(),
                                buf, sizeof(buf), &len) != SLUICE_OK) {
    return std::string("error: ") + sluice_last_error();
  }
  return std::string(reinterpret_cast<const char*>(buf), len);
}

TEST(CApiCodec, MdsNdarrayHeadersAreMosaicsAndReadBack) {
  // Mosaic's bytes: dtype code (int32 = 33), ndim << 2 | word code, words.
  EXPECT_EQ(NdHeader(Column("ndarray"), "int32", {3, 300}),
            std::string("\x21\x09\x03\x00\x2c\x01", 6));
  EXPECT_EQ(NdHeader(Column("ndarray"), "uint8", {7}), std::string("\x08\x04\x07", 3));
  EXPECT_EQ(NdHeader(Column("ndarray"), "float64", {70000}),
            std::string("\x42\x06\x70\x11\x01\x00", 6));
  EXPECT_EQ(NdHeader(Column("ndarray:int16"), "int16", {2, 2}), std::string("\x08\x02\x02", 3));
  EXPECT_EQ(NdHeader(Column("ndarray:int16:2,2"), "int16", {2, 2}), "");
  // Mosaic's NDArray(shape=...) without a dtype: the dtype code alone.
  sluice_ndarray shape_only = Column("ndarray:uint8:2,2");
  shape_only.dtype = nullptr;
  EXPECT_EQ(NdHeader(shape_only, "int16", {2, 2}), std::string("\x11", 1));
  // 63 four-byte words (eight-byte ones would need 4 GiB of values).
  std::vector<uint64_t> big(63, 1);
  big[0] = uint64_t{1} << 16;
  EXPECT_EQ(NdHeader(Column("ndarray"), "uint8", big).size(), 2u + 63 * 4);
  big[0] = uint64_t{1} << 32;
  EXPECT_NE(NdHeader(Column("ndarray"), "uint8", big).find("larger than 4 GiB"),
            std::string::npos);

  // What the header says is what the readers read.
  std::string field =
      NdHeader(Column("ndarray"), "int16", {2}) + std::string("\x01\x00\x02\x00", 4);
  sluice_ndarray out;
  ASSERT_EQ(sluice_decode_ndarray("ndarray", {U8(field), field.size()}, &out), SLUICE_OK)
      << sluice_last_error();
  EXPECT_EQ(std::string(out.dtype), "int16");
  ASSERT_EQ(out.ndim, 1u);
  EXPECT_EQ(out.shape[0], 2u);
  EXPECT_EQ(out.data.size, 4u);
  EXPECT_EQ(out.data.data, U8(field) + 3);
  sluice_ndarray column = Column("ndarray");
  ASSERT_EQ(sluice_mds_ndarray_decode(&column, U8(field), field.size(), &out), SLUICE_OK);
  EXPECT_EQ(out.data.data, U8(field) + 3);
  std::string coded = std::string("\x11", 1) + std::string("\x01\x00\x02\x00\x03\x00\x04\x00", 8);
  ASSERT_EQ(sluice_mds_ndarray_decode(&shape_only, U8(coded), coded.size(), &out), SLUICE_OK)
      << sluice_last_error();
  EXPECT_EQ(std::string(out.dtype), "int16");
  EXPECT_EQ(out.ndim, 2u);
  EXPECT_EQ(out.data.data, U8(coded) + 1);
  EXPECT_EQ(sluice_mds_ndarray_decode(&column, U8(field), 2, &out), SLUICE_ECORRUPT);

  EXPECT_EQ(NdHeader(Column("ndarray:int16"), "int32", {2}),
            "error: invalid argument: column '(value)' (ndarray:int16): array dtype int32 "
            "differs from the column's int16");
  EXPECT_EQ(NdHeader(Column("ndarray"), "bool", {2}),
            "error: invalid argument: sluice_mds_ndarray_header: 'bool' is not an ndarray dtype");
  EXPECT_NE(NdHeader(Column("ndarray"), "int8", {}).find("0 dimensions, expected 1 to 63"),
            std::string::npos);
  EXPECT_NE(NdHeader(Column("ndarray"), "int8", {2, 0}).find("a dimension of 0"),
            std::string::npos);
  EXPECT_NE(NdHeader(Column("ndarray:int8:2"), "int8", {3}).find("shape differs"),
            std::string::npos);
  uint8_t small[2];
  uint64_t len = 0;
  const uint64_t dims[] = {3, 300};
  EXPECT_EQ(sluice_mds_ndarray_header(&column, "int32", 2, dims, small, sizeof(small), &len),
            SLUICE_ERANGE);
  EXPECT_EQ(len, 6u);
  EXPECT_EQ(sluice_mds_ndarray_header(&column, "int32", 2, nullptr, small, 2, &len), SLUICE_EINVAL);
  EXPECT_EQ(sluice_mds_ndarray_header(nullptr, "int32", 2, dims, small, 2, &len), SLUICE_EINVAL);
}

}  // namespace
