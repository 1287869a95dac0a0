#include "stores/credentials/databricks_google.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "base/file.h"
#include "formats/json/py_json.h"
#include "stores/common/store_keys.h"
#include "stores/credentials/gcs_access_token.h"
#include "stores/credentials/gcs_adc.h"
#include "stores/credentials/gcs_service_account.h"
#include "stores/credentials/gcs_token_flows.h"
#include "stores/credentials/jwt_expiry.h"

namespace sluice {
namespace {

// The SDK's GcpScopes, space-separated as google-auth puts them in a grant.
constexpr char kDatabricksGcpScopes[] =
    "https://www.googleapis.com/auth/cloud-platform https://www.googleapis.com/auth/compute";
// A key file is a few KiB; this only caps a hostile path.
constexpr uint64_t kMaxGoogleCredentialsFile = uint64_t{1} << 20;

class DatabricksGoogleCredentialsSource final : public CredentialSource {
 public:
  explicit DatabricksGoogleCredentialsSource(DatabricksConfig config) : config_(std::move(config)) {}
  std::string name() const override { return "google-credentials"; }

  Result<Credential> Fetch(int64_t now) override {
    if (config_.google_credentials.empty()) return NotFoundError("no service-account key (GOOGLE_CREDENTIALS)");
    if (config_.host.empty()) return NotFoundError("a service-account key but no host (DATABRICKS_HOST)");
    const std::string origin = DatabricksSettingOrigin(config_, "google_credentials");
    // As the SDK: a path of an existing file, else the JSON itself.
    std::string json = config_.google_credentials;
    std::string what = origin;
    if (FileExists(json)) {
      what = json;
      auto text = ReadFile(json, kMaxGoogleCredentialsFile);
      if (!text.ok()) return text.status().WithContext("reading the service-account key (from " + origin + ")");
      json = std::move(*text);
    }
    SLUICE_ASSIGN_OR_RETURN(ServiceAccountKey key, ParseServiceAccountKey(json, what));
    SLUICE_ASSIGN_OR_RETURN(Credential out, FetchServiceAccountIdToken(key, config_.host, now));
    out.source = "Google service account " + key.client_email + " (ID token; key from " + origin + ")";
    if (auto access = MakeGcsServiceAccountSource(key, kDatabricksGcpScopes)->Fetch(now); access.ok()) {
      if (access->expires_at) out.expires_at = std::min(*out.expires_at, *access->expires_at);
      out.headers.emplace_back("x-databricks-gcp-sa-access-token", std::move(access->bearer));
    }
    return out;
  }

 private:
  DatabricksConfig config_;
};

class DatabricksGoogleIdSource final : public CredentialSource {
 public:
  explicit DatabricksGoogleIdSource(DatabricksConfig config) : config_(std::move(config)) {}
  std::string name() const override { return "google-id"; }

  Result<Credential> Fetch(int64_t now) override {
    const std::string& account = config_.google_service_account;
    if (account.empty()) {
      return NotFoundError("no service account to impersonate (DATABRICKS_GOOGLE_SERVICE_ACCOUNT)");
    }
    if (config_.host.empty()) return NotFoundError("a service account but no host (DATABRICKS_HOST)");
    GcsAdcOptions adc;
    // google-auth gives a service-account source of an impersonation IAM's scope.
    adc.scope = std::string(kGoogleIamScope);
    auto source = MakeGcsAdcChain(adc)->Fetch(now);
    if (!source.ok()) {
      const std::string why = "Application Default Credentials to impersonate " + account + " (from " +
                              DatabricksSettingOrigin(config_, "google_service_account") + "): " +
                              source.status().message();
      return source.status().code() == StatusCode::kNotFound ? PermissionDeniedError(why)
                                                             : Status(source.status().code(), why);
    }
    std::string base = GetEnv("SLUICE_GCP_IAM_CREDENTIALS_ENDPOINT").value_or("");
    if (base.empty()) base = "https://iamcredentials.googleapis.com";
    while (!base.empty() && base.back() == '/') base.pop_back();
    const std::string prefix = base + "/v1/projects/-/serviceAccounts/" + account;
    // The body as google-auth's json.dumps writes it.
    std::string body = "{\"audience\": ";
    SLUICE_RETURN_IF_ERROR(AppendPyJsonString(body, config_.host));
    body += ", \"delegates\": null, \"includeEmail\": true}";
    SLUICE_ASSIGN_OR_RETURN(
        HttpResponse resp,
        PostToGoogle(prefix + ":generateIdToken", std::move(body), "IAM generateIdToken for " + account,
                     {{"authorization", "Bearer " + source->bearer}}, "application/json"));
    auto parsed = ParsePyJson(resp.body);
    Credential out;
    out.bearer = parsed.ok() ? JsonStringMember(*parsed, "token") : "";
    if (out.bearer.empty()) {
      return PermissionDeniedError("IAM generateIdToken for " + account + " answered without a token");
    }
    out.expires_at = JwtExpiry(out.bearer);  // the ID token's "exp"
    out.source = "Google service account " + account + " (ID token, impersonated by " + source->source +
                 "; from " + DatabricksSettingOrigin(config_, "google_service_account") + ")";
    ImpersonationRequest access;
    access.url = prefix + ":generateAccessToken";
    access.scopes = {"https://www.googleapis.com/auth/cloud-platform", "https://www.googleapis.com/auth/compute"};
    if (auto token = GenerateAccessToken(access, source->bearer, source->source); token.ok()) {
      if (token->expires_at && out.expires_at) out.expires_at = std::min(*out.expires_at, *token->expires_at);
      out.headers.emplace_back("x-databricks-gcp-sa-access-token", std::move(token->bearer));
    }
    return out;
  }

 private:
  DatabricksConfig config_;
};

}  // namespace

std::unique_ptr<CredentialSource> MakeDatabricksGoogleIdSource(const DatabricksConfig& config) {
  return std::make_unique<DatabricksGoogleIdSource>(config);
}

std::unique_ptr<CredentialSource> MakeDatabricksGoogleCredentialsSource(const DatabricksConfig& config) {
  return std::make_unique<DatabricksGoogleCredentialsSource>(config);
}

}  // namespace sluice
