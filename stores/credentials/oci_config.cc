#include "stores/credentials/oci_config.h"

#include <cctype>
#include <ctime>
#include <optional>
#include <vector>

#include "base/file.h"
#include "stores/common/store_keys.h"
#include "stores/credentials/aws_settings.h"
#include "formats/json/py_json.h"
#include "stores/credentials/jwt_expiry.h"
#include "stores/credentials/oci_instance_principal.h"
#include "stores/credentials/oci_regions.h"
#include "stores/credentials/oci_resource_principal.h"
#include "stores/credentials/oci_resource_principal_exchange.h"

namespace sluice {
namespace {

// A session token is a JWT of a few kilobytes.
constexpr uint64_t kMaxSessionToken = uint64_t{1} << 16;

Result<std::string> ReadSessionToken(const OciProfile& p) {
  auto text = ReadFile(p.security_token_file, kMaxSessionToken);
  if (!text.ok()) {
    return PermissionDeniedError("cannot read the security_token_file " + p.security_token_file +
                                 " of OCI profile " + p.profile + ": " + text.status().message());
  }
  std::string token = std::move(*text);
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) token.pop_back();
  size_t lead = 0;
  while (lead < token.size() && std::isspace(static_cast<unsigned char>(token[lead]))) ++lead;
  token.erase(0, lead);
  if (token.empty()) {
    return PermissionDeniedError("the security_token_file " + p.security_token_file +
                                 " of OCI profile " + p.profile + " is empty");
  }
  return token;
}

std::string Home(const std::string& path) {
  if (path == "~" || path.rfind("~/", 0) == 0) {
    if (auto home = GetEnv("HOME"); home && !home->empty()) return *home + path.substr(1);
  }
  return path;
}

}  // namespace

std::string OciConfigPath() {
  const std::string standard = Home("~/.oci/config");
  if (standard.rfind("~", 0) != 0 && FileExists(standard)) return standard;
  if (auto env = GetEnv("OCI_CONFIG_FILE"); env && !env->empty()) return Home(*env);
  const std::string legacy = Home("~/.oraclebmc/config");
  return legacy.rfind("~", 0) == 0 ? "" : legacy;
}

namespace {

// The profile of the config file, signing by `auth` ("", api_key or
// security_token).
Result<OciProfile> LoadConfigFileProfile(const std::string& auth) {
  OciProfile out;
  out.config_file = OciConfigPath();
  if (out.config_file.empty() || !FileExists(out.config_file)) {
    return NotFoundError("no OCI config file (~/.oci/config, OCI_CONFIG_FILE)");
  }
  auto text = ReadFile(out.config_file, uint64_t{1} << 20);
  if (!text.ok()) return text.status().WithContext("reading the OCI config file");
  SLUICE_ASSIGN_OR_RETURN(IniFile ini, ParseIni(*text, out.config_file));
  out.profile = GetEnv("OCI_CLI_PROFILE").value_or("");
  if (out.profile.empty()) out.profile = "DEFAULT";
  auto section = ini.find(out.profile);
  if (section == ini.end()) {
    return InvalidArgumentError("Profile '" + out.profile + "' not found in config file " +
                                out.config_file);
  }
  IniSection values = section->second;
  if (auto d = ini.find("DEFAULT"); d != ini.end()) values.insert(d->second.begin(), d->second.end());
  auto get = [&](const char* k) {
    auto it = values.find(k);
    return it == values.end() ? std::string() : it->second;
  };
  out.user = get("user");
  out.tenancy = get("tenancy");
  out.fingerprint = get("fingerprint");
  out.key_file = Home(get("key_file"));
  out.region = get("region");
  const std::string region_from = !out.region.empty() ? "the region of profile " + out.profile +
                                                            " in " + out.config_file
                                                      : std::string("OCI_REGION");
  if (out.region.empty()) out.region = GetEnv("OCI_REGION").value_or("");
  const std::string token_file = Home(get("security_token_file"));
  const bool session = auth == "security_token" || (auth.empty() && !token_file.empty() &&
                                                    out.user.empty());
  using Required = std::pair<const char*, const std::string*>;
  std::vector<Required> required = {{"key_file", &out.key_file}, {"region", &out.region}};
  if (session) {
    required.insert(required.begin(), Required{"security_token_file", &token_file});
  } else {
    required.insert(required.begin(), {Required{"user", &out.user}, {"tenancy", &out.tenancy},
                                       {"fingerprint", &out.fingerprint}});
  }
  std::string missing;
  for (auto [name, value] : required) {
    if (value->empty()) missing += (missing.empty() ? "" : ", ") + std::string(name);
  }
  if (!missing.empty()) {
    return InvalidArgumentError("profile " + out.profile + " of " + out.config_file +
                                " is missing " + missing);
  }
  SLUICE_ASSIGN_OR_RETURN(out.region, CanonicalOciRegion(out.region, region_from));
  auto pem = ReadFile(out.key_file, uint64_t{1} << 16);
  if (!pem.ok()) {
    return InvalidArgumentError("cannot read the key_file " + out.key_file + " of profile " +
                                out.profile + " in " + out.config_file + ": " +
                                pem.status().message());
  }
  out.key.private_key_pem = std::move(*pem);
  out.key.passphrase = get("pass_phrase");
  out.key.what = "the key_file " + out.key_file;
  if (session) {
    out.security_token_file = token_file;
    SLUICE_RETURN_IF_ERROR(ReadSessionToken(out).status());  // said now, not at the first request
  } else {
    out.key.key_id = out.tenancy + "/" + out.user + "/" + out.fingerprint;
  }
  return out;
}

Result<OciProfile> LoadResourcePrincipal() {
  OciProfile out;
  const std::string version = GetEnv("OCI_RESOURCE_PRINCIPAL_VERSION").value_or("");
  if (IsOciRpExchangeVersion(version)) {
    // The first token bought now, so that a broken one is reported at open.
    out.resource_principal_version = version;
    SLUICE_ASSIGN_OR_RETURN(out.session_credential, OciRpExchangeCredential(version));
    SLUICE_RETURN_IF_ERROR(out.session_credential->Get().status());
    out.region = OciRpExchangeRegion(version);
    if (out.region.empty()) {  // 1.1 (or a 3.0 of a 1.1 leaf): the instance's
      SLUICE_ASSIGN_OR_RETURN(out.region,
                              FetchOciInstanceRegion(OciInstancePrincipalEndpointsFromEnv().metadata));
    }
    return out;
  }
  SLUICE_ASSIGN_OR_RETURN(OciResourcePrincipal rp, LoadOciResourcePrincipal());
  out.region = rp.region;
  out.resource_principal = std::move(rp);
  return out;
}

// The instance principal, its first token fetched now (so that a broken
// one is reported at open, naming what failed).
Result<OciProfile> LoadInstancePrincipal() {
  OciProfile out;
  const OciInstancePrincipalEndpoints endpoints = OciInstancePrincipalEndpointsFromEnv();
  out.metadata_endpoint = endpoints.metadata;
  SLUICE_ASSIGN_OR_RETURN(out.region, FetchOciInstanceRegion(endpoints.metadata));
  out.federation_endpoint = OciFederationEndpoint(endpoints, out.region);
  out.session_credential =
      OciInstancePrincipalCredential(out.metadata_endpoint, out.federation_endpoint);
  SLUICE_RETURN_IF_ERROR(out.session_credential->Get().status());
  return out;
}

}  // namespace

Result<OciProfile> LoadOciProfile() {
  const std::string auth = GetEnv("OCI_CLI_AUTH").value_or("");
  if (auth == "resource_principal") return LoadResourcePrincipal();
  if (auth == "instance_principal") return LoadInstancePrincipal();
  if (!auth.empty() && auth != "api_key" && auth != "security_token") {
    return InvalidArgumentError("OCI_CLI_AUTH=" + auth +
                                " is not supported (api_key, security_token, "
                                "resource_principal or instance_principal)");
  }
  auto profile = LoadConfigFileProfile(auth);
  if (profile.ok() || profile.status().code() != StatusCode::kNotFound || !auth.empty()) {
    return profile;
  }
  // No config file: the resource principal the platform (OCI Functions,
  // Data Science) describes in the environment. Instance principals are
  // never tried unasked: their metadata address exists only on OCI.
  auto rp = LoadResourcePrincipal();
  if (rp.ok() || rp.status().code() != StatusCode::kNotFound) return rp;
  return NotFoundError("no OCI credentials: tried the config file (" +
                       profile.status().message() + "), a resource principal (" +
                       rp.status().message() + "); an instance principal only with "
                       "OCI_CLI_AUTH=instance_principal");
}

OciApiKey OciSessionKey(const Credential& credential) {
  OciApiKey key;
  key.key_id = "ST$" + credential.bearer;
  key.private_key_pem = credential.session_key_pem;
  key.what = "the session key of " + credential.source;
  return key;
}

std::string OciErrorDetail(std::string_view body) {
  auto json = ParsePyJson(body);
  if (!json.ok()) return "";
  std::string code = JsonStringMember(*json, "code");
  std::string message = JsonStringMember(*json, "message");
  if (message.size() > 200) message.resize(200);
  for (char& c : message) {
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  }
  return message.empty() ? code : code + ": " + message;
}

Result<OciApiKey> OciRequestKey(const OciProfile& profile) {
  if (profile.session_credential) {
    SLUICE_ASSIGN_OR_RETURN(Credential credential, profile.session_credential->Get());
    return OciSessionKey(credential);
  }
  if (profile.resource_principal) return OciResourcePrincipalKey(*profile.resource_principal);
  if (profile.security_token_file.empty()) return profile.key;
  SLUICE_ASSIGN_OR_RETURN(std::string token, ReadSessionToken(profile));
  if (auto exp = JwtExpiry(token); exp && *exp <= static_cast<int64_t>(std::time(nullptr))) {
    return PermissionDeniedError("the session token of OCI profile " + profile.profile + " (" +
                                 profile.security_token_file + ") expired at " +
                                 OciHttpDate(*exp) + ": refresh it with `oci session refresh " +
                                 "--profile " + profile.profile + "`");
  }
  OciApiKey key = profile.key;
  key.key_id = "ST$" + token;
  return key;
}

std::string DescribeOciSigner(const OciProfile& profile) {
  if (profile.resource_principal) return DescribeOciResourcePrincipal(*profile.resource_principal);
  if (profile.session_credential && !profile.resource_principal_version.empty()) {
    auto credential = profile.session_credential->Get();
    return (credential.ok() ? credential->source : std::string("OCI resource principal")) +
           ", OCI_RESOURCE_PRINCIPAL_VERSION " + profile.resource_principal_version + " (region " +
           profile.region + ", request signatures with a session key)";
  }
  if (profile.session_credential) {
    auto credential = profile.session_credential->Get();
    return (credential.ok() ? credential->source : std::string("OCI instance principal")) +
           ", OCI_CLI_AUTH=instance_principal (federation " + profile.federation_endpoint +
           ", region " + profile.region + ", request signatures with a session key)";
  }
  if (profile.security_token_file.empty()) {
    return "API key of profile " + profile.profile + " in " + profile.config_file + " (key id " +
           profile.key.key_id + ", request signatures)";
  }
  return "session token of profile " + profile.profile + " in " + profile.config_file +
         " (security_token_file " + profile.security_token_file + ", key_file " +
         profile.key_file + ", request signatures)";
}

}  // namespace sluice
