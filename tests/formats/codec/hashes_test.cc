#include "formats/codec/hashes.h"

#include <gtest/gtest.h>

#include <string>

namespace sluice {
namespace {

TEST(Hashes, SupportedListIsMosaicsSorted) {
  const std::vector<std::string> expected = {
      "blake2b", "blake2s", "md5",      "sha1",     "sha224", "sha256",
      "sha384",  "sha3_224", "sha3_256", "sha3_384", "sha3_512", "sha512",
      "xxh128",  "xxh32",   "xxh3_128", "xxh3_64",  "xxh64"};
  EXPECT_EQ(SupportedHashes(), expected);
  for (const std::string& a : expected) EXPECT_TRUE(IsSupportedHash(a)) << a;
  EXPECT_FALSE(IsSupportedHash("sha3-256"));
  EXPECT_FALSE(IsSupportedHash("SHA256"));
  EXPECT_FALSE(IsSupportedHash(""));
  EXPECT_FALSE(IsSupportedHash("crc32"));
}

// Digests of b"" and b"abc" as hashlib / python-xxhash give them.
TEST(Hashes, KnownVectors) {
  struct Case {
    const char* algo;
    std::string data;
    const char* hex;
  };
  const Case cases[] = {
      {"xxh64", "", "ef46db3751d8e999"},
      {"xxh32", "", "02cc5d05"},
      {"xxh3_64", "", "2d06800538d394c2"},
      {"xxh3_128", "", "99aa06d3014798d86001c324468d497f"},
      {"xxh128", "", "99aa06d3014798d86001c324468d497f"},
      {"xxh64", "abc", "44bc2cf5ad770999"},
      {"xxh32", "abc", "32d153ff"},
      {"xxh3_64", "abc", "78af5f94892f3950"},
      {"xxh128", "abc", "06b05ab6733a618578af5f94892f3950"},
      {"md5", "", "d41d8cd98f00b204e9800998ecf8427e"},
      {"sha1", "abc", "a9993e364706816aba3e25717850c26c9cd0d89d"},
      {"sha224", "abc", "23097d223405d8228642a477bda255b32aadbce4bda0b3f7e36c9da7"},
      {"sha256", "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
      {"sha384", "abc",
       "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baec"
       "a134c825a7"},
      {"sha512", "abc",
       "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c"
       "23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"},
      {"sha3_224", "", "6b4e03423667dbb73b6e15454f0eb1abd4597f9a1b078e3f5b5a6bc7"},
      {"sha3_256", "", "a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a"},
      {"sha3_384", "",
       "0c63a75b845e4f7d01107d852e4c2485c51a50aaaa94fc61995e71bbee983a2ac3713831264adb47fb6bd1e"
       "058d5f004"},
      {"sha3_512", "",
       "a69f73cca23a9ac5c8b567dc185a756e97c982164fe25859e0d1dcc1475c80a615b2123af1f5f94c11e3e9"
       "402c3ac558f500199d95b6d3e301758586281dcd26"},
      {"blake2s", "", "69217a3079908094e11121d042354a7c1f55b6482ca1a51e1b250dfd1ed0eef9"},
      {"blake2b", "",
       "786a02f742015903c6c6fd852552d272912f4740e15847618a86e217f71f5419d25e1031afee585313896"
       "444934eb04b903a685b1448b755d56f701afe9be2ce"},
  };
  for (const Case& c : cases) {
    auto h = HashHex(c.algo, c.data);
    ASSERT_TRUE(h.ok()) << c.algo << ": " << h.status().ToString();
    EXPECT_EQ(*h, c.hex) << c.algo << "(\"" << c.data << "\")";
  }
}

TEST(Hashes, Xxh64HasherIsHashHexOfEverythingItWasGiven) {
  Xxh64Hasher empty;
  EXPECT_EQ(empty.Hex(), "ef46db3751d8e999");  // xxh64 of nothing
  std::string text;
  Xxh64Hasher h;
  for (int i = 0; i < 500; ++i) {
    const std::string part(static_cast<size_t>(i % 37), static_cast<char>('a' + i % 26));
    h.Update(part);
    text += part;
  }
  EXPECT_EQ(h.Hex(), *HashHex("xxh64", text));
}

TEST(Hashes, AppendXxh64HexAppendsHashHexsDigest) {
  std::string out = "x.";
  AppendXxh64Hex(&out, "abc");
  EXPECT_EQ(out, "x.44bc2cf5ad770999");
  AppendXxh64Hex(&out, "");
  EXPECT_EQ(out, "x.44bc2cf5ad770999ef46db3751d8e999");
}

TEST(Hashes, UnknownAlgorithm) {
  auto h = HashHex("crc32", "abc");
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(h.status().message(), "unknown hash algorithm \"crc32\"");

  Status s = VerifyHash("sha-1", "abc", "00", "shard.00000.mds");
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_EQ(s.message(), "shard.00000.mds: unknown hash algorithm \"sha-1\"");
}

TEST(Hashes, VerifyMatchAndMismatch) {
  EXPECT_TRUE(VerifyHash("xxh64", "", "ef46db3751d8e999", "x").ok());
  // Upper-case expectations are the same digest.
  EXPECT_TRUE(VerifyHash("xxh64", "", "EF46DB3751D8E999", "x").ok());

  Status s = VerifyHash("xxh64", "abc", "ef46db3751d8e999", "part2/shard.00001.mds.zstd");
  EXPECT_EQ(s.code(), StatusCode::kHashMismatch);
  EXPECT_EQ(s.message(),
            "part2/shard.00001.mds.zstd: xxh64 mismatch: expected ef46db3751d8e999, got "
            "44bc2cf5ad770999 (3 bytes)");

  s = VerifyHash("sha1", "abc", "", "f");
  EXPECT_EQ(s.code(), StatusCode::kHashMismatch);
  EXPECT_EQ(s.message(),
            "f: sha1 mismatch: expected , got a9993e364706816aba3e25717850c26c9cd0d89d (3 bytes)");
}

}  // namespace
}  // namespace sluice
