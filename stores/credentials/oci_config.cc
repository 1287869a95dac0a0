#include "stores/credentials/oci_config.h"

#include "base/file.h"
#include "stores/common/store_keys.h"
#include "stores/credentials/aws_settings.h"

namespace sluice {
namespace {

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

Result<OciProfile> LoadOciProfile() {
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
  if (out.region.empty()) out.region = GetEnv("OCI_REGION").value_or("");
  std::string missing;
  for (auto [name, value] : {std::pair<const char*, const std::string*>{"user", &out.user},
                             {"tenancy", &out.tenancy}, {"fingerprint", &out.fingerprint},
                             {"key_file", &out.key_file}, {"region", &out.region}}) {
    if (value->empty()) missing += (missing.empty() ? "" : ", ") + std::string(name);
  }
  if (!missing.empty()) {
    return InvalidArgumentError("profile " + out.profile + " of " + out.config_file +
                                " is missing " + missing);
  }
  auto pem = ReadFile(out.key_file, uint64_t{1} << 16);
  if (!pem.ok()) {
    return InvalidArgumentError("cannot read the key_file " + out.key_file + " of profile " +
                                out.profile + " in " + out.config_file + ": " +
                                pem.status().message());
  }
  out.key.key_id = out.tenancy + "/" + out.user + "/" + out.fingerprint;
  out.key.private_key_pem = std::move(*pem);
  out.key.passphrase = get("pass_phrase");
  out.key.what = "the key_file " + out.key_file;
  return out;
}

}  // namespace sluice
