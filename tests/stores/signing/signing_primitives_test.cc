// The primitives under every signer: digests, base64, URI encoding, path
// normalization, canonical headers and query, timestamps.
#include <gtest/gtest.h>

#include "base/bytes.h"
#include "stores/signing/canonical_request.h"
#include "stores/signing/digest.h"
#include "stores/signing/signing_time.h"
#include "stores/signing/uri_encoding.h"

namespace sluice {
namespace {

TEST(Digest, KnownAnswers) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha1Hex("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");  // FIPS 180 vector
  // RFC 4231 test case 2.
  EXPECT_EQ(HexEncode(HmacSha256("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  // An empty key is a valid HMAC key.
  EXPECT_EQ(HexEncode(HmacSha256("", "")),
            "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad");
}

TEST(Base64, RoundTripAndRfc4648Vectors) {
  const char* plain[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
  const char* coded[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
  for (int i = 0; i < 7; ++i) {
    EXPECT_EQ(Base64Encode(plain[i]), coded[i]);
    std::string out;
    ASSERT_TRUE(Base64Decode(coded[i], &out)) << coded[i];
    EXPECT_EQ(out, plain[i]);
  }
  std::string all;
  for (int i = 0; i < 256; ++i) all += char(i);
  std::string back;
  ASSERT_TRUE(Base64Decode(Base64Encode(all), &back));
  EXPECT_EQ(back, all);
}

TEST(Base64, RejectsMalformed) {
  std::string out;
  for (const char* bad : {"Zg=", "Zg", "Z===", "Zm9v\n", "Zm 9", "Zh==", "Zm9=", "=Zm9",
                          "Zg==Zg==", "Zm9v*A=="}) {
    EXPECT_FALSE(Base64Decode(bad, &out)) << bad;
  }
}

TEST(UriEncoding, UnreservedSetOnly) {
  EXPECT_EQ(UriEncode("AZaz09-._~"), "AZaz09-._~");
  EXPECT_EQ(UriEncode("a b/c+d=e&f%g*h"), "a%20b%2Fc%2Bd%3De%26f%25g%2Ah");
  EXPECT_EQ(UriEncode("\xE1\x88\xB4"), "%E1%88%B4");
  EXPECT_EQ(UriEncode(std::string("\0\x7f\xff", 3)), "%00%7F%FF");
  EXPECT_EQ(EncodeUriPath("/a b/c+d/~x/"), "/a%20b/c%2Bd/~x/");
}

TEST(UriEncoding, PercentDecode) {
  EXPECT_EQ(PercentDecode("a%20b%2fc%2Bd"), "a b/c+d");
  EXPECT_EQ(PercentDecode("a+b"), "a+b");
  EXPECT_EQ(PercentDecode("%"), "%");
  EXPECT_EQ(PercentDecode("%4"), "%4");
  EXPECT_EQ(PercentDecode("%zz%41"), "%zzA");
  EXPECT_EQ(PercentDecode("100%"), "100%");
}

// The same decoding, but a '%' without two hex digits is an error naming the text.
TEST(UriEncoding, StrictPercentDecode) {
  EXPECT_EQ(*StrictPercentDecode("a%20b%2fc%2Bd+e"), "a b/c+d+e");
  EXPECT_EQ(*StrictPercentDecode(""), "");
  EXPECT_EQ(*StrictPercentDecode("%25%41"), "%A");
  for (const char* bad : {"%", "%4", "a%zz", "100%", "%41%g1"}) {
    auto r = StrictPercentDecode(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(r.status().message(), std::string("malformed percent escape in '") + bad + "'");
  }
}

TEST(UriEncoding, NormalizePath) {
  EXPECT_EQ(NormalizeUriPath(""), "/");
  EXPECT_EQ(NormalizeUriPath("/"), "/");
  EXPECT_EQ(NormalizeUriPath("//"), "/");
  EXPECT_EQ(NormalizeUriPath("/a/./b/../c"), "/a/c");
  EXPECT_EQ(NormalizeUriPath("//x//"), "/x/");
  EXPECT_EQ(NormalizeUriPath("/x/.."), "/");
  EXPECT_EQ(NormalizeUriPath("/a/b/.."), "/a/");
  EXPECT_EQ(NormalizeUriPath("/../../a"), "/a");
  EXPECT_EQ(NormalizeUriPath("/a/..b/.c"), "/a/..b/.c");
}

TEST(CanonicalRequest, Uri) {
  EXPECT_EQ(*CanonicalUri("/a b/%2F/../x", {true, true}), "/a%20b/x");
  EXPECT_EQ(*CanonicalUri("/a%20b/./x", {true, false}), "/a%2520b/./x");
  EXPECT_EQ(*CanonicalUri("/a%20b/./x", {false, false}), "/a%20b/./x");
  EXPECT_EQ(*CanonicalUri("", {false, false}), "/");
  Result<std::string> bad = CanonicalUri("relative", {false, false});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "request path must start with '/', got \"relative\"");
}

TEST(CanonicalRequest, QueryStringSortsEncodedPairs) {
  EXPECT_EQ(CanonicalQueryString({}), "");
  // Sorted by encoded name, then encoded value; upper case sorts first.
  EXPECT_EQ(CanonicalQueryString({{"b", "2"}, {"a", "z"}, {"a", "y"}, {"B", ""}, {"a b", "/"}}),
            "B=&a=y&a=z&a%20b=%2F&b=2");
}

TEST(CanonicalRequest, HeaderValues) {
  EXPECT_EQ(CanonicalHeaderValue("  a   b\t\tc \r\n d  "), "a b c d");
  EXPECT_EQ(CanonicalHeaderValue(""), "");
  EXPECT_EQ(CanonicalHeaderValue(" \t "), "");
}

TEST(CanonicalRequest, HeadersMergeAndSort) {
  Result<CanonicalHeaders> h = MakeCanonicalHeaders(
      {{"X-B", " 2 "}, {"Host", "h"}, {"x-b", "1"}, {"x-a", ""}});
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->block, "host:h\nx-a:\nx-b:2,1\n");
  EXPECT_EQ(h->signed_headers, "host;x-a;x-b");

  Result<CanonicalHeaders> bad = MakeCanonicalHeaders({{"Host", "h"}, {"Bad Name", "v"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "header 1 has a name with a character not allowed in HTTP header names (byte 32)");
  EXPECT_EQ(MakeCanonicalHeaders({{"", "secret"}}).status().message(),
            "header 0 has an empty name");
}

TEST(SigningTime, Formats) {
  EXPECT_EQ(FormatAmzDate(1440938160), "20150830T123600Z");
  EXPECT_EQ(FormatHttpDate(1440938160), "Sun, 30 Aug 2015 12:36:00 GMT");
  EXPECT_EQ(FormatAmzDate(0), "19700101T000000Z");
  EXPECT_EQ(FormatHttpDate(0), "Thu, 01 Jan 1970 00:00:00 GMT");
  EXPECT_EQ(FormatAmzDate(951782400), "20000229T000000Z");  // leap day
  EXPECT_EQ(FormatHttpDate(kMaxSigningTime), "Fri, 31 Dec 9999 23:59:59 GMT");
  EXPECT_TRUE(IsSigningTimeValid(0));
  EXPECT_TRUE(IsSigningTimeValid(kMaxSigningTime));
  EXPECT_FALSE(IsSigningTimeValid(-1));
  EXPECT_FALSE(IsSigningTimeValid(kMaxSigningTime + 1));
}

}  // namespace
}  // namespace sluice
