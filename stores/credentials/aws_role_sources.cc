#include <algorithm>
#include <vector>

#include "base/file.h"
#include "stores/common/store_keys.h"
#include "stores/credentials/aws_profile_keys.h"
#include "stores/credentials/aws_sources.h"
#include "stores/credentials/aws_sts.h"
#include "stores/credentials/aws_sts_endpoint.h"

namespace sluice {
namespace {

// Web identity tokens are JWTs of a few KiB; the bound only caps a hostile file.
constexpr uint64_t kMaxWebIdentityTokenFile = uint64_t{1} << 20;

std::string SessionName(const std::string& configured, int64_t now) {
  return configured.empty() ? "sluice-session-" + std::to_string(now) : configured;
}

Result<std::optional<int64_t>> DurationSeconds(const std::string& text, const std::string& where) {
  if (text.empty()) return std::optional<int64_t>();
  char* end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (end == text.c_str() || *end != '\0' || v < 900 || v > 43200) {
    return InvalidArgumentError(where + ": duration_seconds must be 900..43200");
  }
  return std::optional<int64_t>(v);
}

bool IsRoleProfile(const AwsProfileFiles& f, const std::string& profile) {
  return !f.ConfigValue(profile, "role_arn").empty() &&
         (!f.ConfigValue(profile, "source_profile").empty() ||
          !f.ConfigValue(profile, "credential_source").empty());
}

// The static keys of `profile`, credentials file first (as boto3).
Result<Credential> StaticKeysOf(const AwsProfileFiles& f, const std::string& profile) {
  Result<Credential> keys = AwsProfileKeys(f.CredentialsSection(profile), profile,
                                           f.credentials_path, "profile '" + profile + "'");
  if (IsNotFound(keys.status())) {
    keys = AwsProfileKeys(f.ConfigSection(profile), profile, f.config_path,
                          "profile '" + profile + "'");
  }
  return keys;
}

std::string Joined(const std::vector<std::string>& profiles, const std::string& last) {
  std::string out;
  for (const auto& p : profiles) out += "'" + p + "' -> ";
  return out + "'" + last + "'";
}

class AwsAssumeRoleSource final : public CredentialSource {
 public:
  AwsAssumeRoleSource(AwsSettings settings, AwsEndpointOptions endpoints)
      : settings_(std::move(settings)), endpoints_(std::move(endpoints)) {}

  std::string name() const override {
    return "assume role (profile '" + settings_.profile() + "')";
  }

  Result<Credential> Fetch(int64_t now) override {
    const AwsProfileFiles& f = settings_.files;
    if (!IsRoleProfile(f, f.profile)) {
      return NotFoundError("profile '" + f.profile +
                           "' has no role_arn with source_profile or credential_source");
    }
    std::vector<std::string> chain;
    SLUICE_ASSIGN_OR_RETURN(Credential out, AssumeRoleOf(f.profile, now, &chain));
    out.source = name() + " as " + f.ConfigValue(f.profile, "role_arn");
    return out;
  }

 private:
  // Assumes `p`'s role, first assuming its source_profile's role when that
  // profile is a role profile without static keys (boto3's role chaining).
  // `chain` holds the profiles whose roles wait on this one, for cycles.
  Result<Credential> AssumeRoleOf(const std::string& p, int64_t now,
                                  std::vector<std::string>* chain) {
    const AwsProfileFiles& f = settings_.files;
    std::string role_arn = f.ConfigValue(p, "role_arn");
    std::string source_profile = f.ConfigValue(p, "source_profile");
    std::string credential_source = f.ConfigValue(p, "credential_source");
    const std::string where = "profile '" + p + "' in " + f.config_path;
    if (!source_profile.empty() && !credential_source.empty()) {
      return InvalidArgumentError(where + ": set source_profile or credential_source, not both");
    }
    chain->push_back(p);
    Result<Credential> signer = NotFoundError("");
    if (!source_profile.empty()) {
      signer = StaticKeysOf(f, source_profile);
      // A profile may name itself as source only for its own static keys.
      bool cycle = std::find(chain->begin(), chain->end(), source_profile) != chain->end() &&
                   (source_profile != p || IsNotFound(signer.status()));
      if (cycle) {
        return InvalidArgumentError(where + ": source_profile makes a cycle: " +
                                    Joined(*chain, source_profile));
      }
      if (IsNotFound(signer.status()) && IsRoleProfile(f, source_profile)) {
        signer = AssumeRoleOf(source_profile, now, chain);
        if (!signer.ok()) return signer.status();  // already names its profile
      } else if (IsNotFound(signer.status())) {
        // As boto3: the source profile's SSO login or credential_process.
        AwsSettings source = settings_;
        source.files.profile = source_profile;
        for (auto make : {MakeAwsSsoSource, MakeAwsProcessSource}) {
          signer = make(source)->Fetch(now);
          if (!IsNotFound(signer.status())) break;
        }
        if (IsNotFound(signer.status())) {
          return InvalidArgumentError(where + ": source_profile '" + source_profile +
                                      "' has no static keys, SSO settings, credential_process, "
                                      "nor role_arn with source_profile or credential_source");
        }
        if (!signer.ok()) {
          return signer.status().WithContext(where + ": source_profile '" + source_profile + "'");
        }
      }
    } else {
      std::unique_ptr<CredentialSource> base;
      if (credential_source == "Environment") {
        base = MakeAwsEnvSource();
      } else if (credential_source == "Ec2InstanceMetadata") {
        base = MakeAwsImdsSource(endpoints_);
      } else if (credential_source == "EcsContainer") {
        base = MakeAwsContainerSource(endpoints_);
      } else {
        return InvalidArgumentError(where + ": credential_source '" + credential_source +
                                    "' is not Environment, Ec2InstanceMetadata or EcsContainer");
      }
      signer = base->Fetch(now);
      if (IsNotFound(signer.status())) {
        return InvalidArgumentError(where + ": credential_source " + credential_source +
                                    " gave no credentials (" + signer.status().message() + ")");
      }
    }
    if (!signer.ok()) return signer.status().WithContext(where);
    StsRoleRequest r;
    SLUICE_ASSIGN_OR_RETURN(StsEndpoint sts, AwsStsEndpoint(settings_));
    r.endpoint = std::move(sts.url);
    r.region = std::move(sts.signing_region);
    r.role_arn = role_arn;
    r.session_name = SessionName(f.ConfigValue(p, "role_session_name"), now);
    r.external_id = f.ConfigValue(p, "external_id");
    SLUICE_ASSIGN_OR_RETURN(r.duration_seconds,
                            DurationSeconds(f.ConfigValue(p, "duration_seconds"), where));
    r.source = where;
    return StsAssumeRole(r, signer->keys, now);
  }

  AwsSettings settings_;
  AwsEndpointOptions endpoints_;
};

class AwsWebIdentitySource final : public CredentialSource {
 public:
  explicit AwsWebIdentitySource(AwsSettings settings) : settings_(std::move(settings)) {}

  std::string name() const override { return "web identity"; }

  Result<Credential> Fetch(int64_t now) override {
    const AwsProfileFiles& f = settings_.files;
    std::string token_file = GetEnv("AWS_WEB_IDENTITY_TOKEN_FILE").value_or("");
    std::string role_arn = GetEnv("AWS_ROLE_ARN").value_or("");
    std::string session = GetEnv("AWS_ROLE_SESSION_NAME").value_or("");
    std::string origin = "AWS_WEB_IDENTITY_TOKEN_FILE";
    if (token_file.empty()) {
      token_file = f.ConfigValue(f.profile, "web_identity_token_file");
      role_arn = f.ConfigValue(f.profile, "role_arn");
      session = f.ConfigValue(f.profile, "role_session_name");
      origin = "profile '" + f.profile + "' web_identity_token_file";
      if (token_file.empty()) {
        return NotFoundError("AWS_WEB_IDENTITY_TOKEN_FILE not set and profile '" + f.profile +
                             "' has no web_identity_token_file");
      }
    }
    if (role_arn.empty()) {
      return InvalidArgumentError(origin + " is set but " +
                                  (origin[0] == 'A' ? "AWS_ROLE_ARN" : "the profile's role_arn") +
                                  " is not");
    }
    auto token = ReadFile(token_file, kMaxWebIdentityTokenFile);
    if (!token.ok()) {
      return PermissionDeniedError(origin +
                                   ": cannot read the token file: " + token.status().message());
    }
    while (!token->empty() && (token->back() == '\n' || token->back() == '\r')) token->pop_back();
    if (token->empty())
      return PermissionDeniedError(origin + ": the token file " + token_file + " is empty");
    StsRoleRequest r;
    SLUICE_ASSIGN_OR_RETURN(StsEndpoint sts, AwsStsEndpoint(settings_));
    r.endpoint = std::move(sts.url);
    r.region = std::move(sts.signing_region);
    r.role_arn = role_arn;
    r.session_name = SessionName(session, now);
    r.source = origin;
    SLUICE_ASSIGN_OR_RETURN(Credential out, StsAssumeRoleWithWebIdentity(r, *token));
    out.source = "web identity as " + role_arn;
    return out;
  }

 private:
  AwsSettings settings_;
};

}  // namespace

std::unique_ptr<CredentialSource> MakeAwsAssumeRoleSource(AwsSettings settings,
                                                          AwsEndpointOptions endpoints) {
  return std::make_unique<AwsAssumeRoleSource>(std::move(settings), std::move(endpoints));
}

std::unique_ptr<CredentialSource> MakeAwsWebIdentitySource(AwsSettings settings) {
  return std::make_unique<AwsWebIdentitySource>(std::move(settings));
}

}  // namespace sluice
