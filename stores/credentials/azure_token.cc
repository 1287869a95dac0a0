#include "stores/credentials/azure_token.h"

#include <algorithm>

#include "base/iso8601.h"
#include "formats/json/py_json.h"
#include "stores/common/store_keys.h"
#include "stores/credentials/blocking_http.h"
#include "stores/http/url.h"
#include "stores/signing/uri_encoding.h"

namespace sluice {
namespace {

// azure-identity waits about this long for Entra ID.
constexpr int64_t kEntraTimeoutMs = 10000;
constexpr int64_t kMaxLifetimeS = int64_t{366} * 24 * 3600;

// A JSON number or a string of digits (at most 18, so no overflow).
std::optional<int64_t> IntegerMember(const JsonValue& v, std::string_view key) {
  const JsonValue* m = JsonMember(v, key);
  if (m == nullptr) return std::nullopt;
  if (const auto* i = std::get_if<int64_t>(&m->v)) return *i;
  if (const auto* s = std::get_if<std::string>(&m->v)) {
    if (s->empty() || s->size() > 18 ||
        s->find_first_not_of("0123456789") != std::string::npos) {
      return std::nullopt;
    }
    return std::stoll(*s);
  }
  return std::nullopt;
}

}  // namespace

std::string AzureAuthorityHost() {
  std::string host = GetEnv("AZURE_AUTHORITY_HOST").value_or("https://login.microsoftonline.com");
  if (host.find("://") == std::string::npos) host = "https://" + host;
  while (!host.empty() && host.back() == '/') host.pop_back();
  return host;
}

Result<std::string> EntraTokenEndpoint(std::string_view authority, std::string_view tenant) {
  if (tenant.empty() || tenant.size() > 256 ||
      tenant.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-.") !=
          std::string_view::npos) {
    return InvalidArgumentError(
        "AZURE_TENANT_ID must be a tenant id or domain (letters, digits, '-', '.')");
  }
  return std::string(authority) + "/" + std::string(tenant) + "/oauth2/v2.0/token";
}

Result<Credential> ParseAzureTokenResponse(std::string_view body, int64_t now,
                                           std::string_view where) {
  auto parsed = ParsePyJson(body);
  if (!parsed.ok()) return PermissionDeniedError(std::string(where) + " answered with no JSON");
  Credential c;
  c.bearer = JsonStringMember(*parsed, "access_token");
  if (c.bearer.empty()) {
    return PermissionDeniedError(std::string(where) + " answered without an access_token");
  }
  if (auto in = IntegerMember(*parsed, "expires_in")) {
    c.expires_at = now + std::clamp<int64_t>(*in, 0, kMaxLifetimeS);
  } else if (auto on = IntegerMember(*parsed, "expires_on")) {
    c.expires_at = std::clamp<int64_t>(*on, now, now + kMaxLifetimeS);
  } else {
    c.expires_at = now + 3600;
  }
  return c;
}

Result<Credential> ParseAzureCliToken(std::string_view output, int64_t now,
                                      std::string_view where) {
  auto parsed = ParsePyJson(output);
  if (!parsed.ok() || !std::holds_alternative<JsonValue::Object>(parsed->v)) {
    return PermissionDeniedError(std::string(where) + " printed no JSON object");
  }
  Credential c;
  c.bearer = JsonStringMember(*parsed, "accessToken");
  if (c.bearer.empty()) return PermissionDeniedError(std::string(where) + " printed no accessToken");
  std::optional<int64_t> at = IntegerMember(*parsed, "expires_on");
  if (!at) {
    // A naive local time, as the CLI's older versions print it.
    auto local = ParseIso8601(JsonStringMember(*parsed, "expiresOn"), {.local_when_bare = true});
    if (local.ok()) at = *local;
  }
  if (!at) {
    return PermissionDeniedError(std::string(where) +
                                 " printed neither expires_on nor a readable expiresOn");
  }
  c.expires_at = std::clamp<int64_t>(*at, now, now + kMaxLifetimeS);
  return c;
}

Result<Credential> ParseAzureDeveloperCliToken(std::string_view output, int64_t now,
                                               std::string_view where) {
  auto parsed = ParsePyJson(output);
  if (!parsed.ok() || !std::holds_alternative<JsonValue::Object>(parsed->v)) {
    return PermissionDeniedError(std::string(where) + " printed no JSON object");
  }
  Credential c;
  c.bearer = JsonStringMember(*parsed, "token");
  if (c.bearer.empty()) return PermissionDeniedError(std::string(where) + " printed no token");
  auto at = ParseIso8601(JsonStringMember(*parsed, "expiresOn"));
  if (!at.ok()) return PermissionDeniedError(std::string(where) + " printed no readable expiresOn");
  c.expires_at = std::clamp<int64_t>(*at, now, now + kMaxLifetimeS);
  return c;
}

Result<Credential> ParseAzurePowerShellToken(std::string_view output, int64_t now,
                                             std::string_view where) {
  constexpr std::string_view kSpace = " \t\n\r\v\f";
  constexpr std::string_view kPrefix = "azsdk%";
  size_t begin = output.find_first_not_of(kSpace);
  while (begin != std::string_view::npos) {
    size_t end = std::min(output.find_first_of(kSpace, begin), output.size());
    std::string_view word = output.substr(begin, end - begin);
    begin = output.find_first_not_of(kSpace, end);
    if (!word.starts_with(kPrefix)) continue;
    word.remove_prefix(kPrefix.size());
    const size_t split = word.find('%');
    const std::string_view token = word.substr(0, split);
    const std::string_view expiry =
        split == std::string_view::npos ? std::string_view() : word.substr(split + 1);
    // At most 18 digits: no overflow, and no real expiry is longer.
    const bool digits = !expiry.empty() && expiry.size() <= 18 &&
                        expiry.find_first_not_of("0123456789") == std::string_view::npos;
    if (token.empty() || !digits) {
      return PermissionDeniedError(std::string(where) +
                                   " printed a malformed 'azsdk%<token>%<expiry>' line");
    }
    Credential c;
    c.bearer = std::string(token);
    c.expires_at = std::clamp<int64_t>(std::stoll(std::string(expiry)), now, now + kMaxLifetimeS);
    return c;
  }
  return NotFoundError(std::string(where) + " printed no 'azsdk%<token>%<expiry>' line");
}

std::string AzureTokenErrorDetail(std::string_view body) {
  auto parsed = ParsePyJson(body);
  if (!parsed.ok() || !std::holds_alternative<JsonValue::Object>(parsed->v)) return "";
  std::string error = JsonStringMember(*parsed, "error");
  std::string description = JsonStringMember(*parsed, "error_description");
  if (description.empty()) {
    // IMDS and App Service nest it: {"error": {"code", "message"}} or "message".
    description = JsonStringMember(*parsed, "message");
  }
  description = description.substr(0, std::min(description.find_first_of("\r\n"), size_t{300}));
  if (error.empty()) return description;
  return description.empty() ? error : error + ": " + description;
}

Result<Credential> RequestEntraToken(const std::string& endpoint,
                                     const std::vector<std::pair<std::string, std::string>>& form,
                                     int64_t now, std::string_view what) {
  HttpRequest req;
  req.method = HttpMethod::kPost;
  req.url = endpoint;
  req.headers.emplace_back("content-type", "application/x-www-form-urlencoded");
  req.headers.emplace_back("accept", "application/json");
  for (const auto& [name, value] : form) {
    if (!req.body.empty()) req.body += "&";
    req.body += UriEncode(name) + "=" + UriEncode(value);
  }
  HttpClientOptions options = CredentialEndpointOptions(kEntraTimeoutMs);
  options.error_detail = [](std::string_view body) { return AzureTokenErrorDetail(body); };
  const std::string where = RedactUrl(endpoint);
  auto resp = SendBlocking(std::move(req), std::move(options));
  if (!resp.ok()) {
    StatusCode code =
        IsNotFound(resp.status()) ? StatusCode::kPermissionDenied : resp.status().code();
    return Status(code, std::string(what) + ": token request to " + where +
                            " failed: " + resp.status().message());
  }
  return ParseAzureTokenResponse(resp->body, now, "Entra ID token endpoint " + where);
}

}  // namespace sluice
