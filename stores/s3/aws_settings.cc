#include "stores/s3/aws_settings.h"

#include "base/file.h"
#include "stores/common/store_keys.h"

namespace sluice {
namespace {

std::string Trim(std::string_view s) {
  size_t a = s.find_first_not_of(" \t\r");
  if (a == std::string_view::npos) return "";
  size_t b = s.find_last_not_of(" \t\r");
  return std::string(s.substr(a, b - a + 1));
}

std::string HomeFile(const char* env_name, const char* relative) {
  if (auto v = GetEnv(env_name)) return *v;
  auto home = GetEnv("HOME");
  return home ? *home + "/" + relative : std::string();
}

Result<IniFile> LoadIni(const std::string& path) {
  if (path.empty() || !FileExists(path)) return IniFile{};
  SLUICE_ASSIGN_OR_RETURN(std::string text, ReadFile(path, uint64_t{1} << 20));
  return ParseIni(text, path);
}

}  // namespace

Result<IniFile> ParseIni(std::string_view text, std::string_view path) {
  IniFile out;
  std::string section;
  bool in_section = false;
  size_t line_no = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string line = Trim(text.substr(pos, end - pos));
    ++line_no;
    pos = end + 1;
    if (line.empty() || line[0] == '#' || line[0] == ';') {
      if (end == text.size()) break;
      continue;
    }
    if (line[0] == '[') {
      if (line.back() != ']') {
        return InvalidArgumentError(std::string(path) + ":" + std::to_string(line_no) +
                                    ": malformed section header");
      }
      section = Trim(line.substr(1, line.size() - 2));
      in_section = true;
      out[section];
    } else {
      size_t eq = line.find('=');
      if (eq == std::string::npos) {
        // Nested settings ("s3 =\n  addressing_style = path") are indented
        // continuation lines; skip them rather than fail.
        if (end == text.size()) break;
        continue;
      }
      if (!in_section) {
        return InvalidArgumentError(std::string(path) + ":" + std::to_string(line_no) +
                                    ": setting outside of any [section]");
      }
      std::string key = AsciiToLower(Trim(line.substr(0, eq)));
      out[section][key] = Trim(line.substr(eq + 1));
    }
    if (end == text.size()) break;
  }
  return out;
}

Result<AwsSettings> LoadAwsSettings() {
  AwsSettings out;
  if (auto p = GetEnv("AWS_PROFILE")) out.profile = *p;
  bool profile_explicit = GetEnv("AWS_PROFILE").has_value();
  std::string cred_path = HomeFile("AWS_SHARED_CREDENTIALS_FILE", ".aws/credentials");
  std::string config_path = HomeFile("AWS_CONFIG_FILE", ".aws/config");
  SLUICE_ASSIGN_OR_RETURN(IniFile creds, LoadIni(cred_path));
  SLUICE_ASSIGN_OR_RETURN(IniFile config, LoadIni(config_path));

  const std::map<std::string, std::string>* cred_section = nullptr;
  if (auto it = creds.find(out.profile); it != creds.end()) cred_section = &it->second;
  const std::map<std::string, std::string>* config_section = nullptr;
  std::string config_name = out.profile == "default" ? "default" : "profile " + out.profile;
  if (auto it = config.find(config_name); it != config.end()) config_section = &it->second;
  if (profile_explicit && cred_section == nullptr && config_section == nullptr) {
    return InvalidArgumentError("AWS_PROFILE names profile '" + out.profile +
                                "', found in neither " + cred_path + " nor " + config_path);
  }

  auto key_id = GetEnv("AWS_ACCESS_KEY_ID");
  auto secret = GetEnv("AWS_SECRET_ACCESS_KEY");
  if (key_id.has_value() != secret.has_value()) {
    return PermissionDeniedError(
                  "only one of AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY is set; set both");
  }
  if (key_id && !profile_explicit) {
    out.credentials = SigV4Credentials{*key_id, *secret, GetEnv("AWS_SESSION_TOKEN").value_or("")};
  } else {
    for (const auto* section : {cred_section, config_section}) {
      if (section == nullptr) continue;
      auto id = section->find("aws_access_key_id");
      auto sk = section->find("aws_secret_access_key");
      if (id == section->end() && sk == section->end()) continue;
      if (id == section->end() || sk == section->end() || id->second.empty() ||
          sk->second.empty()) {
        return PermissionDeniedError(
                      "AWS profile '" + out.profile +
                          "' has only one of aws_access_key_id and aws_secret_access_key");
      }
      auto token = section->find("aws_session_token");
      out.credentials = SigV4Credentials{
          id->second, sk->second, token == section->end() ? "" : token->second};
      break;
    }
    // AWS_PROFILE set but without keys in the files: env keys still count.
    if (!out.credentials && key_id) {
      out.credentials =
          SigV4Credentials{*key_id, *secret, GetEnv("AWS_SESSION_TOKEN").value_or("")};
    }
  }

  if (auto r = GetEnv("AWS_REGION")) {
    out.region = *r;
  } else if (auto r2 = GetEnv("AWS_DEFAULT_REGION")) {
    out.region = *r2;
  } else if (config_section != nullptr) {
    auto it = config_section->find("region");
    if (it != config_section->end() && !it->second.empty()) out.region = it->second;
  }
  return out;
}

}  // namespace sluice
