#include "stores/credentials/aws_credential_documents.h"

#include <algorithm>
#include <string>

#include "base/iso8601.h"
#include "formats/json/py_json.h"
#include "stores/common/xml_lite.h"

namespace sluice {
namespace {

// Whether an endpoint's Code may be quoted in an error. The service's codes
// are words ("AssumeRoleUnauthorizedAccess"); anything else is not quoted,
// as no other value of the document is, and neither is a word that could
// carry another of its values (a secret): one written literally once in the
// body, none of whose 8-letter pieces occurs anywhere else in it.
bool QuotableCode(const std::string& code, std::string_view body) {
  if (code.empty() || code.size() > 64 ||
      !std::all_of(code.begin(), code.end(),
                   [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); })) {
    return false;
  }
  const size_t at = body.find(code);
  if (at == std::string_view::npos || body.find(code, at + 1) != std::string_view::npos) {
    return false;
  }
  std::string rest(body);
  rest.replace(at, code.size(), code.size(), '\0');
  constexpr size_t kPiece = 8;
  for (size_t i = 0; i + kPiece <= code.size(); ++i) {
    if (rest.find(code.substr(i, kPiece)) != std::string::npos) return false;
  }
  return true;
}

}  // namespace

Result<Credential> ParseAwsCredentialJson(std::string_view body, AwsCredentialJson kind,
                                          std::string_view source) {
  const std::string where(source);
  auto parsed = ParsePyJson(body);
  const auto* object = parsed.ok() ? std::get_if<JsonValue::Object>(&parsed->v) : nullptr;
  if (object == nullptr)
    return PermissionDeniedError(where + " answered something that is not a JSON object");
  Credential out;
  out.source = where;
  std::string expiration, code;
  std::optional<int64_t> version;
  const std::string token_field = kind == AwsCredentialJson::kProcess ? "SessionToken" : "Token";
  for (const auto& [name, value] : *object) {
    const auto* s = std::get_if<std::string>(&value.v);
    if (name == "Version") {
      if (const auto* i = std::get_if<int64_t>(&value.v)) version = *i;
    } else if (s == nullptr) {
      continue;
    } else if (name == "AccessKeyId") {
      out.keys.access_key_id = *s;
    } else if (name == "SecretAccessKey") {
      out.keys.secret_access_key = *s;
    } else if (name == token_field) {
      out.keys.session_token = *s;
    } else if (name == "Expiration") {
      expiration = *s;
    } else if (name == "Code") {
      code = *s;
    }
  }
  if (kind == AwsCredentialJson::kProcess && version != 1) {
    return PermissionDeniedError(where + " answered JSON without \"Version\": 1");
  }
  if (!code.empty() && code != "Success") {
    return PermissionDeniedError(where + " answered Code " +
                                 (QuotableCode(code, body)
                                      ? "'" + code + "'"
                                      : "of " + std::to_string(code.size()) + " characters"));
  }
  if (out.keys.access_key_id.empty() || out.keys.secret_access_key.empty()) {
    return PermissionDeniedError(where + " answered without AccessKeyId and SecretAccessKey");
  }
  if (!expiration.empty()) {
    auto t = ParseIso8601(expiration);
    if (!t.ok()) return PermissionDeniedError(where + ": Expiration is " + t.status().message());
    out.expires_at = *t;
  }
  return out;
}

Result<Credential> ParseStsCredentialsXml(std::string_view body, std::string_view action,
                                          std::string_view source) {
  const std::string where(source);
  std::string_view result = XmlFirst(body, std::string(action) + "Result");
  std::string_view creds = XmlFirst(result, "Credentials");
  Credential out;
  out.source = where;
  auto id = XmlUnescape(XmlFirst(creds, "AccessKeyId"));
  auto secret = XmlUnescape(XmlFirst(creds, "SecretAccessKey"));
  auto token = XmlUnescape(XmlFirst(creds, "SessionToken"));
  if (!id.ok() || !secret.ok() || !token.ok() || id->empty() || secret->empty()) {
    return PermissionDeniedError(where + ": STS answered " + std::string(action) +
                                 " without Credentials (AccessKeyId, SecretAccessKey)");
  }
  out.keys = SigV4Credentials{*id, *secret, *token};
  std::string_view expiration = XmlFirst(creds, "Expiration");
  if (!expiration.empty()) {
    auto t = ParseIso8601(expiration);
    if (!t.ok()) return PermissionDeniedError(where + ": Expiration is " + t.status().message());
    out.expires_at = *t;
  }
  return out;
}

}  // namespace sluice
