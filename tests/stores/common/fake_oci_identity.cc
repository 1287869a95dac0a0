#include "tests/stores/common/fake_oci_identity.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <algorithm>
#include <ctime>
#include <vector>

#include "tests/stores/common/fake_crypto.h"

namespace sluice::testing {
namespace {

// The PEM's body as the federation request carries it.
std::string FakeOciPemBody(const std::string& pem) {
  std::string out;
  size_t pos = 0;
  while (pos < pem.size()) {
    size_t end = pem.find('\n', pos);
    if (end == std::string::npos) end = pem.size();
    const std::string line = pem.substr(pos, end - pos);
    if (line.rfind("-----", 0) != 0) out += line;
    pos = end + 1;
  }
  return out;
}

X509* ReadCert(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* x = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  return x;
}

FakeResponse NotAuthenticated() {
  return {401, {{"Content-Type", "application/json"}},
          "{\"code\": \"NotAuthenticated\", \"message\": \"The required information to complete "
          "authentication was not provided or was incorrect.\"}"};
}

}  // namespace

TestCertificate MakeTestCertificate(const std::string& cn, const std::string& ou) {
  EVP_PKEY* key = EVP_RSA_gen(2048);
  X509* x = X509_new();
  X509_set_version(x, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
  X509_gmtime_adj(X509_getm_notBefore(x), -60);
  X509_gmtime_adj(X509_getm_notAfter(x), 86400);
  X509_set_pubkey(x, key);
  X509_NAME* name = X509_get_subject_name(x);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  if (!ou.empty()) {
    X509_NAME_add_entry_by_txt(name, "OU", MBSTRING_UTF8,
                               reinterpret_cast<const unsigned char*>(ou.c_str()), -1, -1, 0);
  }
  X509_set_issuer_name(x, name);
  X509_sign(x, key, EVP_sha256());
  BIO* cert = BIO_new(BIO_s_mem());
  BIO* priv = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(cert, x);
  PEM_write_bio_PrivateKey(priv, key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  TestCertificate out;
  long n = BIO_get_mem_data(cert, &data);
  out.cert_pem.assign(data, static_cast<size_t>(n));
  n = BIO_get_mem_data(priv, &data);
  out.key_pem.assign(data, static_cast<size_t>(n));
  BIO_free(cert);
  BIO_free(priv);
  X509_free(x);
  EVP_PKEY_free(key);
  return out;
}

std::string CertificateSha1(const std::string& cert_pem) {
  X509* x = ReadCert(cert_pem);
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  X509_digest(x, EVP_sha1(), md, &len);
  X509_free(x);
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    if (i) out += ':';
    out += kHex[md[i] >> 4];
    out += kHex[md[i] & 15];
  }
  return out;
}

FakeOciIdentity::FakeOciIdentity(std::string tenancy, std::string region, int64_t token_ttl_s)
    : tenancy_(std::move(tenancy)),
      region_(std::move(region)),
      ttl_s_(token_ttl_s),
      leaf_(MakeTestCertificate("ocid1.instance.oc1..fake", "opc-tenant:" + tenancy_)),
      intermediate_(MakeTestCertificate("PKISVC Identity Intermediate fake", "")),
      metadata_(std::make_unique<FakeHttpServer>([this](const FakeRequest& r) { return Metadata(r); })),
      auth_(std::make_unique<FakeHttpServer>([this](const FakeRequest& r) { return Federation(r); })) {}

FakeOciIdentity::~FakeOciIdentity() {
  metadata_->Stop();
  auth_->Stop();
}

std::string FakeOciIdentity::metadata_url() const { return metadata_->url() + "/opc/v2"; }
std::string FakeOciIdentity::federation_url() const { return auth_->url() + "/v1/x509"; }

std::string FakeOciIdentity::leaf_cert_pem() {
  std::lock_guard<std::mutex> lock(mu_);
  return leaf_.cert_pem;
}
void FakeOciIdentity::set_leaf(TestCertificate leaf) {
  std::lock_guard<std::mutex> lock(mu_);
  leaf_ = std::move(leaf);
}
void FakeOciIdentity::set_missing_path(std::string path) {
  std::lock_guard<std::mutex> lock(mu_);
  missing_path_ = std::move(path);
}
int FakeOciIdentity::tokens_issued() {
  std::lock_guard<std::mutex> lock(mu_);
  return tokens_;
}
std::string FakeOciIdentity::last_token() {
  std::lock_guard<std::mutex> lock(mu_);
  return last_token_;
}
std::string FakeOciIdentity::last_session_public_pem() {
  std::lock_guard<std::mutex> lock(mu_);
  return last_public_;
}
int FakeOciIdentity::metadata_gets() {
  std::lock_guard<std::mutex> lock(mu_);
  return metadata_gets_;
}
int FakeOciIdentity::refused() {
  std::lock_guard<std::mutex> lock(mu_);
  return refused_;
}
std::string FakeOciIdentity::last_refusal() {
  std::lock_guard<std::mutex> lock(mu_);
  return last_refusal_;
}

FakeResponse FakeOciIdentity::Metadata(const FakeRequest& r) {
  std::lock_guard<std::mutex> lock(mu_);
  ++metadata_gets_;
  if (r.method != "GET" || r.Header("authorization") != "Bearer Oracle") {
    ++refused_;
    last_refusal_ = "metadata: no Authorization: Bearer Oracle";
    return {401, {}, "unauthorized"};
  }
  const std::string prefix = "/opc/v2/";
  const std::string path = r.target.rfind(prefix, 0) == 0 ? r.target.substr(prefix.size()) : "";
  if (path == missing_path_) return {404, {}, "Not Found"};
  if (path == "instance/region") return {200, {}, region_};
  if (path == "instance/id") return {200, {}, "OCID1.INSTANCE.OC1..FAKE\n"};  // the SDK lowers it
  if (path == "identity/cert.pem") return {200, {}, leaf_.cert_pem};
  if (path == "identity/key.pem") return {200, {}, leaf_.key_pem};
  if (path == "identity/intermediate.pem") return {200, {}, intermediate_.cert_pem};
  return {404, {}, "Not Found"};
}

FakeResponse FakeOciIdentity::Federation(const FakeRequest& r) {
  std::lock_guard<std::mutex> lock(mu_);
  auto refuse = [&](const std::string& why) {
    ++refused_;
    last_refusal_ = why;
    return NotAuthenticated();
  };
  if (r.method != "POST" || r.target != "/v1/x509") return refuse("not POST /v1/x509");
  const std::string sha = FakeBase64(FakeDigest(r.body, EVP_sha256()));
  if (r.Header("x-content-sha256") != sha) return refuse("x-content-sha256 is not the body's");
  if (r.Header("content-type") != "application/json") return refuse("content-type");
  if (r.Header("content-length") != std::to_string(r.body.size())) return refuse("content-length");
  const std::string prefix =
      "Signature algorithm=\"rsa-sha256\",headers=\"date (request-target) content-length "
      "content-type x-content-sha256\",keyId=\"" + tenancy_ + "/fed-x509/" +
      CertificateSha1(leaf_.cert_pem) + "\",signature=\"";
  const std::string tail = "\",version=\"1\"";
  const std::string auth = r.Header("authorization");
  if (auth.rfind(prefix, 0) != 0 || auth.size() < prefix.size() + tail.size() ||
      auth.compare(auth.size() - tail.size(), tail.size(), tail) != 0) {
    return refuse("authorization header or key id");
  }
  const std::string sig_b64 = auth.substr(prefix.size(), auth.size() - prefix.size() - tail.size());
  const std::string signing = "date: " + r.Header("date") + "\n(request-target): post /v1/x509" +
                              "\ncontent-length: " + r.Header("content-length") +
                              "\ncontent-type: " + r.Header("content-type") +
                              "\nx-content-sha256: " + r.Header("x-content-sha256");
  X509* cert = ReadCert(leaf_.cert_pem);
  EVP_PKEY* leaf_public = X509_get_pubkey(cert);
  X509_free(cert);
  const bool verified = VerifiesRsaSha256(leaf_public, sig_b64, signing);
  EVP_PKEY_free(leaf_public);
  if (r.Header("date").empty() || !verified) return refuse("signature does not verify with the leaf certificate");
  // The body exactly as the SDK's json.dumps writes it.
  const std::string public_body = QuotedAfter(r.body, "\"publicKey\": \"");
  const std::string expected = "{\"certificate\": \"" + FakeOciPemBody(leaf_.cert_pem) +
                               "\", \"publicKey\": \"" + public_body +
                               "\", \"intermediateCertificates\": [\"" +
                               FakeOciPemBody(intermediate_.cert_pem) + "\"]}";
  if (r.body != expected) return refuse("body is not {certificate, publicKey, intermediateCertificates}");
  std::string pem = "-----BEGIN PUBLIC KEY-----\n";
  for (size_t i = 0; i < public_body.size(); i += 64) pem += public_body.substr(i, 64) + "\n";
  pem += "-----END PUBLIC KEY-----\n";
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  EVP_PKEY* session = PEM_read_bio_PUBKEY(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  if (session == nullptr) return refuse("publicKey is not a public key");
  EVP_PKEY_free(session);
  ++tokens_;
  const int64_t exp = static_cast<int64_t>(std::time(nullptr)) + ttl_s_;
  last_token_ = FakeBase64Url("{\"alg\": \"RS256\", \"typ\": \"JWT\"}") + "." +
                FakeBase64Url("{\"sub\": \"ocid1.instance.oc1..fake\", \"opc-tenant\": \"" +
                                 tenancy_ + "\", \"exp\": " + std::to_string(exp) +
                                 ", \"n\": " + std::to_string(tokens_) + "}") +
                ".c2lnbmF0dXJl";
  last_public_ = pem;
  return {200, {{"Content-Type", "application/json"}}, "{\"token\": \"" + last_token_ + "\"}"};
}

}  // namespace sluice::testing
