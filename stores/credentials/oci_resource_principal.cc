#include "stores/credentials/oci_resource_principal.h"

#include <cctype>
#include <ctime>

#include "base/file.h"
#include "stores/common/store_keys.h"
#include "stores/credentials/jwt_expiry.h"
#include "stores/credentials/oci_regions.h"

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

bool OciResourcePrincipalConfigured() {
  return GetEnv("OCI_RESOURCE_PRINCIPAL_VERSION").has_value();
}

Result<OciResourcePrincipal> LoadOciResourcePrincipal() {
  auto version = GetEnv("OCI_RESOURCE_PRINCIPAL_VERSION");
  if (!version) return NotFoundError("OCI_RESOURCE_PRINCIPAL_VERSION is not set");
  if (*version != "2.2") {
    return InvalidArgumentError("OCI_RESOURCE_PRINCIPAL_VERSION=" + *version +
                                " is not supported (1.1, 2.1, 2.1.1, 2.1.2, 2.2 and 3.0 are)");
  }
  return LoadOciResourcePrincipalV22("");
}

Result<OciResourcePrincipal> LoadOciResourcePrincipalV22(const std::string& suffix) {
  auto env = [&](const char* name) { return GetEnv((name + suffix).c_str()).value_or(""); };
  OciResourcePrincipal out;
  out.suffix = suffix;
  out.rpst = env("OCI_RESOURCE_PRINCIPAL_RPST");
  out.private_pem = env("OCI_RESOURCE_PRINCIPAL_PRIVATE_PEM");
  out.passphrase = env("OCI_RESOURCE_PRINCIPAL_PRIVATE_PEM_PASSPHRASE");
  out.region = env("OCI_RESOURCE_PRINCIPAL_REGION");
  std::string missing;
  for (auto [name, value] : {std::pair<const char*, const std::string*>{"OCI_RESOURCE_PRINCIPAL_RPST", &out.rpst},
                             {"OCI_RESOURCE_PRINCIPAL_PRIVATE_PEM", &out.private_pem},
                             {"OCI_RESOURCE_PRINCIPAL_REGION", &out.region}}) {
    if (value->empty()) missing += (missing.empty() ? "" : ", ") + std::string(name) + suffix;
  }
  if (!missing.empty()) {
    return InvalidArgumentError(
        (suffix.empty() ? std::string("OCI_RESOURCE_PRINCIPAL_VERSION=2.2")
                        : "OCI_RESOURCE_PRINCIPAL_VERSION" + suffix + "=2.2") +
        " but " + missing + (missing.find(',') == std::string::npos ? " is" : " are") + " not set");
  }
  SLUICE_ASSIGN_OR_RETURN(out.region,
                          CanonicalOciRegion(out.region, "OCI_RESOURCE_PRINCIPAL_REGION" + suffix));
  SLUICE_RETURN_IF_ERROR(OciResourcePrincipalKey(out).status());  // said now, not at the first request
  return out;
}

Result<OciApiKey> OciResourcePrincipalKey(const OciResourcePrincipal& rp) {
  SLUICE_ASSIGN_OR_RETURN(std::string token,
                          InlineOrFile(rp.rpst, ("OCI_RESOURCE_PRINCIPAL_RPST" + rp.suffix).c_str(), true));
  token = Trimmed(std::move(token));
  if (auto exp = JwtExpiry(token); exp && *exp <= static_cast<int64_t>(std::time(nullptr))) {
    return PermissionDeniedError(
        "the resource principal session token (OCI_RESOURCE_PRINCIPAL_RPST" + rp.suffix +
        std::string(IsAbsolutePath(rp.rpst) ? ", file " + rp.rpst : "") + ") expired at " +
        OciHttpDate(*exp));
  }
  SLUICE_ASSIGN_OR_RETURN(OciApiKey key, OciResourcePrincipalOwnKey(rp.private_pem, rp.passphrase, rp.suffix));
  key.key_id = "ST$" + token;
  return key;
}

Result<OciApiKey> OciResourcePrincipalOwnKey(const std::string& private_pem,
                                             const std::string& passphrase,
                                             const std::string& suffix) {
  OciApiKey key;
  SLUICE_ASSIGN_OR_RETURN(key.private_key_pem,
                          InlineOrFile(private_pem, ("OCI_RESOURCE_PRINCIPAL_PRIVATE_PEM" + suffix).c_str(), false));
  if (IsAbsolutePath(private_pem) && !passphrase.empty()) {
    SLUICE_ASSIGN_OR_RETURN(
        key.passphrase,
        InlineOrFile(passphrase, ("OCI_RESOURCE_PRINCIPAL_PRIVATE_PEM_PASSPHRASE" + suffix).c_str(), true));
  } else {
    key.passphrase = passphrase;
  }
  key.what = IsAbsolutePath(private_pem) ? "the resource principal key " + private_pem
                                         : "the resource principal key OCI_RESOURCE_PRINCIPAL_PRIVATE_PEM" + suffix;
  return key;
}

std::string DescribeOciResourcePrincipal(const OciResourcePrincipal& rp) {
  auto from = [](const std::string& v) {
    return IsAbsolutePath(v) ? "file " + v : std::string("the environment");
  };
  return "resource principal (OCI_RESOURCE_PRINCIPAL_VERSION" + rp.suffix + " 2.2, RPST from " + from(rp.rpst) +
         ", private key from " + from(rp.private_pem) + ", region " + rp.region +
         ", request signatures)";
}

}  // namespace sluice
