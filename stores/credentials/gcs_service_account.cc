#include "stores/credentials/gcs_service_account.h"

#include "formats/json/py_json.h"
#include "stores/credentials/blocking_http.h"
#include "stores/credentials/gcs_access_token.h"
#include "stores/signing/jwt_rs256.h"
#include "stores/signing/uri_encoding.h"

namespace sluice {
namespace {

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
  return SignJwtRs256(header, claims, key.private_key_pem,
                      "service-account key file " + (key.path.empty() ? key.client_email : key.path));
}

std::unique_ptr<CredentialSource> MakeGcsServiceAccountSource(ServiceAccountKey key,
                                                              std::string_view scope) {
  return std::make_unique<ServiceAccountSource>(std::move(key), std::string(scope));
}

}  // namespace sluice
