// AWS IAM Identity Center (SSO) profiles: the profile's sso_account_id and
// sso_role_name, with sso_session (a [sso-session NAME] section holding
// sso_start_url and sso_region) or the legacy sso_start_url/sso_region in
// the profile. The token `aws sso login` left in ~/.aws/sso/cache/<sha1>.json
// (sha1 of the session name, or of the start URL for legacy profiles) is
// exchanged at the SSO portal (GetRoleCredentials) for role credentials.
// aws_sso_token.h reads the token, refreshing it through SSO-OIDC when it
// is about to expire.


#include "formats/json/py_json.h"
#include "stores/common/store_keys.h"
#include "stores/credentials/aws_credential_documents.h"
#include "stores/credentials/aws_sources.h"
#include "stores/credentials/aws_sso_token.h"
#include "stores/credentials/blocking_http.h"
#include "stores/signing/digest.h"
#include "stores/signing/uri_encoding.h"

namespace sluice {
namespace {

constexpr int64_t kSsoTimeoutMs = 10000;

class AwsSsoSource final : public CredentialSource {
 public:
  explicit AwsSsoSource(AwsSettings settings) : settings_(std::move(settings)) {}

  std::string name() const override { return "SSO (profile '" + settings_.profile() + "')"; }

  Result<Credential> Fetch(int64_t now) override {
    const AwsProfileFiles& f = settings_.files;
    const std::string& p = f.profile;
    std::string session = f.ConfigValue(p, "sso_session");
    std::string start_url = f.ConfigValue(p, "sso_start_url");
    std::string sso_region = f.ConfigValue(p, "sso_region");
    if (session.empty() && start_url.empty()) {
      return NotFoundError("profile '" + p + "' has no sso_session or sso_start_url");
    }
    const std::string where = "profile '" + p + "' in " + f.config_path;
    if (!session.empty()) {
      auto it = f.config.find("sso-session " + session);
      if (it == f.config.end()) {
        return InvalidArgumentError(where + ": no [sso-session " + session + "] section");
      }
      auto get = [&](const char* key) {
        auto kv = it->second.find(key);
        return kv == it->second.end() ? std::string() : kv->second;
      };
      start_url = get("sso_start_url");
      sso_region = get("sso_region");
    }
    std::string account = f.ConfigValue(p, "sso_account_id");
    std::string role = f.ConfigValue(p, "sso_role_name");
    if (start_url.empty() || sso_region.empty() || account.empty() || role.empty()) {
      return InvalidArgumentError(where +
                                  ": an SSO profile needs sso_start_url, sso_region, "
                                  "sso_account_id and sso_role_name");
    }
    auto home = GetEnv("HOME");
    if (!home) return PermissionDeniedError("HOME is not set, so ~/.aws/sso/cache cannot be read");
    SsoTokenSettings token_settings;
    token_settings.profile = p;
    token_settings.session_name = session;
    token_settings.start_url = start_url;
    token_settings.sso_region = sso_region;
    token_settings.cache_path =
        *home + "/.aws/sso/cache/" + Sha1Hex(session.empty() ? start_url : session) + ".json";
    const std::string login = "run 'aws sso login --profile " + p + "'";
    SLUICE_ASSIGN_OR_RETURN(std::string token, AwsSsoAccessToken(token_settings, now));

    std::string base = "https://portal.sso." + sso_region + ".amazonaws.com";
    if (auto ep = GetEnv("AWS_ENDPOINT_URL_SSO"); ep && !ep->empty()) {
      base = *ep;
      while (!base.empty() && base.back() == '/') base.pop_back();
    }
    HttpRequest req;
    req.url = base + "/federation/credentials?account_id=" + UriEncode(account) +
              "&role_name=" + UriEncode(role);
    req.headers.emplace_back("x-amz-sso_bearer_token", token);
    auto resp = SendBlocking(std::move(req), CredentialEndpointOptions(kSsoTimeoutMs));
    if (!resp.ok()) {
      return Status(
          resp.status().code(),
          "SSO GetRoleCredentials for role " + role + " in account " + account +
              " failed: " + resp.status().message() +
              (resp.status().code() == StatusCode::kPermissionDenied ? " (" + login + ")" : ""));
    }
    auto answer = ParsePyJson(resp->body);
    const JsonValue* creds = answer.ok() ? JsonMember(*answer, "roleCredentials") : nullptr;
    Credential out;
    out.source = "SSO (profile '" + p + "') as role " + role + " in account " + account;
    if (creds != nullptr) {
      out.keys = SigV4Credentials{JsonStringMember(*creds, "accessKeyId"),
                                  JsonStringMember(*creds, "secretAccessKey"),
                                  JsonStringMember(*creds, "sessionToken")};
      const JsonValue* ms = JsonMember(*creds, "expiration");
      if (const auto* i = ms ? std::get_if<int64_t>(&ms->v) : nullptr) out.expires_at = *i / 1000;
    }
    if (out.keys.access_key_id.empty() || out.keys.secret_access_key.empty()) {
      return PermissionDeniedError("SSO GetRoleCredentials answered without roleCredentials");
    }
    return out;
  }

 private:
  AwsSettings settings_;
};

}  // namespace

std::unique_ptr<CredentialSource> MakeAwsSsoSource(AwsSettings settings) {
  return std::make_unique<AwsSsoSource>(std::move(settings));
}

}  // namespace sluice
