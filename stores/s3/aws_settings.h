// Where S3 requests get their credentials and region, as the AWS tools do:
//   credentials: AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY (+ AWS_SESSION_TOKEN),
//     else the profile AWS_PROFILE (default "default") of the shared
//     credentials file (AWS_SHARED_CREDENTIALS_FILE, default
//     ~/.aws/credentials), else that profile in the config file
//     (AWS_CONFIG_FILE, default ~/.aws/config; section "[profile NAME]" or
//     "[default]");
//   region: AWS_REGION, AWS_DEFAULT_REGION, the profile's "region" in the
//     config file, else "us-east-1".
// Reads the environment and files; thread-safe as long as nobody changes
// the environment meanwhile.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "stores/signing/sigv4.h"

namespace sluice {

struct AwsSettings {
  std::optional<SigV4Credentials> credentials;  // none found
  std::string region = "us-east-1";
  std::string profile = "default";
};

// Errors: kInvalidArgument when AWS_PROFILE names a profile found in neither
// file, or a file cannot be parsed (naming file and line, never a value);
// kPermissionDenied when only half a key pair is set (naming the variables).
Result<AwsSettings> LoadAwsSettings();

// INI sections -> key -> value, keys lower-cased, values trimmed. `path` is
// only for error messages. A missing file is not an error (the caller reads
// it with ReadFile and passes "" when absent).
using IniFile = std::map<std::string, std::map<std::string, std::string>>;
Result<IniFile> ParseIni(std::string_view text, std::string_view path);

}  // namespace sluice
