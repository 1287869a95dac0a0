#include "stores/credentials/oci_resource_principal.h"

#include <cctype>
#include <ctime>

#include "base/file.h"
#include "formats/json/py_json.h"
#include "stores/common/store_keys.h"
#include "stores/signing/jwt_rs256.h"

namespace sluice {
namespace {

// Tokens are JWTs of a few kilobytes; keys a few too.
constexpr uint64_t kMaxRpFile = uint64_t{1} << 16;

bool IsAbsolutePath(const std::string& v) { return !v.empty() && v.front() == '/'; }

std::string Trimmed(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t lead = 0;
  while (lead < s.size() && std::isspace(static_cast<unsigned char>(s[lead]))) ++lead;
  return s.substr(lead);
}

// `value` itself, or when it is an absolute path, that file's content.
// `variable` names it in errors (never the value: it may be the secret).
Result<std::string> InlineOrFile(const std::string& value, const char* variable, bool trim) {
  if (!IsAbsolutePath(value)) return value;
  auto text = ReadFile(value, kMaxRpFile);
  if (!text.ok()) {
    return PermissionDeniedError(std::string("cannot read ") + variable + "'s file " + value +
                                 ": " + text.status().message());
  }
  std::string out = trim ? Trimmed(std::move(*text)) : std::move(*text);
  if (Trimmed(out).empty()) {
    return PermissionDeniedError(std::string(variable) + "'s file " + value + " is empty");
  }
  return out;
}

}  // namespace

std::optional<int64_t> OciJwtExpiry(std::string_view token) {
  const std::optional<std::string> json = JwtClaimsText(token);
  if (!json) return std::nullopt;
  auto claims = ParsePyJson(*json);
  const JsonValue* exp = claims.ok() ? JsonMember(*claims, "exp") : nullptr;
  const auto* seconds = exp ? std::get_if<int64_t>(&exp->v) : nullptr;
  if (seconds == nullptr) return std::nullopt;
  return *seconds;
}

bool OciResourcePrincipalConfigured() {
  return GetEnv("OCI_RESOURCE_PRINCIPAL_VERSION").has_value();
}

Result<OciResourcePrincipal> LoadOciResourcePrincipal() {
  auto version = GetEnv("OCI_RESOURCE_PRINCIPAL_VERSION");
  if (!version) return NotFoundError("OCI_RESOURCE_PRINCIPAL_VERSION is not set");
  if (*version != "2.2") {
    return InvalidArgumentError("OCI_RESOURCE_PRINCIPAL_VERSION=" + *version +
                                " is not supported (2.2 is)");
  }
  OciResourcePrincipal out;
  out.rpst = GetEnv("OCI_RESOURCE_PRINCIPAL_RPST").value_or("");
  out.private_pem = GetEnv("OCI_RESOURCE_PRINCIPAL_PRIVATE_PEM").value_or("");
  out.passphrase = GetEnv("OCI_RESOURCE_PRINCIPAL_PRIVATE_PEM_PASSPHRASE").value_or("");
  out.region = GetEnv("OCI_RESOURCE_PRINCIPAL_REGION").value_or("");
  std::string missing;
  for (auto [name, value] : {std::pair<const char*, const std::string*>{"OCI_RESOURCE_PRINCIPAL_RPST", &out.rpst},
                             {"OCI_RESOURCE_PRINCIPAL_PRIVATE_PEM", &out.private_pem},
                             {"OCI_RESOURCE_PRINCIPAL_REGION", &out.region}}) {
    if (value->empty()) missing += (missing.empty() ? "" : ", ") + std::string(name);
  }
  if (!missing.empty()) {
    return InvalidArgumentError("OCI_RESOURCE_PRINCIPAL_VERSION=2.2 but " + missing +
                                (missing.find(',') == std::string::npos ? " is" : " are") +
                                " not set");
  }
  SLUICE_RETURN_IF_ERROR(OciResourcePrincipalKey(out).status());  // said now, not at the first request
  return out;
}

Result<OciApiKey> OciResourcePrincipalKey(const OciResourcePrincipal& rp) {
  SLUICE_ASSIGN_OR_RETURN(std::string token,
                          InlineOrFile(rp.rpst, "OCI_RESOURCE_PRINCIPAL_RPST", true));
  token = Trimmed(std::move(token));
  if (auto exp = OciJwtExpiry(token); exp && *exp <= static_cast<int64_t>(std::time(nullptr))) {
    return PermissionDeniedError(
        "the resource principal session token (OCI_RESOURCE_PRINCIPAL_RPST" +
        std::string(IsAbsolutePath(rp.rpst) ? ", file " + rp.rpst : "") + ") expired at " +
        OciHttpDate(*exp));
  }
  OciApiKey key;
  key.key_id = "ST$" + token;
  SLUICE_ASSIGN_OR_RETURN(key.private_key_pem,
                          InlineOrFile(rp.private_pem, "OCI_RESOURCE_PRINCIPAL_PRIVATE_PEM", false));
  if (IsAbsolutePath(rp.private_pem) && !rp.passphrase.empty()) {
    SLUICE_ASSIGN_OR_RETURN(
        key.passphrase,
        InlineOrFile(rp.passphrase, "OCI_RESOURCE_PRINCIPAL_PRIVATE_PEM_PASSPHRASE", true));
  } else {
    key.passphrase = rp.passphrase;
  }
  key.what = IsAbsolutePath(rp.private_pem) ? "the resource principal key " + rp.private_pem
                                            : "the resource principal key OCI_RESOURCE_PRINCIPAL_PRIVATE_PEM";
  return key;
}

std::string DescribeOciResourcePrincipal(const OciResourcePrincipal& rp) {
  auto from = [](const std::string& v) {
    return IsAbsolutePath(v) ? "file " + v : std::string("the environment");
  };
  return "resource principal (OCI_RESOURCE_PRINCIPAL_VERSION 2.2, RPST from " + from(rp.rpst) +
         ", private key from " + from(rp.private_pem) + ", region " + rp.region +
         ", request signatures)";
}

}  // namespace sluice
