#include "tests/stores/credentials/oci_rp_fakes.h"

#include <openssl/evp.h>
#include <openssl/pem.h>

#include <ctime>

namespace sluice::testing {
namespace {

std::string RpFakeBase64(const std::string& bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(bytes.data()),
                                static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

std::string RpFakeBase64Url(const std::string& bytes) {
  std::string s = RpFakeBase64(bytes);
  while (!s.empty() && s.back() == '=') s.pop_back();
  for (char& c : s) {
    if (c == '+') c = '-';
    if (c == '/') c = '_';
  }
  return s;
}

std::string RpFakeSha256(const std::string& data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), out, &len, EVP_sha256(), nullptr);
  return std::string(reinterpret_cast<const char*>(out), len);
}

// `name`="value" of an OCI Authorization header, "" when absent.
std::string RpFakeField(const std::string& auth, const std::string& name) {
  const std::string open = name + "=\"";
  const size_t a = auth.find(open);
  if (a == std::string::npos) return "";
  const size_t b = auth.find('"', a + open.size());
  return b == std::string::npos ? "" : auth.substr(a + open.size(), b - a - open.size());
}

bool RpFakeVerify(const std::string& public_pem, const std::string& sig_b64, const std::string& data) {
  std::string sig(sig_b64.size(), '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(sig.data()),
                                reinterpret_cast<const unsigned char*>(sig_b64.data()),
                                static_cast<int>(sig_b64.size()));
  if (n < 0 || sig_b64.size() < 2) return false;
  size_t pad = 0;
  for (size_t i = sig_b64.size() - 2; i < sig_b64.size(); ++i) pad += sig_b64[i] == '=';
  sig.resize(static_cast<size_t>(n) - pad);
  BIO* bio = BIO_new_mem_buf(public_pem.data(), static_cast<int>(public_pem.size()));
  EVP_PKEY* key = PEM_read_bio_PUBKEY(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  if (key == nullptr) return false;
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  const bool ok =
      EVP_DigestVerifyInit(ctx, nullptr, EVP_sha256(), nullptr, key) == 1 &&
      EVP_DigestVerify(ctx, reinterpret_cast<const unsigned char*>(sig.data()), sig.size(),
                       reinterpret_cast<const unsigned char*>(data.data()), data.size()) == 1;
  EVP_MD_CTX_free(ctx);
  EVP_PKEY_free(key);
  return ok;
}

// Between `open` and the next '"' in `s`.
std::string RpFakeBetween(const std::string& s, const std::string& open) {
  const size_t a = s.find(open);
  if (a == std::string::npos) return "";
  const size_t b = s.find('"', a + open.size());
  return b == std::string::npos ? "" : s.substr(a + open.size(), b - a - open.size());
}

}  // namespace

std::string PublicPemOf(const std::string& private_pem) {
  BIO* in = BIO_new_mem_buf(private_pem.data(), static_cast<int>(private_pem.size()));
  EVP_PKEY* key = PEM_read_bio_PrivateKey(in, nullptr, nullptr, nullptr);
  BIO_free(in);
  if (key == nullptr) return "";
  BIO* out = BIO_new(BIO_s_mem());
  PEM_write_bio_PUBKEY(out, key);
  char* data = nullptr;
  const long n = BIO_get_mem_data(out, &data);
  std::string pem(data, static_cast<size_t>(n));
  BIO_free(out);
  EVP_PKEY_free(key);
  return pem;
}

FakeOciRpService::FakeOciRpService()
    : server_(std::make_unique<FakeHttpServer>([this](const FakeRequest& r) { return Handle(r); })) {}

FakeOciRpService::~FakeOciRpService() { server_->Stop(); }

void FakeOciRpService::AddKey(const std::string& key_id, const std::string& public_pem) {
  std::lock_guard<std::mutex> lock(mu_);
  keys_[key_id] = public_pem;
  if (key_id.rfind("ST$", 0) == 0) token_order_.push_back(key_id);
}

void FakeOciRpService::SetParent(const std::string& path, const std::string& url) {
  std::lock_guard<std::mutex> lock(mu_);
  parents_[path] = url;
}

std::vector<std::string> FakeOciRpService::log() {
  std::lock_guard<std::mutex> lock(mu_);
  return log_;
}
int FakeOciRpService::refused() {
  std::lock_guard<std::mutex> lock(mu_);
  return refused_;
}
std::string FakeOciRpService::last_refusal() {
  std::lock_guard<std::mutex> lock(mu_);
  return last_refusal_;
}
std::string FakeOciRpService::last_token() {
  std::lock_guard<std::mutex> lock(mu_);
  return last_token_;
}
std::string FakeOciRpService::last_session_public_pem() {
  std::lock_guard<std::mutex> lock(mu_);
  return last_public_;
}

std::string FakeOciRpService::ShowKeyId(const std::string& key_id) {
  for (size_t i = 0; i < token_order_.size(); ++i) {
    if (token_order_[i] == key_id) return "ST$<token " + std::to_string(i + 1) + ">";
  }
  return key_id;
}

FakeResponse FakeOciRpService::Handle(const FakeRequest& r) {
  std::lock_guard<std::mutex> lock(mu_);
  auto refuse = [&](const std::string& why) {
    ++refused_;
    last_refusal_ = why;
    return FakeResponse{401, {{"Content-Type", "application/json"}},
                        "{\"code\": \"NotAuthenticated\", \"message\": \"" + why + "\"}"};
  };
  const bool post = r.method == "POST";
  if (!post && r.method != "GET") return refuse("not GET or POST");
  if (post && r.target != "/v1/resourcePrincipalSessionToken") return refuse("POST elsewhere");
  const std::string auth = r.Header("authorization");
  const std::string key_id = RpFakeField(auth, "keyId");
  std::string headers = "date (request-target) host";
  std::string signing = "date: " + r.Header("date") + "\n(request-target): " +
                        (post ? "post " : "get ") + r.target + "\nhost: " + r.Header("host");
  if (post) {
    if (r.Header("x-content-sha256") != RpFakeBase64(RpFakeSha256(r.body))) {
      return refuse("x-content-sha256 is not the body's");
    }
    if (r.Header("content-type") != "application/json") return refuse("content-type");
    headers += " content-length content-type x-content-sha256";
    signing += "\ncontent-length: " + r.Header("content-length") + "\ncontent-type: " +
               r.Header("content-type") + "\nx-content-sha256: " + r.Header("x-content-sha256");
  }
  if (auth.rfind("Signature ", 0) != 0 || RpFakeField(auth, "algorithm") != "rsa-sha256" ||
      RpFakeField(auth, "headers") != headers || RpFakeField(auth, "version") != "1") {
    return refuse("authorization is not an OCI signature over " + headers);
  }
  auto key = keys_.find(key_id);
  if (key == keys_.end()) return refuse("unknown key id");
  if (r.Header("date").empty() || !RpFakeVerify(key->second, RpFakeField(auth, "signature"), signing)) {
    return refuse("signature does not verify");
  }
  std::string line = r.method + " " + r.target + " key=" + ShowKeyId(key_id);
  if (!r.Header("security-context").empty()) line += " security-context=" + r.Header("security-context");
  log_.push_back(line);
  if (!post) {
    const std::string n = std::to_string(rpts_.size() + 1);
    rpts_["rpt-" + n] = "spst-" + n;
    FakeResponse out{200, {{"Content-Type", "application/json"}},
                     "{\"resourcePrincipalToken\": \"rpt-" + n +
                         "\", \"servicePrincipalSessionToken\": \"spst-" + n + "\"}"};
    if (auto p = parents_.find(r.target); p != parents_.end()) {
      out.headers.emplace_back("opc-parent-rpt-url", p->second);
    }
    return out;
  }
  const std::string rpt = RpFakeBetween(r.body, "{\"resourcePrincipalToken\": \"");
  auto handed = rpts_.find(rpt);
  if (handed == rpts_.end()) return refuse("unknown resourcePrincipalToken");
  const std::string public_body = RpFakeBetween(r.body, "\"sessionPublicKey\": \"");
  const std::string expected = "{\"resourcePrincipalToken\": \"" + rpt +
                               "\", \"servicePrincipalSessionToken\": \"" + handed->second +
                               "\", \"sessionPublicKey\": \"" + public_body + "\"}";
  if (r.body != expected) return refuse("body differs from the SDK's");
  std::string pem = "-----BEGIN PUBLIC KEY-----\n";
  for (size_t i = 0; i < public_body.size(); i += 64) pem += public_body.substr(i, 64) + "\n";
  pem += "-----END PUBLIC KEY-----\n";
  ++issued_;
  const int64_t exp = static_cast<int64_t>(std::time(nullptr)) + 3600;
  last_token_ = RpFakeBase64Url("{\"alg\": \"RS256\"}") + "." +
                RpFakeBase64Url("{\"sub\": \"ocid1.resource.oc1..rp\", \"exp\": " + std::to_string(exp) +
                                ", \"n\": " + std::to_string(issued_) + "}") +
                ".c2lnbmF0dXJl";
  last_public_ = pem;
  keys_["ST$" + last_token_] = pem;
  token_order_.push_back("ST$" + last_token_);
  return {200, {{"Content-Type", "application/json"}}, "{\"token\": \"" + last_token_ + "\"}"};
}

}  // namespace sluice::testing
