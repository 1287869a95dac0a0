#include "stores/credentials/aws_profile_keys.h"
#include "stores/credentials/aws_sources.h"

namespace sluice {

Result<Credential> AwsProfileKeys(const IniSection* section, const std::string& profile,
                                  const std::string& path, const std::string& source) {
  if (section == nullptr) {
    return NotFoundError("no profile '" + profile + "' in " + (path.empty() ? "(no file)" : path));
  }
  auto id = section->find("aws_access_key_id");
  auto sk = section->find("aws_secret_access_key");
  bool has_id = id != section->end() && !id->second.empty();
  bool has_sk = sk != section->end() && !sk->second.empty();
  if (!has_id && !has_sk) return NotFoundError("profile '" + profile + "' has no keys in " + path);
  if (!has_id || !has_sk) {
    return PermissionDeniedError("AWS profile '" + profile + "' in " + path +
                                 " has only one of aws_access_key_id and aws_secret_access_key");
  }
  auto token = section->find("aws_session_token");
  Credential out;
  out.source = source;
  out.keys = SigV4Credentials{id->second, sk->second, token == section->end() ? "" : token->second};
  return out;
}

namespace {

class AwsFileKeysSource final : public CredentialSource {
 public:
  AwsFileKeysSource(AwsSettings settings, bool config_file)
      : settings_(std::move(settings)), config_file_(config_file) {}

  std::string name() const override {
    return (config_file_ ? "config file" : "shared credentials file") + std::string(" (profile '") +
           settings_.profile() + "')";
  }

  Result<Credential> Fetch(int64_t /*now*/) override {
    const AwsProfileFiles& f = settings_.files;
    const IniSection* section =
        config_file_ ? f.ConfigSection(f.profile) : f.CredentialsSection(f.profile);
    return AwsProfileKeys(section, f.profile, config_file_ ? f.config_path : f.credentials_path,
                          name());
  }

 private:
  AwsSettings settings_;
  bool config_file_;
};

}  // namespace

std::unique_ptr<CredentialSource> MakeAwsCredentialsFileSource(AwsSettings settings) {
  return std::make_unique<AwsFileKeysSource>(std::move(settings), false);
}

std::unique_ptr<CredentialSource> MakeAwsConfigFileSource(AwsSettings settings) {
  return std::make_unique<AwsFileKeysSource>(std::move(settings), true);
}

}  // namespace sluice
