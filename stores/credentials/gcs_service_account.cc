#include "stores/credentials/gcs_service_account.h"

#include <openssl/evp.h>
#include <openssl/pem.h>

#include "formats/json/py_json.h"
#include "stores/credentials/blocking_http.h"
#include "stores/credentials/gcs_access_token.h"
#include "stores/signing/digest.h"
#include "stores/signing/uri_encoding.h"

namespace sluice {
namespace {

std::string Base64Url(std::string_view bytes) {
  std::string b = Base64Encode(bytes);
  while (!b.empty() && b.back() == '=') b.pop_back();
  for (char& c : b) {
    if (c == '+') c = '-';
    if (c == '/') c = '_';
  }
  return b;
}

Result<std::string> SignRs256(const std::string& pem, std::string_view data) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  if (bio == nullptr) return InternalError("out of memory reading the service-account key");
  EVP_PKEY* pkey = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  if (pkey == nullptr) {
    return InvalidArgumentError("the service-account private_key is not a PEM private key");
  }
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  std::string sig;
  size_t len = 0;
  bool ok = ctx != nullptr && EVP_DigestSignInit(ctx, nullptr, EVP_sha256(), nullptr, pkey) == 1 &&
            EVP_DigestSign(ctx, nullptr, &len,
                           reinterpret_cast<const unsigned char*>(data.data()), data.size()) == 1;
  if (ok) {
    sig.resize(len);
    ok = EVP_DigestSign(ctx, reinterpret_cast<unsigned char*>(sig.data()), &len,
                        reinterpret_cast<const unsigned char*>(data.data()), data.size()) == 1;
    sig.resize(len);
  }
  EVP_MD_CTX_free(ctx);
  EVP_PKEY_free(pkey);
  if (!ok) return InvalidArgumentError("cannot sign with the service-account key (not RSA?)");
  return sig;
}

Result<std::string> JsonString(std::string_view s) {
  std::string out;
  SLUICE_RETURN_IF_ERROR(AppendPyJsonString(out, s));
  return out;
}

class ServiceAccountSource final : public CredentialSource {
 public:
  ServiceAccountSource(ServiceAccountKey key, std::string scope)
      : key_(std::move(key)), scope_(std::move(scope)) {}

  std::string name() const override {
    return key_.path.empty() ? "service-account key file"
                             : "service-account key file " + key_.path;
  }

  Result<Credential> Fetch(int64_t now) override {
    SLUICE_ASSIGN_OR_RETURN(std::string jwt, MakeServiceAccountJwt(key_, scope_, now));
    SLUICE_ASSIGN_OR_RETURN(
        HttpResponse resp,
        PostToGoogle(key_.token_uri,
                     FormBody({{"grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"},
                               {"assertion", jwt}}),
                     "OAuth2 token exchange for service account " + key_.client_email));
    SLUICE_ASSIGN_OR_RETURN(
        AccessToken token,
        ParseAccessTokenResponse(resp.body, "OAuth2 token endpoint " + RedactUrl(key_.token_uri)));
    return BearerCredential("service account " + key_.client_email, std::move(token), now);
  }

 private:
  ServiceAccountKey key_;
  std::string scope_;
};

}  // namespace

Result<ServiceAccountKey> ParseServiceAccountKey(std::string_view json, std::string_view path) {
  auto parsed = ParsePyJson(json);
  if (!parsed.ok()) {
    return InvalidArgumentError("service-account key file " + std::string(path) +
                                " is not JSON");
  }
  std::string type = JsonStringMember(*parsed, "type");
  if (type != "service_account") {
    // Google's credential types are short lower-case words; anything else is
    // not quoted, since a mangled file may hold key material in any member.
    const bool plain_word =
        !type.empty() && type.size() <= 40 &&
        type.find_first_not_of("abcdefghijklmnopqrstuvwxyz_") == std::string::npos;
    return InvalidArgumentError("credentials file " + std::string(path) + " has " +
                                (plain_word ? "type '" + type + "'" : std::string("another type")) +
                                ", expected 'service_account'");
  }
  ServiceAccountKey key;
  key.client_email = JsonStringMember(*parsed, "client_email");
  key.private_key_id = JsonStringMember(*parsed, "private_key_id");
  key.private_key_pem = JsonStringMember(*parsed, "private_key");
  key.token_uri = JsonStringMember(*parsed, "token_uri");
  if (key.token_uri.empty()) key.token_uri = std::string(kGoogleOAuth2TokenUri);
  key.path = std::string(path);
  for (auto [name, value] : {std::pair<const char*, const std::string*>{"client_email", &key.client_email},
                             {"private_key", &key.private_key_pem}}) {
    if (value->empty()) {
      return InvalidArgumentError("service-account key file " + std::string(path) +
                                  " has no '" + name + "'");
    }
  }
  return key;
}

Result<std::string> MakeServiceAccountJwt(const ServiceAccountKey& key, std::string_view scope,
                                          int64_t now) {
  std::string header = "{\"alg\":\"RS256\",\"typ\":\"JWT\"";
  if (!key.private_key_id.empty()) {
    SLUICE_ASSIGN_OR_RETURN(std::string kid, JsonString(key.private_key_id));
    header += ",\"kid\":" + kid;
  }
  header += "}";
  SLUICE_ASSIGN_OR_RETURN(std::string iss, JsonString(key.client_email));
  SLUICE_ASSIGN_OR_RETURN(std::string sc, JsonString(scope));
  // The audience is Google's token endpoint whatever token_uri says, as
  // google-auth signs it (checked by tests/sdk_oracle/gcs_oracle.py).
  SLUICE_ASSIGN_OR_RETURN(std::string aud, JsonString(kGoogleOAuth2TokenUri));
  std::string claims = "{\"iss\":" + iss + ",\"scope\":" + sc + ",\"aud\":" + aud +
                       ",\"iat\":" + std::to_string(now) +
                       ",\"exp\":" + std::to_string(now + 3600) + "}";
  std::string signing_input = Base64Url(header) + "." + Base64Url(claims);
  SLUICE_ASSIGN_OR_RETURN(std::string sig, SignRs256(key.private_key_pem, signing_input));
  return signing_input + "." + Base64Url(sig);
}

std::unique_ptr<CredentialSource> MakeGcsServiceAccountSource(ServiceAccountKey key,
                                                              std::string_view scope) {
  return std::make_unique<ServiceAccountSource>(std::move(key), std::string(scope));
}

}  // namespace sluice
