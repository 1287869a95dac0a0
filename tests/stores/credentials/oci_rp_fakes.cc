#include "tests/stores/credentials/oci_rp_fakes.h"

#include <ctime>

namespace sluice::testing {
namespace {

// `name`="value" of an OCI Authorization header, "" when absent.
std::string AuthField(const std::string& auth, const std::string& name) {
  return QuotedAfter(auth, name + "=\"");
}

}  // namespace

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
  const std::string key_id = AuthField(auth, "keyId");
  std::string headers = "date (request-target) host";
  std::string signing = "date: " + r.Header("date") + "\n(request-target): " +
                        (post ? "post " : "get ") + r.target + "\nhost: " + r.Header("host");
  if (post) {
    if (r.Header("x-content-sha256") != FakeBase64(FakeDigest(r.body, EVP_sha256()))) {
      return refuse("x-content-sha256 is not the body's");
    }
    if (r.Header("content-type") != "application/json") return refuse("content-type");
    headers += " content-length content-type x-content-sha256";
    signing += "\ncontent-length: " + r.Header("content-length") + "\ncontent-type: " +
               r.Header("content-type") + "\nx-content-sha256: " + r.Header("x-content-sha256");
  }
  if (auth.rfind("Signature ", 0) != 0 || AuthField(auth, "algorithm") != "rsa-sha256" ||
      AuthField(auth, "headers") != headers || AuthField(auth, "version") != "1") {
    return refuse("authorization is not an OCI signature over " + headers);
  }
  auto key = keys_.find(key_id);
  if (key == keys_.end()) return refuse("unknown key id");
  if (r.Header("date").empty() || !VerifiesRsaSha256Pem(key->second, AuthField(auth, "signature"), signing)) {
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
  const std::string rpt = QuotedAfter(r.body, "{\"resourcePrincipalToken\": \"");
  auto handed = rpts_.find(rpt);
  if (handed == rpts_.end()) return refuse("unknown resourcePrincipalToken");
  const std::string public_body = QuotedAfter(r.body, "\"sessionPublicKey\": \"");
  const std::string expected = "{\"resourcePrincipalToken\": \"" + rpt +
                               "\", \"servicePrincipalSessionToken\": \"" + handed->second +
                               "\", \"sessionPublicKey\": \"" + public_body + "\"}";
  if (r.body != expected) return refuse("body differs from the SDK's");
  std::string pem = "-----BEGIN PUBLIC KEY-----\n";
  for (size_t i = 0; i < public_body.size(); i += 64) pem += public_body.substr(i, 64) + "\n";
  pem += "-----END PUBLIC KEY-----\n";
  ++issued_;
  const int64_t exp = static_cast<int64_t>(std::time(nullptr)) + 3600;
  last_token_ = FakeBase64Url("{\"alg\": \"RS256\"}") + "." +
                FakeBase64Url("{\"sub\": \"ocid1.resource.oc1..rp\", \"exp\": " + std::to_string(exp) +
                                ", \"n\": " + std::to_string(issued_) + "}") +
                ".c2lnbmF0dXJl";
  last_public_ = pem;
  keys_["ST$" + last_token_] = pem;
  token_order_.push_back("ST$" + last_token_);
  return {200, {{"Content-Type", "application/json"}}, "{\"token\": \"" + last_token_ + "\"}"};
}

}  // namespace sluice::testing
