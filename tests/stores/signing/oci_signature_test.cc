// OCI request signatures (stores/signing/oci_signature.h) against the known
// answers the OCI SDK's own signer gave for the same keys, requests and dates
// (tests/data/oci/signature_vectors.json, written by
// tests/sdk_oracle/oci_vectors.py, which run_oci.sh re-checks against the
// pinned SDK).
#include "stores/signing/oci_signature.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <string>

#include "base/file.h"
#include "stores/signing/digest.h"

namespace sluice {
namespace {

const std::string kDataDir = std::string(SLUICE_TEST_DATA_DIR) + "/oci";

std::string SlurpVectors(const std::string& path) {
  Result<std::string> r = ReadFile(path);
  EXPECT_TRUE(r.ok()) << path << ": " << r.status().ToString();
  return r.ok() ? *r : std::string();
}

std::string Str(simdjson::dom::element e) {
  std::string_view s;
  return e.get(s) == simdjson::SUCCESS ? std::string(s) : std::string();
}

TEST(OciSignatureTest, TheSameAuthorizationAsTheOciSdkForTheSameRequestAndDate) {
  simdjson::dom::parser parser;
  simdjson::padded_string json(SlurpVectors(kDataDir + "/signature_vectors.json"));
  simdjson::dom::element root = parser.parse(json);
  const std::string key_id = Str(root["key_id"]);
  int checked = 0, with_body = 0, encrypted = 0;
  for (simdjson::dom::element v : root["vectors"].get_array()) {
    OciApiKey key;
    key.key_id = key_id;
    key.private_key_pem = SlurpVectors(kDataDir + "/" + Str(v["key_file"]));
    key.passphrase = Str(v["passphrase"]);
    key.what = Str(v["key_file"]);
    OciRequestToSign r;
    r.method = Str(v["method"]);
    r.host = Str(v["host"]);
    r.target = Str(v["target"]);
    r.date = Str(v["date"]);
    if (!v["body"].is_null()) {
      const std::string body = Str(v["body"]);
      r.sign_body = true;
      r.content_length = body.size();
      r.content_type = Str(v["content_type"]);
      r.content_sha256_b64 = Base64Encode(Sha256(body));
      EXPECT_EQ(r.content_sha256_b64, Str(v["x_content_sha256"])) << r.target;
      EXPECT_EQ(std::to_string(r.content_length), Str(v["content_length"])) << r.target;
      ++with_body;
    }
    auto got = OciAuthorization(r, key);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(*got, Str(v["authorization"])) << r.method << " " << r.target << " " << key.what;
    encrypted += !key.passphrase.empty();
    ++checked;
  }
  EXPECT_EQ(checked, 14);
  EXPECT_EQ(with_body, 4);
  EXPECT_EQ(encrypted, 7);
}

TEST(OciSignatureTest, SigningStringAndDate) {
  OciRequestToSign r;
  r.method = "GET";
  r.host = "objectstorage.us-ashburn-1.oraclecloud.com";
  r.target = "/n/ns/b/bkt/o/x";
  EXPECT_EQ(OciHttpDate(1388957500), "Sun, 05 Jan 2014 21:31:40 GMT");
  EXPECT_EQ(OciHttpDate(1700000000), "Tue, 14 Nov 2023 22:13:20 GMT");
  r.date = "Thu, 05 Jan 2014 21:31:40 GMT";  // OCI's documentation's example, as sent
  EXPECT_EQ(OciSigningString(r),
            "date: Thu, 05 Jan 2014 21:31:40 GMT\n(request-target): get /n/ns/b/bkt/o/x\n"
            "host: objectstorage.us-ashburn-1.oraclecloud.com");
  r.sign_body = true;
  r.method = "PUT";
  r.content_length = 3;
  r.content_type = "application/octet-stream";
  r.content_sha256_b64 = "abc=";
  EXPECT_EQ(OciSigningString(r),
            "date: Thu, 05 Jan 2014 21:31:40 GMT\n(request-target): put /n/ns/b/bkt/o/x\n"
            "host: objectstorage.us-ashburn-1.oraclecloud.com\ncontent-length: 3\n"
            "content-type: application/octet-stream\nx-content-sha256: abc=");
  // The X.509 federation request (instance principals) signs no host.
  r.sign_host = false;
  r.method = "POST";
  r.target = "/v1/x509";
  r.content_type = "application/json";
  EXPECT_EQ(OciSigningString(r),
            "date: Thu, 05 Jan 2014 21:31:40 GMT\n(request-target): post /v1/x509\n"
            "content-length: 3\ncontent-type: application/json\nx-content-sha256: abc=");
  auto auth = OciAuthorization(
      r, OciApiKey{"ocid1.tenancy.oc1..t/fed-x509/AB:CD",
                   *ReadFile(kDataDir + "/test_api_key.pem"), "", "k"});
  ASSERT_TRUE(auth.ok()) << auth.status().ToString();
  EXPECT_EQ(auth->rfind("Signature algorithm=\"rsa-sha256\",headers=\"date (request-target) "
                        "content-length content-type x-content-sha256\",keyId=\"ocid1.tenancy.oc1..t/"
                        "fed-x509/AB:CD\",signature=\"", 0),
            0u)
      << *auth;
}

TEST(OciSignatureTest, KeyErrorsNameTheFileNeverThePassphrase) {
  OciRequestToSign r;
  r.method = "GET";
  r.host = "h";
  r.target = "/";
  r.date = "Thu, 05 Jan 2014 21:31:40 GMT";
  OciApiKey key;
  key.key_id = "t/u/f";
  key.private_key_pem = SlurpVectors(kDataDir + "/test_api_key_encrypted.pem");
  key.what = "~/.oci/key.pem";
  auto none = OciAuthorization(r, key);
  EXPECT_EQ(none.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(none.status().message(), "~/.oci/key.pem holds no unencrypted PEM private key");
  key.passphrase = "not-the-passphrase";
  auto wrong = OciAuthorization(r, key);
  EXPECT_EQ(wrong.status().message(),
            "~/.oci/key.pem holds no PEM private key that its passphrase opens");
  EXPECT_EQ(wrong.status().message().find("not-the-passphrase"), std::string::npos);
}

}  // namespace
}  // namespace sluice
