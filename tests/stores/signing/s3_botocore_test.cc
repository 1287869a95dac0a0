// S3's own SigV4 rules (path signed as sent, x-amz-content-sha256,
// UNSIGNED-PAYLOAD, session tokens, presigned URLs) against botocore.
//
// The expected strings below came from botocore 1.29.27 (Debian 12's
// python3-botocore), printed by gen_botocore_vectors.py in this folder with a
// fixed clock (2013-05-24T00:00:00Z) and fixed example credentials. The first
// case is also the example of AWS's S3 SigV4 documentation (same signature).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "stores/signing/digest.h"
#include "stores/signing/sigv4.h"
#include "stores/signing/uri_encoding.h"

namespace sluice {
namespace {

constexpr int64_t kTime = 1369353600;  // 2013-05-24T00:00:00Z
constexpr char kToken[] = "IQoJb3JpZ2luX2VjEXAMPLE+/token==";

SigV4Credentials Creds(bool with_token = false) {
  return SigV4Credentials{"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                          with_token ? kToken : ""};
}

SigningRequest Request(std::string method, std::string host, std::string path,
                    std::string payload_hash) {
  SigningRequest r;
  r.method = std::move(method);
  r.path = std::move(path);
  r.headers.push_back({"Host", std::move(host)});
  r.payload_hash = std::move(payload_hash);
  return r;
}

std::string HeaderValue(const std::vector<SigningHeader>& headers, std::string_view name) {
  for (const SigningHeader& h : headers) {
    if (AsciiEqualsIgnoreCase(h.name, name)) return h.value;
  }
  return "<absent>";
}

TEST(S3Botocore, GetObjectRange) {
  SigningRequest r = Request("GET", "examplebucket.s3.amazonaws.com", "/test.txt", Sha256Hex(""));
  r.headers.push_back({"Range", "bytes=0-9"});
  Result<SigV4Signature> sig = SignSigV4Headers(r, Creds(), S3SigV4Config("us-east-1"), kTime);
  ASSERT_TRUE(sig.ok()) << sig.status().ToString();
  EXPECT_EQ(sig->canonical_request,
            "GET\n"
            "/test.txt\n"
            "\n"
            "host:examplebucket.s3.amazonaws.com\n"
            "range:bytes=0-9\n"
            "x-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n"
            "x-amz-date:20130524T000000Z\n"
            "\n"
            "host;range;x-amz-content-sha256;x-amz-date\n"
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(HeaderValue(sig->headers_to_add, "Authorization"),
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
            "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
            "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
  EXPECT_EQ(HeaderValue(sig->headers_to_add, "x-amz-content-sha256"),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(HeaderValue(sig->headers_to_add, "X-Amz-Date"), "20130524T000000Z");
}

TEST(S3Botocore, PathStyleKeyWithSessionToken) {
  // The key is encoded once to build the path as sent; S3 signs that path
  // as is (botocore does not encode it again).
  const std::string path = EncodeUriPath("/examplebucket/dir a/b+c~d=e.txt");
  ASSERT_EQ(path, "/examplebucket/dir%20a/b%2Bc~d%3De.txt");
  SigningRequest r = Request("GET", "s3.us-east-1.amazonaws.com", path, Sha256Hex(""));
  Result<SigV4Signature> sig =
      SignSigV4Headers(r, Creds(/*with_token=*/true), S3SigV4Config("us-east-1"), kTime);
  ASSERT_TRUE(sig.ok()) << sig.status().ToString();
  EXPECT_EQ(sig->canonical_request,
            "GET\n"
            "/examplebucket/dir%20a/b%2Bc~d%3De.txt\n"
            "\n"
            "host:s3.us-east-1.amazonaws.com\n"
            "x-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n"
            "x-amz-date:20130524T000000Z\n"
            "x-amz-security-token:IQoJb3JpZ2luX2VjEXAMPLE+/token==\n"
            "\n"
            "host;x-amz-content-sha256;x-amz-date;x-amz-security-token\n"
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(HeaderValue(sig->headers_to_add, "Authorization"),
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
            "SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token, "
            "Signature=c23e9debeae08f542d951807c2d082cf983e3ff7ab06da3ac79562087b27f526");
  EXPECT_EQ(HeaderValue(sig->headers_to_add, "X-Amz-Security-Token"), kToken);
}

TEST(S3Botocore, PutObjectSignedBody) {
  SigningRequest r = Request("PUT", "examplebucket.s3.amazonaws.com", "/data/shard.00000.mds",
                          Sha256Hex("hello world"));
  r.headers.push_back({"Content-Type", "application/octet-stream"});
  r.headers.push_back({"Content-Length", "11"});
  Result<SigV4Signature> sig = SignSigV4Headers(r, Creds(), S3SigV4Config("us-east-1"), kTime);
  ASSERT_TRUE(sig.ok()) << sig.status().ToString();
  EXPECT_EQ(sig->canonical_request,
            "PUT\n"
            "/data/shard.00000.mds\n"
            "\n"
            "content-length:11\n"
            "content-type:application/octet-stream\n"
            "host:examplebucket.s3.amazonaws.com\n"
            "x-amz-content-sha256:b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9\n"
            "x-amz-date:20130524T000000Z\n"
            "\n"
            "content-length;content-type;host;x-amz-content-sha256;x-amz-date\n"
            "b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9");
  EXPECT_EQ(HeaderValue(sig->headers_to_add, "Authorization"),
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
            "SignedHeaders=content-length;content-type;host;x-amz-content-sha256;x-amz-date, "
            "Signature=08f6fd209c904023629d38770f892bc68357187e10405602b01bcf66055cb70a");
}

TEST(S3Botocore, PutUnsignedPayload) {
  SigningRequest r =
      Request("PUT", "examplebucket.s3.amazonaws.com", "/big.bin", "UNSIGNED-PAYLOAD");
  r.headers.push_back({"Content-Length", "11"});
  Result<SigV4Signature> sig = SignSigV4Headers(r, Creds(), S3SigV4Config("us-east-1"), kTime);
  ASSERT_TRUE(sig.ok()) << sig.status().ToString();
  EXPECT_EQ(sig->canonical_request,
            "PUT\n"
            "/big.bin\n"
            "\n"
            "content-length:11\n"
            "host:examplebucket.s3.amazonaws.com\n"
            "x-amz-content-sha256:UNSIGNED-PAYLOAD\n"
            "x-amz-date:20130524T000000Z\n"
            "\n"
            "content-length;host;x-amz-content-sha256;x-amz-date\n"
            "UNSIGNED-PAYLOAD");
  EXPECT_EQ(HeaderValue(sig->headers_to_add, "Authorization"),
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
            "SignedHeaders=content-length;host;x-amz-content-sha256;x-amz-date, "
            "Signature=68331cfc6230756b9c32b06fcedc47ab59611f3ba3fd312571f7545de5eed52e");
  EXPECT_EQ(HeaderValue(sig->headers_to_add, "x-amz-content-sha256"), "UNSIGNED-PAYLOAD");
}

TEST(S3Botocore, ListObjectsV2Query) {
  SigningRequest r = Request("GET", "examplebucket.s3.amazonaws.com", "/", Sha256Hex(""));
  r.query = {{"list-type", "2"},
             {"prefix", "train data/"},
             {"max-keys", "1000"},
             {"continuation-token", "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM="}};
  Result<SigV4Signature> sig = SignSigV4Headers(r, Creds(), S3SigV4Config("us-east-1"), kTime);
  ASSERT_TRUE(sig.ok()) << sig.status().ToString();
  EXPECT_EQ(sig->canonical_request,
            "GET\n"
            "/\n"
            "continuation-token=1ueGcxLPRx1Tr%2FXYExHnhbYLgveDs2J%2Fwm36Hy4vbOwM%3D&list-type=2&"
            "max-keys=1000&prefix=train%20data%2F\n"
            "host:examplebucket.s3.amazonaws.com\n"
            "x-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n"
            "x-amz-date:20130524T000000Z\n"
            "\n"
            "host;x-amz-content-sha256;x-amz-date\n"
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(HeaderValue(sig->headers_to_add, "Authorization"),
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
            "SignedHeaders=host;x-amz-content-sha256;x-amz-date, "
            "Signature=836c88957d8e34d392ff6ad0ac43307b5eefe2b8cefd5924e01b4d520692fe33");
}

// botocore writes X-Amz-Expires before X-Amz-SignedHeaders, Sluice after it
// (the AWS test suite's order); the order of query parameters carries no
// meaning, so presigned URLs are compared as sorted parameter lists.
std::vector<std::string> SortedQuery(const std::string& query) {
  std::vector<std::string> parts;
  size_t pos = 0;
  while (pos <= query.size()) {
    size_t amp = query.find('&', pos);
    if (amp == std::string::npos) amp = query.size();
    parts.push_back(query.substr(pos, amp - pos));
    pos = amp + 1;
  }
  std::sort(parts.begin(), parts.end());
  return parts;
}

void ExpectSameUrl(const std::string& actual, const std::string& expected) {
  const size_t qa = actual.find('?');
  const size_t qe = expected.find('?');
  ASSERT_NE(qa, std::string::npos);
  ASSERT_NE(qe, std::string::npos);
  EXPECT_EQ(actual.substr(0, qa), expected.substr(0, qe));
  EXPECT_EQ(SortedQuery(actual.substr(qa + 1)), SortedQuery(expected.substr(qe + 1)));
}

TEST(S3Botocore, PresignGet) {
  SigningRequest r =
      Request("GET", "examplebucket.s3.amazonaws.com", "/test.txt", "UNSIGNED-PAYLOAD");
  Result<SigV4Signature> sig = PresignSigV4(r, Creds(), S3SigV4Config("us-east-1"), kTime, 86400);
  ASSERT_TRUE(sig.ok()) << sig.status().ToString();
  EXPECT_EQ(sig->canonical_request,
            "GET\n"
            "/test.txt\n"
            "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2F"
            "us-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&"
            "X-Amz-SignedHeaders=host\n"
            "host:examplebucket.s3.amazonaws.com\n"
            "\n"
            "host\n"
            "UNSIGNED-PAYLOAD");
  ExpectSameUrl(
      "https://examplebucket.s3.amazonaws.com" + r.path + "?" +
          EncodeQueryString(sig->query_to_add),
      "https://examplebucket.s3.amazonaws.com/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256&"
      "X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&"
      "X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host&"
      "X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404");
  // The signature is the last parameter, as in botocore's URL.
  EXPECT_EQ(sig->query_to_add.back().name, "X-Amz-Signature");
}

TEST(S3Botocore, PresignGetWithSessionToken) {
  SigningRequest r = Request("GET", "s3.us-east-1.amazonaws.com",
                          EncodeUriPath("/examplebucket/dir a/b+c.txt"), "UNSIGNED-PAYLOAD");
  Result<SigV4Signature> sig =
      PresignSigV4(r, Creds(/*with_token=*/true), S3SigV4Config("us-east-1"), kTime, 3600);
  ASSERT_TRUE(sig.ok()) << sig.status().ToString();
  EXPECT_EQ(sig->canonical_request,
            "GET\n"
            "/examplebucket/dir%20a/b%2Bc.txt\n"
            "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2F"
            "us-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=3600&"
            "X-Amz-Security-Token=IQoJb3JpZ2luX2VjEXAMPLE%2B%2Ftoken%3D%3D&"
            "X-Amz-SignedHeaders=host\n"
            "host:s3.us-east-1.amazonaws.com\n"
            "\n"
            "host\n"
            "UNSIGNED-PAYLOAD");
  ExpectSameUrl(
      "https://s3.us-east-1.amazonaws.com" + r.path + "?" + EncodeQueryString(sig->query_to_add),
      "https://s3.us-east-1.amazonaws.com/examplebucket/dir%20a/b%2Bc.txt?"
      "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2F"
      "us-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=3600&"
      "X-Amz-SignedHeaders=host&X-Amz-Security-Token=IQoJb3JpZ2luX2VjEXAMPLE%2B%2Ftoken%3D%3D&"
      "X-Amz-Signature=01e1e5150a45758bf36255e18e0e0f5ee8a5136e7b6c12887eeb7f32748afab0");
}

}  // namespace
}  // namespace sluice
