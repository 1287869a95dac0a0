#include "stores/credentials/aws_settings.h"

#include "base/ascii.h"
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

const IniSection* AwsProfileFiles::CredentialsSection(const std::string& name) const {
  auto it = credentials.find(name);
  return it == credentials.end() ? nullptr : &it->second;
}

const IniSection* AwsProfileFiles::ConfigSection(const std::string& name) const {
  auto it = config.find(name == "default" ? name : "profile " + name);
  if (it == config.end() && name == "default") it = config.find("profile default");
  return it == config.end() ? nullptr : &it->second;
}

std::string AwsProfileFiles::ConfigValue(const std::string& name, const std::string& key) const {
  const IniSection* section = ConfigSection(name);
  if (section == nullptr) return "";
  auto it = section->find(key);
  return it == section->end() ? "" : it->second;
}

Result<AwsSettings> LoadAwsSettings() {
  AwsSettings out;
  AwsProfileFiles& files = out.files;
  for (const char* var : {"AWS_PROFILE", "AWS_DEFAULT_PROFILE"}) {
    if (auto p = GetEnv(var); p && !p->empty()) {
      files.profile = *p;
      files.profile_explicit = true;
      break;
    }
  }
  files.credentials_path = HomeFile("AWS_SHARED_CREDENTIALS_FILE", ".aws/credentials");
  files.config_path = HomeFile("AWS_CONFIG_FILE", ".aws/config");
  SLUICE_ASSIGN_OR_RETURN(files.credentials, LoadIni(files.credentials_path));
  SLUICE_ASSIGN_OR_RETURN(files.config, LoadIni(files.config_path));
  if (files.profile_explicit && files.CredentialsSection(files.profile) == nullptr &&
      files.ConfigSection(files.profile) == nullptr) {
    return InvalidArgumentError("AWS_PROFILE names profile '" + files.profile +
                                "', found in neither " + files.credentials_path + " nor " +
                                files.config_path);
  }
  if (auto r = GetEnv("AWS_REGION"); r && !r->empty()) {
    out.region = *r;
  } else if (auto r2 = GetEnv("AWS_DEFAULT_REGION"); r2 && !r2->empty()) {
    out.region = *r2;
  } else if (std::string r3 = files.ConfigValue(files.profile, "region"); !r3.empty()) {
    out.region = r3;
  }
  return out;
}

}  // namespace sluice
