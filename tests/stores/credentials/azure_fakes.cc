#include "tests/stores/credentials/azure_fakes.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <ctime>
#include <stdexcept>

#include "formats/json/py_json.h"
#include "stores/signing/uri_encoding.h"
#include "stores/signing/digest.h"
#include "stores/signing/jwt_rs256.h"
#include "tests/stores/credentials/form_fields.h"

namespace sluice::testing {
namespace {

std::string Bio(BIO* bio) {
  char* data = nullptr;
  long len = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<size_t>(len));
  BIO_free(bio);
  return out;
}

bool Base64UrlDecode(std::string text, std::string* out) {
  for (char& c : text) {
    if (c == '-') c = '+';
    if (c == '_') c = '/';
  }
  while (text.size() % 4 != 0) text += '=';
  return Base64Decode(text, out);
}

std::string Param(const std::string& target, const std::string& name) {
  size_t q = target.find('?');
  if (q == std::string::npos) return "";
  return FormFields(target.substr(q + 1))[name];
}

std::string Path(const std::string& target) { return target.substr(0, target.find('?')); }

FakeResponse Json(int status, std::string body) {
  FakeResponse r;
  r.status = status;
  r.headers.emplace_back("Content-Type", "application/json");
  r.body = std::move(body);
  return r;
}

// Verifies `jwt`'s RS256 signature with `cert_pem`'s key; the claims and
// header JSON in *claims / *header. "" when good, else why not.
std::string VerifyJwt(const std::string& jwt, const std::string& cert_pem, JsonValue* header,
                      JsonValue* claims) {
  size_t a = jwt.find('.'), b = jwt.rfind('.');
  if (a == std::string::npos || a == b) return "not a JWT";
  std::string h, c, sig;
  if (!Base64UrlDecode(jwt.substr(0, a), &h) || !Base64UrlDecode(jwt.substr(a + 1, b - a - 1), &c) ||
      !Base64UrlDecode(jwt.substr(b + 1), &sig)) {
    return "not base64url";
  }
  auto hj = ParsePyJson(h), cj = ParsePyJson(c);
  if (!hj.ok() || !cj.ok()) return "not JSON";
  *header = *hj;
  *claims = *cj;
  BIO* bio = BIO_new_mem_buf(cert_pem.data(), static_cast<int>(cert_pem.size()));
  X509* x509 = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  if (x509 == nullptr) return "bad test certificate";
  EVP_PKEY* key = X509_get_pubkey(x509);
  X509_free(x509);
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  const std::string input = jwt.substr(0, b);
  bool ok = EVP_DigestVerifyInit(ctx, nullptr, EVP_sha256(), nullptr, key) == 1 &&
            EVP_DigestVerify(ctx, reinterpret_cast<const unsigned char*>(sig.data()), sig.size(),
                             reinterpret_cast<const unsigned char*>(input.data()),
                             input.size()) == 1;
  EVP_MD_CTX_free(ctx);
  EVP_PKEY_free(key);
  return ok ? "" : "signature does not verify";
}

int64_t IntClaim(const JsonValue& v, const char* name) {
  const JsonValue* m = JsonMember(v, name);
  if (m == nullptr) return -1;
  if (const auto* i = std::get_if<int64_t>(&m->v)) return *i;
  return -1;
}

}  // namespace

TestCertificate MakeTestCertificate(const std::string& common_name) {
  EVP_PKEY* key = EVP_RSA_gen(2048);
  if (key == nullptr) throw std::runtime_error("EVP_RSA_gen failed");
  X509* x509 = X509_new();
  ASN1_INTEGER_set(X509_get_serialNumber(x509), 1);
  X509_gmtime_adj(X509_getm_notBefore(x509), -3600);
  X509_gmtime_adj(X509_getm_notAfter(x509), 86400);
  X509_set_pubkey(x509, key);
  X509_NAME* name = X509_get_subject_name(x509);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(common_name.c_str()), -1, -1, 0);
  X509_set_issuer_name(x509, name);
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, x509, x509, nullptr, nullptr, 0);
  X509_EXTENSION* san = X509V3_EXT_conf_nid(nullptr, &ctx, NID_subject_alt_name,
                                            const_cast<char*>("IP:127.0.0.1,DNS:localhost"));
  X509_add_ext(x509, san, -1);
  X509_EXTENSION_free(san);
  X509_sign(x509, key, EVP_sha256());
  TestCertificate out;
  BIO* cert_bio = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(cert_bio, x509);
  out.cert_pem = Bio(cert_bio);
  BIO* key_bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(key_bio, key, nullptr, nullptr, 0, nullptr, nullptr);
  out.key_pem = Bio(key_bio);
  unsigned char sha1[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  X509_digest(x509, EVP_sha1(), sha1, &len);
  out.x5t = Base64UrlEncode(std::string_view(reinterpret_cast<const char*>(sha1), len));
  X509_free(x509);
  EVP_PKEY_free(key);
  return out;
}

std::string FakeEntraId::TokenNumber(int n) const {
  if (!options_.jwt_tokens) return "entra-token-" + std::to_string(n);
  // Lifetimes from the wall clock: the token's reader checks them so. The
  // number keeps tokens apart; the signature is not checked by azurite.
  const int64_t now = static_cast<int64_t>(std::time(nullptr));
  const std::string claims =
      "{\"aud\":\"https://storage.azure.com\",\"iss\":\"https://sts.windows.net/" +
      options_.tenant + "/\",\"iat\":" + std::to_string(now) + ",\"nbf\":" +
      std::to_string(now - 60) + ",\"exp\":" + std::to_string(now + options_.lifetime_s) +
      ",\"appid\":\"" + options_.client_id + "\",\"uti\":\"fake-" + std::to_string(n) + "\"}";
  return Base64UrlEncode("{\"alg\":\"RS256\",\"typ\":\"JWT\"}") + "." +
         Base64UrlEncode(claims) + "." + Base64UrlEncode("fake-signature");
}

FakeEntraId::FakeEntraId(FakeEntraOptions options) : options_(std::move(options)) {
  server_ = std::make_unique<FakeHttpServer>([this](const FakeRequest& r) { return Handle(r); });
}

std::string FakeEntraId::last_kind() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_kind_;
}

FakeResponse FakeEntraId::Refuse(int status, const std::string& error,
                                 const std::string& description) {
  ++refused_;
  return Json(status, "{\"error\": \"" + error + "\", \"error_description\": \"" + description +
                          "\\r\\nTrace ID: 0000\", \"error_codes\": [7000215]}");
}

FakeResponse FakeEntraId::Handle(const FakeRequest& req) {
  const std::string path = "/" + options_.tenant + "/oauth2/v2.0/token";
  if (req.method != "POST" || Path(req.target) != path) {
    return Refuse(404, "not_found", "AADSTS90002: no such tenant or endpoint");
  }
  if (req.Header("content-type").rfind("application/x-www-form-urlencoded", 0) != 0) {
    return Refuse(400, "invalid_request", "AADSTS900144: the request body must be a form");
  }
  auto form = FormFields(req.body);
  if (form["grant_type"] != "client_credentials") {
    return Refuse(400, "unsupported_grant_type", "AADSTS70003: grant_type");
  }
  if (form["client_id"] != options_.client_id) {
    return Refuse(400, "unauthorized_client", "AADSTS700016: application not found");
  }
  if (form["scope"] != "https://storage.azure.com/.default") {
    return Refuse(400, "invalid_scope", "AADSTS70011: the scope is not valid");
  }
  std::string kind;
  if (form.count("client_secret")) {
    if (options_.client_secret.empty() || form["client_secret"] != options_.client_secret) {
      return Refuse(401, "invalid_client", "AADSTS7000215: Invalid client secret provided.");
    }
    kind = "secret";
  } else if (form["client_assertion_type"] ==
             "urn:ietf:params:oauth:client-assertion-type:jwt-bearer") {
    const std::string& assertion = form["client_assertion"];
    if (!options_.federated_token.empty() && assertion == options_.federated_token) {
      kind = "federated";
    } else if (!options_.cert_pem.empty()) {
      JsonValue header, claims;
      std::string bad = VerifyJwt(assertion, options_.cert_pem, &header, &claims);
      const int64_t now = static_cast<int64_t>(std::time(nullptr));
      const std::string aud = url() + path;
      if (bad.empty() && (JsonStringMember(header, "alg") != "RS256" ||
                          JsonStringMember(header, "x5t") !=
                              MakeX5t())) {
        bad = "wrong alg or x5t";
      }
      if (bad.empty() && (JsonStringMember(claims, "aud") != aud ||
                          JsonStringMember(claims, "iss") != options_.client_id ||
                          JsonStringMember(claims, "sub") != options_.client_id)) {
        bad = "wrong aud, iss or sub";
      }
      if (bad.empty() && (IntClaim(claims, "exp") <= now || IntClaim(claims, "nbf") > now + 300)) {
        bad = "expired or not yet valid";
      }
      if (bad.empty()) {
        std::lock_guard<std::mutex> lock(mu_);
        if (!jtis_.insert(JsonStringMember(claims, "jti")).second) bad = "jti replayed";
      }
      if (!bad.empty()) {
        return Refuse(401, "invalid_client", "AADSTS700027: client assertion: " + bad);
      }
      kind = "certificate";
    } else {
      return Refuse(401, "invalid_client", "AADSTS700213: no matching federated identity");
    }
  } else {
    return Refuse(401, "invalid_client", "AADSTS7000216: client_assertion or client_secret required");
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    last_kind_ = kind;
  }
  int n = ++answers_;
  const std::string token = TokenNumber(n);
  if (options_.on_issue) {
    options_.on_issue(token, static_cast<int64_t>(std::time(nullptr)) + options_.lifetime_s);
  }
  return Json(200, "{\"token_type\": \"Bearer\", \"expires_in\": " +
                       std::to_string(options_.lifetime_s) + ", \"ext_expires_in\": " +
                       std::to_string(options_.lifetime_s) + ", \"access_token\": \"" +
                       token + "\"}");
}

std::string FakeEntraId::MakeX5t() const {
  BIO* bio = BIO_new_mem_buf(options_.cert_pem.data(), static_cast<int>(options_.cert_pem.size()));
  X509* x509 = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  if (x509 == nullptr) return "";
  unsigned char sha1[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  X509_digest(x509, EVP_sha1(), sha1, &len);
  X509_free(x509);
  return Base64UrlEncode(std::string_view(reinterpret_cast<const char*>(sha1), len));
}

FakeManagedIdentity::FakeManagedIdentity(ManagedIdentityKind kind, std::string secret,
                                         std::string client_id, int64_t lifetime_s)
    : kind_(kind), secret_(std::move(secret)), client_id_(std::move(client_id)),
      lifetime_s_(lifetime_s) {
  server_ = std::make_unique<FakeHttpServer>([this](const FakeRequest& r) { return Handle(r); });
}

std::string FakeManagedIdentity::endpoint() const {
  return kind_ == ManagedIdentityKind::kImds ? url() : url() + "/msi/token";
}

FakeResponse FakeManagedIdentity::Handle(const FakeRequest& req) {
  auto refuse = [&](int status, const std::string& why) {
    ++refused_;
    return Json(status, "{\"error\": \"invalid_request\", \"error_description\": \"" + why + "\"}");
  };
  const std::string& t = req.target;
  const int64_t now = static_cast<int64_t>(std::time(nullptr));
  const int n = answers_ + 1;
  const std::string token = "\"access_token\": \"mi-token-" + std::to_string(n) + "\"";
  std::string id_param;
  std::string body;
  switch (kind_) {
    case ManagedIdentityKind::kImds:
      if (req.method != "GET" || Path(t) != "/metadata/identity/oauth2/token") {
        return refuse(404, "no such path");
      }
      if (req.Header("metadata") != "true") return refuse(400, "Required metadata header not specified");
      if (Param(t, "api-version") != "2018-02-01") return refuse(400, "api-version");
      id_param = Param(t, "client_id");
      body = "{" + token + ", \"expires_in\": \"" + std::to_string(lifetime_s_) +
             "\", \"expires_on\": \"" + std::to_string(now + lifetime_s_) +
             "\", \"resource\": \"https://storage.azure.com\", \"token_type\": \"Bearer\"}";
      break;
    case ManagedIdentityKind::kAppService:
      if (req.method != "GET" || Path(t) != "/msi/token") return refuse(404, "no such path");
      if (req.Header("x-identity-header") != secret_) return refuse(401, "X-IDENTITY-HEADER");
      if (Param(t, "api-version") != "2019-08-01") return refuse(400, "api-version");
      id_param = Param(t, "client_id");
      body = "{" + token + ", \"expires_on\": \"" + std::to_string(now + lifetime_s_) +
             "\", \"resource\": \"https://storage.azure.com\", \"token_type\": \"Bearer\"}";
      break;
    case ManagedIdentityKind::kAzureMl:
      if (req.method != "GET" || Path(t) != "/msi/token") return refuse(404, "no such path");
      if (req.Header("secret") != secret_) return refuse(401, "secret");
      if (Param(t, "api-version") != "2017-09-01") return refuse(400, "api-version");
      id_param = Param(t, "clientid");
      body = "{" + token + ", \"expires_on\": " + std::to_string(now + lifetime_s_) +
             ", \"resource\": \"https://storage.azure.com\", \"token_type\": \"Bearer\"}";
      break;
  }
  if (Param(t, "resource") != "https://storage.azure.com") return refuse(400, "resource");
  if (id_param != client_id_) {
    return refuse(400, "Identity not found");
  }
  ++answers_;
  return Json(200, body);
}

FakeBearerBlob::FakeBearerBlob(std::string account, std::map<std::string, std::string> blobs)
    : account_(std::move(account)), blobs_(std::move(blobs)) {
  server_ = std::make_unique<FakeHttpServer>([this](const FakeRequest& r) { return Handle(r); });
}

void FakeBearerBlob::Accept(const std::string& token, int64_t expires_at) {
  std::lock_guard<std::mutex> lock(mu_);
  tokens_[token] = expires_at;
}

int FakeBearerBlob::distinct_tokens() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(used_.size());
}

FakeResponse FakeBearerBlob::Handle(const FakeRequest& req) {
  auto error = [&](int status, const std::string& code) {
    ++refused_;
    FakeResponse r;
    r.status = status;
    r.headers.emplace_back("Content-Type", "application/xml");
    r.body = "<?xml version=\"1.0\" encoding=\"utf-8\"?><Error><Code>" + code +
             "</Code><Message>" + code + "</Message></Error>";
    return r;
  };
  const std::string auth = req.Header("authorization");
  if (auth.rfind("Bearer ", 0) != 0) return error(401, "NoAuthenticationInformation");
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = tokens_.find(auth.substr(7));
    if (it == tokens_.end() || static_cast<int64_t>(std::time(nullptr)) >= it->second) {
      return error(401, "InvalidAuthenticationInfo");
    }
    used_.insert(it->first);
  }
  // Bearer tokens need 2017-11-09 or later.
  if (req.Header("x-ms-version") < "2017-11-09") return error(400, "InvalidHeaderValue");
  const std::string prefix = "/" + account_ + "/";
  std::string path = Path(req.target);
  if (path.rfind(prefix, 0) != 0) return error(404, "ResourceNotFound");
  auto blob = StrictPercentDecode(path.substr(prefix.size()));
  auto it = blob.ok() ? blobs_.find(*blob) : blobs_.end();
  if (it == blobs_.end()) return error(404, "BlobNotFound");
  const std::string& bytes = it->second;
  FakeResponse r;
  r.headers.emplace_back("Content-Type", "application/octet-stream");
  uint64_t first = 0, last = bytes.empty() ? 0 : bytes.size() - 1;
  std::string range = req.Header("range");
  if (range.empty()) range = req.Header("x-ms-range");
  if (!range.empty() && range.rfind("bytes=", 0) == 0) {
    size_t dash = range.find('-');
    first = std::stoull(range.substr(6, dash - 6));
    if (dash + 1 < range.size()) last = std::min<uint64_t>(last, std::stoull(range.substr(dash + 1)));
    if (first >= bytes.size()) return error(416, "InvalidRange");
    r.status = 206;
    r.headers.emplace_back("Content-Range", "bytes " + std::to_string(first) + "-" +
                                                std::to_string(last) + "/" +
                                                std::to_string(bytes.size()));
  }
  ++served_;
  if (req.method == "HEAD") {
    r.headers.emplace_back("Content-Length", std::to_string(bytes.size()));
    return r;
  }
  r.body = bytes.substr(first, last - first + 1);
  return r;
}

}  // namespace sluice::testing
