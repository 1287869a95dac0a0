#include "stores/credentials/gcs_token_flows.h"

#include "base/iso8601.h"
#include "stores/credentials/gcs_access_token.h"
#include "stores/credentials/gcs_service_account.h"
#include "stores/http/url.h"

namespace sluice {
namespace {

Result<std::string> Required(const JsonValue& info, std::string_view field,
                             const std::string& path, std::string_view what) {
  std::string v = JsonStringMember(info, field);
  if (v.empty()) {
    return InvalidArgumentError(std::string(what) + " in " + path + " has no '" +
                                std::string(field) + "'");
  }
  return v;
}

Result<std::string> JsonText(std::string_view s) {
  std::string out;
  SLUICE_RETURN_IF_ERROR(AppendPyJsonString(out, s));
  return out;
}

Result<std::string> JsonList(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ", ";
    SLUICE_ASSIGN_OR_RETURN(std::string item, JsonText(items[i]));
    out += item;
  }
  return out + "]";
}

}  // namespace

Result<Credential> FetchAuthorizedUserToken(const JsonValue& info, const std::string& path,
                                            std::string_view scope, int64_t now) {
  constexpr std::string_view kWhat = "authorized_user credentials";
  SLUICE_ASSIGN_OR_RETURN(std::string client_id, Required(info, "client_id", path, kWhat));
  SLUICE_ASSIGN_OR_RETURN(std::string secret, Required(info, "client_secret", path, kWhat));
  SLUICE_ASSIGN_OR_RETURN(std::string refresh, Required(info, "refresh_token", path, kWhat));
  std::string token_uri = JsonStringMember(info, "token_uri");
  if (token_uri.empty()) token_uri = std::string(kGoogleOAuth2TokenUri);
  // The client id is public (it names the OAuth client, e.g. gcloud's).
  const std::string name = "authorized user (client " + client_id + ")";
  SLUICE_ASSIGN_OR_RETURN(
      HttpResponse resp,
      PostToGoogle(token_uri,
                   FormBody({{"grant_type", "refresh_token"},
                             {"client_id", client_id},
                             {"client_secret", secret},
                             {"refresh_token", refresh},
                             {"scope", std::string(scope)}}),
                   "OAuth2 refresh-token grant of " + name + " at " + RedactUrl(token_uri)));
  SLUICE_ASSIGN_OR_RETURN(AccessToken token,
                          ParseAccessTokenResponse(resp.body, "OAuth2 token endpoint " +
                                                                  RedactUrl(token_uri)));
  return BearerCredential(name, std::move(token), now);
}

Result<std::string> ImpersonationTarget(const std::string& url) {
  constexpr std::string_view kSuffix = ":generateAccessToken";
  size_t end = url.find(kSuffix);
  size_t slash = url.rfind('/', end);
  if (end == std::string::npos || slash == std::string::npos || slash + 1 >= end) {
    return InvalidArgumentError("service_account_impersonation_url " + RedactUrl(url) +
                                " does not end in .../serviceAccounts/EMAIL:generateAccessToken");
  }
  return url.substr(slash + 1, end - slash - 1);
}

Result<Credential> GenerateAccessToken(const ImpersonationRequest& request,
                                       const std::string& source_bearer,
                                       const std::string& source_name) {
  SLUICE_ASSIGN_OR_RETURN(std::string target, ImpersonationTarget(request.url));
  SLUICE_ASSIGN_OR_RETURN(std::string delegates, JsonList(request.delegates));
  SLUICE_ASSIGN_OR_RETURN(std::string scopes, JsonList(request.scopes));
  std::string body = "{\"delegates\": " + delegates + ", \"scope\": " + scopes +
                     ", \"lifetime\": \"" + std::to_string(request.lifetime_s) + "s\"}";
  SLUICE_ASSIGN_OR_RETURN(
      HttpResponse resp,
      PostToGoogle(request.url, std::move(body),
                   "IAM generateAccessToken for " + target + " at " + RedactUrl(request.url),
                   {{"authorization", "Bearer " + source_bearer}}, "application/json"));
  auto parsed = ParsePyJson(resp.body);
  std::string token = parsed.ok() ? JsonStringMember(*parsed, "accessToken") : "";
  std::string expire = parsed.ok() ? JsonStringMember(*parsed, "expireTime") : "";
  if (token.empty()) {
    return PermissionDeniedError("IAM generateAccessToken for " + target +
                                 " answered without an accessToken");
  }
  auto expires_at = ParseIso8601(expire);
  if (!expires_at.ok()) {
    return PermissionDeniedError("IAM generateAccessToken for " + target +
                                 " answered an expireTime that is not a time: " +
                                 expires_at.status().message());
  }
  Credential c;
  c.source = source_name + " impersonating " + target;
  c.bearer = std::move(token);
  c.expires_at = *expires_at;
  return c;
}

Result<Credential> FetchImpersonatedServiceAccountToken(const JsonValue& info,
                                                        const std::string& path,
                                                        std::string_view scope, int64_t now) {
  constexpr std::string_view kWhat = "impersonated_service_account credentials";
  ImpersonationRequest request;
  SLUICE_ASSIGN_OR_RETURN(request.url,
                          Required(info, "service_account_impersonation_url", path, kWhat));
  request.scopes.emplace_back(scope);
  if (const JsonValue* delegates = JsonMember(info, "delegates")) {
    if (const auto* list = std::get_if<JsonValue::Array>(&delegates->v)) {
      for (const JsonValue& d : *list) {
        if (const auto* s = std::get_if<std::string>(&d.v)) request.delegates.push_back(*s);
      }
    }
  }
  const JsonValue* source = JsonMember(info, "source_credentials");
  if (source == nullptr || !std::holds_alternative<JsonValue::Object>(source->v)) {
    return InvalidArgumentError(std::string(kWhat) + " in " + path +
                                " has no 'source_credentials' object");
  }
  std::string type = JsonStringMember(*source, "type");
  Result<Credential> from = InvalidArgumentError(
      std::string(kWhat) + " in " + path +
      ": source_credentials must be of type 'authorized_user' or 'service_account'");
  if (type == "authorized_user") {
    // User credentials keep their own scopes (google-auth cannot rescope them).
    from = FetchAuthorizedUserToken(*source, path, "", now);
  } else if (type == "service_account") {
    SLUICE_ASSIGN_OR_RETURN(std::string text, DumpPyJson(*source, false));
    SLUICE_ASSIGN_OR_RETURN(ServiceAccountKey key, ParseServiceAccountKey(text, path));
    from = MakeGcsServiceAccountSource(std::move(key), kGoogleIamScope)->Fetch(now);
  }
  if (!from.ok()) return from.status().WithContext("source_credentials");
  return GenerateAccessToken(request, from->bearer, from->source);
}

}  // namespace sluice
