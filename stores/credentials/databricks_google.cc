#include "stores/credentials/databricks_google.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "base/file.h"
#include "stores/credentials/gcs_service_account.h"

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

}  // namespace

std::unique_ptr<CredentialSource> MakeDatabricksGoogleCredentialsSource(const DatabricksConfig& config) {
  return std::make_unique<DatabricksGoogleCredentialsSource>(config);
}

}  // namespace sluice
