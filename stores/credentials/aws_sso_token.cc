#include "stores/credentials/aws_sso_token.h"

#include <ctime>
#include <utility>

#include "base/file.h"
#include "base/iso8601.h"
#include "formats/json/py_json.h"
#include "stores/common/store_keys.h"
#include "stores/credentials/blocking_http.h"

namespace sluice {
namespace {

constexpr int64_t kRefreshWindowS = 15 * 60;  // botocore's
constexpr int64_t kOidcTimeoutMs = 10000;
constexpr uint64_t kMaxCacheFile = uint64_t{1} << 20;
// Access tokens live hours; the bound only keeps a hostile answer sane.
constexpr int64_t kMaxExpiresInS = int64_t{90} * 24 * 3600;

std::string Iso8601Utc(int64_t t) {
  std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

struct CachedToken {
  std::string access_token;
  int64_t expires_at = 0;
  std::string client_id, client_secret, registration_expires_at, refresh_token;
};

std::string Login(const SsoTokenSettings& s) {
  return "run 'aws sso login --profile " + s.profile + "'";
}

Result<CachedToken> ReadCache(const SsoTokenSettings& s) {
  auto text = ReadFile(s.cache_path, kMaxCacheFile, s.env);
  if (!text.ok()) return PermissionDeniedError("no SSO token in " + s.cache_path + ": " + Login(s));
  auto parsed = ParsePyJson(*text);
  if (!parsed.ok()) return PermissionDeniedError(s.cache_path + " is not JSON: " + Login(s));
  CachedToken t;
  t.access_token = JsonStringMember(*parsed, "accessToken");
  auto expires = ParseIso8601(JsonStringMember(*parsed, "expiresAt"));
  if (t.access_token.empty() || !expires.ok()) {
    return PermissionDeniedError(s.cache_path + " has no accessToken and expiresAt: " + Login(s));
  }
  t.expires_at = *expires;
  t.client_id = JsonStringMember(*parsed, "clientId");
  t.client_secret = JsonStringMember(*parsed, "clientSecret");
  t.registration_expires_at = JsonStringMember(*parsed, "registrationExpiresAt");
  t.refresh_token = JsonStringMember(*parsed, "refreshToken");
  return t;
}

// SSO-OIDC's error answer {"error": "invalid_grant", ...}: its code only.
std::string OidcErrorDetail(std::string_view body) {
  auto parsed = ParsePyJson(body);
  if (!parsed.ok()) return {};
  std::string code = JsonStringMember(*parsed, "error");
  if (code.size() > 64 || code.find_first_not_of("abcdefghijklmnopqrstuvwxyz_") != std::string::npos)
    return {};
  return code;
}

Status AppendField(std::string& out, std::string_view name, std::string_view value) {
  out += out.size() > 1 ? ", " : "";
  SLUICE_RETURN_IF_ERROR(AppendPyJsonString(out, name));
  out += ": ";
  return AppendPyJsonString(out, value);
}

// Writes `data` readable by its owner only, replacing `path` atomically
// (base/file.h's temporary, which a dead writer's cleanup recognises).
Status WriteSecretFile(const std::string& path, std::string_view data, Env* env) {
  return WriteFileAtomic(path, data, env, kOwnerOnlyFileMode);
}

// CreateToken with the cached registration and refresh token; the new token
// is written back. The error says why, without a secret.
Result<CachedToken> Refresh(const SsoTokenSettings& s, const CachedToken& old, int64_t now) {
  if (old.refresh_token.empty() || old.client_id.empty() || old.client_secret.empty() ||
      old.registration_expires_at.empty()) {
    return PermissionDeniedError(
        "it holds no refreshToken, clientId, clientSecret and registrationExpiresAt to refresh "
        "it with");
  }
  auto registration = ParseIso8601(old.registration_expires_at);
  if (!registration.ok()) return PermissionDeniedError("its registrationExpiresAt is unreadable");
  if (*registration <= now) {
    return PermissionDeniedError("its client registration expired at " +
                                 old.registration_expires_at);
  }
  std::string body = "{";
  SLUICE_RETURN_IF_ERROR(AppendField(body, "clientId", old.client_id));
  SLUICE_RETURN_IF_ERROR(AppendField(body, "clientSecret", old.client_secret));
  SLUICE_RETURN_IF_ERROR(AppendField(body, "grantType", "refresh_token"));
  SLUICE_RETURN_IF_ERROR(AppendField(body, "refreshToken", old.refresh_token));
  body += "}";
  HttpRequest req;
  req.method = HttpMethod::kPost;
  req.url = SsoOidcBase(s.sso_region) + "/token";
  req.headers.emplace_back("content-type", "application/json");
  req.body = std::move(body);
  HttpClientOptions options = CredentialEndpointOptions(kOidcTimeoutMs);
  options.error_detail = OidcErrorDetail;
  auto resp = SendBlocking(std::move(req), std::move(options));
  if (!resp.ok()) {
    return Status(resp.status().code(),
                  "SSO-OIDC CreateToken failed: " + resp.status().message());
  }
  auto answer = ParsePyJson(resp->body);
  CachedToken fresh;
  const JsonValue* expires_in = answer.ok() ? JsonMember(*answer, "expiresIn") : nullptr;
  const int64_t* seconds = expires_in ? std::get_if<int64_t>(&expires_in->v) : nullptr;
  if (answer.ok()) fresh.access_token = JsonStringMember(*answer, "accessToken");
  if (fresh.access_token.empty() || seconds == nullptr || *seconds <= 0 ||
      *seconds > kMaxExpiresInS) {
    return PermissionDeniedError(
        "SSO-OIDC CreateToken answered without accessToken and expiresIn (1.." +
        std::to_string(kMaxExpiresInS) + " s)");
  }
  fresh.expires_at = now + *seconds;
  fresh.client_id = old.client_id;
  fresh.client_secret = old.client_secret;
  fresh.registration_expires_at = old.registration_expires_at;
  fresh.refresh_token = JsonStringMember(*answer, "refreshToken");  // botocore keeps only a new one

  // The fields and order the AWS CLI writes.
  std::string file = "{";
  SLUICE_RETURN_IF_ERROR(AppendField(file, "startUrl", s.start_url));
  SLUICE_RETURN_IF_ERROR(AppendField(file, "region", s.sso_region));
  SLUICE_RETURN_IF_ERROR(AppendField(file, "accessToken", fresh.access_token));
  SLUICE_RETURN_IF_ERROR(AppendField(file, "expiresAt", Iso8601Utc(fresh.expires_at)));
  SLUICE_RETURN_IF_ERROR(AppendField(file, "clientId", fresh.client_id));
  SLUICE_RETURN_IF_ERROR(AppendField(file, "clientSecret", fresh.client_secret));
  SLUICE_RETURN_IF_ERROR(
      AppendField(file, "registrationExpiresAt", fresh.registration_expires_at));
  if (!fresh.refresh_token.empty()) {
    SLUICE_RETURN_IF_ERROR(AppendField(file, "refreshToken", fresh.refresh_token));
  }
  file += "}";
  Status written = WriteSecretFile(s.cache_path, file, s.env);
  // The token is good even when the cache cannot take it; the next refresh
  // then tries again with the old refresh token.
  (void)written;
  return fresh;
}

}  // namespace

std::string SsoOidcBase(const std::string& sso_region) {
  std::string base = "https://oidc." + sso_region + ".amazonaws.com";
  if (auto ep = GetEnv("AWS_ENDPOINT_URL_SSO_OIDC"); ep && !ep->empty()) base = *ep;
  while (!base.empty() && base.back() == '/') base.pop_back();
  return base;
}

Result<std::string> AwsSsoAccessToken(const SsoTokenSettings& s, int64_t now) {
  SLUICE_ASSIGN_OR_RETURN(CachedToken token, ReadCache(s));
  if (s.session_name.empty() || token.expires_at - now >= kRefreshWindowS) {
    if (token.expires_at <= now) {
      return PermissionDeniedError("the SSO token in " + s.cache_path + " has expired: " +
                                   Login(s));
    }
    return token.access_token;
  }
  Result<CachedToken> fresh = Refresh(s, token, now);
  if (fresh.ok()) return fresh->access_token;
  // Another process may have refreshed first (and so rotated the refresh token).
  if (auto again = ReadCache(s); again.ok() && again->access_token != token.access_token &&
                                  again->expires_at > now) {
    return again->access_token;
  }
  if (token.expires_at > now) return token.access_token;
  return PermissionDeniedError("the SSO token in " + s.cache_path +
                               " has expired and could not be refreshed (" +
                               fresh.status().message() + "): " + Login(s));
}

}  // namespace sluice
