#include "stores/credentials/gcs_service_account.h"

#include <algorithm>

#include "stores/http/url.h"

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

// A service account's JWT grant, as google-auth signs it: the key's id as
// "kid"; the email as issuer; Google's token endpoint as audience whatever
// token_uri says (checked by tests/sdk_oracle/gcs_oracle.py); valid an hour;
// `claim` ("scope" for an access token, "target_audience" for an ID token).
Result<std::string> SignServiceAccountGrant(const ServiceAccountKey& key, std::string_view claim,
                                            std::string_view value, int64_t now) {
  std::string header = "{\"alg\":\"RS256\",\"typ\":\"JWT\"";
  if (!key.private_key_id.empty()) {
    SLUICE_ASSIGN_OR_RETURN(std::string kid, JsonString(key.private_key_id));
    header += ",\"kid\":" + kid;
  }
  header += "}";
  SLUICE_ASSIGN_OR_RETURN(std::string iss, JsonString(key.client_email));
  SLUICE_ASSIGN_OR_RETURN(std::string name, JsonString(claim));
  SLUICE_ASSIGN_OR_RETURN(std::string v, JsonString(value));
  SLUICE_ASSIGN_OR_RETURN(std::string aud, JsonString(kGoogleOAuth2TokenUri));
  std::string claims = "{\"iss\":" + iss + "," + name + ":" + v + ",\"aud\":" + aud +
                       ",\"iat\":" + std::to_string(now) + ",\"exp\":" + std::to_string(now + 3600) + "}";
  return SignJwtRs256(header, claims, key.private_key_pem,
                      "service-account key file " + (key.path.empty() ? key.client_email : key.path));
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
  return SignServiceAccountGrant(key, "scope", scope, now);
}

Result<Credential> FetchServiceAccountIdToken(const ServiceAccountKey& key, std::string_view target_audience,
                                              int64_t now) {
  SLUICE_ASSIGN_OR_RETURN(std::string jwt, SignServiceAccountGrant(key, "target_audience", target_audience, now));
  SLUICE_ASSIGN_OR_RETURN(
      HttpResponse resp,
      PostToGoogle(key.token_uri,
                   FormBody({{"grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"}, {"assertion", jwt}}),
                   "OAuth2 ID token request for service account " + key.client_email));
  const std::string where = "OAuth2 token endpoint " + RedactUrl(key.token_uri);
  auto parsed = ParsePyJson(resp.body);
  Credential out;
  out.bearer = parsed.ok() ? JsonStringMember(*parsed, "id_token") : "";
  if (out.bearer.empty()) return PermissionDeniedError(where + " answered no id_token");
  // google-auth takes the expiry from the token's own claim.
  auto claims_text = JwtClaimsText(out.bearer);
  auto claims = claims_text ? ParsePyJson(*claims_text) : Result<JsonValue>(InvalidArgumentError("not a JWT"));
  const JsonValue* exp = claims.ok() ? JsonMember(*claims, "exp") : nullptr;
  const int64_t* at = exp != nullptr ? std::get_if<int64_t>(&exp->v) : nullptr;
  if (at == nullptr) return PermissionDeniedError(where + " answered an id_token without an exp claim");
  out.expires_at = std::clamp<int64_t>(*at, now, now + int64_t{366} * 24 * 3600);
  out.source = "service account " + key.client_email + " (ID token)";
  return out;
}

std::unique_ptr<CredentialSource> MakeGcsServiceAccountSource(ServiceAccountKey key,
                                                              std::string_view scope) {
  return std::make_unique<ServiceAccountSource>(std::move(key), std::string(scope));
}

}  // namespace sluice
