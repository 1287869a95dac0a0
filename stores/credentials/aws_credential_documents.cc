#include "stores/credentials/aws_credential_documents.h"

#include <algorithm>
#include <ctime>
#include <string>

#include "formats/json/py_json.h"
#include "stores/common/xml_lite.h"

namespace sluice {
namespace {

bool Digits(std::string_view s, size_t pos, size_t n, int* out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

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

Result<int64_t> ParseIso8601Utc(std::string_view text) {
  // YYYY-MM-DDTHH:MM:SS[.fff][Z|+00:00]
  std::tm tm{};
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  bool ok = Digits(text, 0, 4, &year) && text.size() > 4 && text[4] == '-' &&
            Digits(text, 5, 2, &month) && text.size() > 7 && text[7] == '-' &&
            Digits(text, 8, 2, &day) && text.size() > 10 && (text[10] == 'T' || text[10] == ' ') &&
            Digits(text, 11, 2, &hour) && text.size() > 13 && text[13] == ':' &&
            Digits(text, 14, 2, &minute) && text.size() > 16 && text[16] == ':' &&
            Digits(text, 17, 2, &second);
  if (ok) {
    std::string_view rest = text.substr(19);
    if (!rest.empty() && rest[0] == '.') {
      size_t n = 1;
      while (n < rest.size() && rest[n] >= '0' && rest[n] <= '9') ++n;
      rest.remove_prefix(n);
    }
    ok = rest == "Z" || rest == "+00:00" || rest.empty();
  }
  if (!ok || month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 ||
      second > 60) {
    // Not quoted: callers parse fields of credential documents, whose
    // values never go into error text.
    return InvalidArgumentError("not an ISO 8601 UTC time (" + std::to_string(text.size()) +
                                " characters)");
  }
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  return static_cast<int64_t>(timegm(&tm));
}

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
    auto t = ParseIso8601Utc(expiration);
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
    auto t = ParseIso8601Utc(expiration);
    if (!t.ok()) return PermissionDeniedError(where + ": Expiration is " + t.status().message());
    out.expires_at = *t;
  }
  return out;
}

}  // namespace sluice
