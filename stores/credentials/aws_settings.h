// The AWS shared files and settings as the AWS tools read them:
//   profile: AWS_PROFILE (else AWS_DEFAULT_PROFILE, else "default");
//   files: AWS_SHARED_CREDENTIALS_FILE (default ~/.aws/credentials) and
//     AWS_CONFIG_FILE (default ~/.aws/config; sections "[profile NAME]" or
//     "[default]");
//   region: AWS_REGION, AWS_DEFAULT_REGION, the profile's "region" in the
//     config file, else "us-east-1".
// Where credentials come from is aws_credential_chain.h's business.
// Reads the environment and files; thread-safe as long as nobody changes
// the environment meanwhile.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace sluice {

// INI sections -> key -> value, keys lower-cased, values trimmed. `path` is
// only for error messages. A missing file is not an error (the caller reads
// it with ReadFile and passes "" when absent).
using IniSection = std::map<std::string, std::string>;
using IniFile = std::map<std::string, IniSection>;
Result<IniFile> ParseIni(std::string_view text, std::string_view path);

// Both shared files, parsed.
struct AwsProfileFiles {
  std::string profile = "default";
  bool profile_explicit = false;  // named by AWS_PROFILE / AWS_DEFAULT_PROFILE
  std::string credentials_path;   // "" when HOME is unset and no variable names it
  std::string config_path;
  IniFile credentials;  // empty when the file is absent
  IniFile config;

  // The section of profile `name` in the credentials file / the config file
  // ("[default]" or "[profile NAME]"), or null. Pointers live as long as
  // this object.
  const IniSection* CredentialsSection(const std::string& name) const;
  const IniSection* ConfigSection(const std::string& name) const;
  // `key` of profile `name` in the config file, else "".
  std::string ConfigValue(const std::string& name, const std::string& key) const;
};

struct AwsSettings {
  AwsProfileFiles files;
  std::string region = "us-east-1";
  const std::string& profile() const { return files.profile; }
};

// Errors: kInvalidArgument when AWS_PROFILE names a profile found in neither
// file, or a file cannot be parsed (naming file and line, never a value).
Result<AwsSettings> LoadAwsSettings();

}  // namespace sluice
