// SigV4 bad input: each a specific InvalidArgument, and no error ever holds
// the secret key or the session token.
#include <gtest/gtest.h>

#include "stores/signing/digest.h"
#include "stores/signing/sigv4.h"

namespace sluice {
namespace {

constexpr char kSecret[] = "SECRETwJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY";
constexpr char kSessionToken[] = "TOKENsessiontokenvalue==";
constexpr int64_t kSigningTime = 1440938160;

SigningRequest GoodRequest() {
  SigningRequest r;
  r.method = "GET";
  r.path = "/bucket/key";
  r.headers = {{"Host", "s3.amazonaws.com"}};
  r.payload_hash = Sha256Hex("");
  return r;
}

SigV4Credentials ErrorCreds() { return SigV4Credentials{"AKIDEXAMPLE", kSecret, kSessionToken}; }

void ExpectHeaderError(const SigningRequest& r, const SigV4Credentials& c, const SigV4Config& config,
                       int64_t time, const std::string& message) {
  Result<SigV4Signature> sig = SignSigV4Headers(r, c, config, time);
  ASSERT_FALSE(sig.ok()) << message;
  EXPECT_EQ(sig.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(sig.status().message(), message);
  EXPECT_EQ(sig.status().ToString().find("SECRET"), std::string::npos);
  EXPECT_EQ(sig.status().ToString().find("TOKEN"), std::string::npos);
}

TEST(SigV4Errors, SpecificMessagesWithoutSecrets) {
  const SigV4Config s3 = S3SigV4Config("us-east-1");
  SigV4Credentials c = ErrorCreds();

  c.access_key_id = "";
  ExpectHeaderError(GoodRequest(), c, s3, kSigningTime,
                    "SigV4: access key id is empty or holds whitespace, '/' or non-ASCII bytes");
  c = ErrorCreds();
  c.secret_access_key = "";
  ExpectHeaderError(GoodRequest(), c, s3, kSigningTime, "SigV4: secret access key is empty");

  ExpectHeaderError(GoodRequest(), ErrorCreds(), S3SigV4Config(""), kSigningTime,
                    "SigV4: region \"\" is empty or holds whitespace or '/'");
  ExpectHeaderError(GoodRequest(), ErrorCreds(), ServiceSigV4Config("us-east-1", "a/b"), kSigningTime,
                    "SigV4: service \"a/b\" is empty or holds whitespace or '/'");
  ExpectHeaderError(GoodRequest(), ErrorCreds(), s3, -5,
                    "SigV4: signing time -5 is outside 1970..9999");

  SigningRequest r = GoodRequest();
  r.payload_hash = "";
  ExpectHeaderError(r, ErrorCreds(), s3, kSigningTime,
                    "SigV4: payload hash is empty (set Sha256Hex(body) or UNSIGNED-PAYLOAD)");
  r = GoodRequest();
  r.headers.clear();
  ExpectHeaderError(r, ErrorCreds(), s3, kSigningTime,
                    "SigV4: request has no Host header; it must be signed");
  r = GoodRequest();
  r.method = "GE T";
  ExpectHeaderError(r, ErrorCreds(), s3, kSigningTime,
                    "SigV4: request method holds whitespace or non-ASCII bytes");
  r = GoodRequest();
  r.headers.push_back({"authorization", kSecret});
  ExpectHeaderError(r, ErrorCreds(), s3, kSigningTime,
                    "SigV4: request already has a Authorization header; the signer sets it");
  r = GoodRequest();
  r.headers.push_back({"x-amz-security-token", kSessionToken});
  ExpectHeaderError(r, ErrorCreds(), s3, kSigningTime,
                    "SigV4: request already has a X-Amz-Security-Token header; the signer sets it");
  r = GoodRequest();
  r.headers.push_back({"X-Amz-Content-SHA256", "UNSIGNED-PAYLOAD"});
  ExpectHeaderError(r, ErrorCreds(), s3, kSigningTime,
                    "SigV4: request already has a x-amz-content-sha256 header; the signer sets it");
  r = GoodRequest();
  r.path = "bucket/key";
  ExpectHeaderError(r, ErrorCreds(), s3, kSigningTime,
                    "request path must start with '/', got \"bucket/key\"");
  r = GoodRequest();
  r.headers.push_back({"Bad:Name", kSecret});
  ExpectHeaderError(r, ErrorCreds(), s3, kSigningTime,
                    "header 1 has a name with a character not allowed in HTTP header names "
                    "(byte 58)");
}

TEST(SigV4Errors, PresignLimits) {
  const SigV4Config s3 = S3SigV4Config("us-east-1");
  SigningRequest r = GoodRequest();
  r.payload_hash = "UNSIGNED-PAYLOAD";
  for (int64_t bad : {int64_t{0}, int64_t{-1}, kMaxPresignSeconds + 1}) {
    Result<SigV4Signature> sig = PresignSigV4(r, ErrorCreds(), s3, kSigningTime, bad);
    ASSERT_FALSE(sig.ok());
    EXPECT_EQ(sig.status().message(), "SigV4: presign expiry " + std::to_string(bad) +
                                          " s is outside [1, 604800]");
  }
  EXPECT_TRUE(PresignSigV4(r, ErrorCreds(), s3, kSigningTime, kMaxPresignSeconds).ok());

  r.query = {{"x-amz-signature", "abc"}};
  Result<SigV4Signature> sig = PresignSigV4(r, ErrorCreds(), s3, kSigningTime, 60);
  ASSERT_FALSE(sig.ok());
  EXPECT_EQ(sig.status().message(),
            "SigV4: request query already has x-amz-signature; the signer sets it");
}

TEST(SigV4Errors, SecretChangesSignatureButNeverAppearsInIt) {
  SigningRequest r = GoodRequest();
  SigV4Credentials a = ErrorCreds();
  SigV4Credentials b = ErrorCreds();
  b.secret_access_key += "x";
  Result<SigV4Signature> sa = SignSigV4Headers(r, a, S3SigV4Config("us-east-1"), kSigningTime);
  Result<SigV4Signature> sb = SignSigV4Headers(r, b, S3SigV4Config("us-east-1"), kSigningTime);
  ASSERT_TRUE(sa.ok() && sb.ok());
  EXPECT_NE(sa->signature, sb->signature);
  EXPECT_EQ(sa->canonical_request, sb->canonical_request);
  EXPECT_EQ(sa->canonical_request.find(kSecret), std::string::npos);
  EXPECT_EQ(sa->string_to_sign.find(kSecret), std::string::npos);
  for (const SigningHeader& h : sa->headers_to_add) {
    EXPECT_EQ(h.value.find(kSecret), std::string::npos) << h.name;
  }
}

}  // namespace
}  // namespace sluice
