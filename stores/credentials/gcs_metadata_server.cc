#include "stores/credentials/gcs_metadata_server.h"

#include "base/file.h"
#include "stores/common/store_keys.h"
#include "stores/credentials/blocking_http.h"
#include "stores/credentials/gcs_access_token.h"
#include "stores/credentials/gcs_service_account.h"
#include "stores/signing/uri_encoding.h"

namespace sluice {
namespace {

// Google's client libraries wait about as long for a token.
constexpr int64_t kMetadataTimeoutMs = 10000;

class MetadataServerSource final : public CredentialSource {
 public:
  explicit MetadataServerSource(std::string host) : host_(std::move(host)) {}

  std::string name() const override { return "metadata server"; }

  Result<Credential> Fetch(int64_t now) override {
    HttpRequest req;
    // The scope as google-auth asks for it (GKE Workload Identity and Cloud
    // Run honour it; Compute Engine gives the VM's scopes).
    req.url = "http://" + host_ +
              "/computeMetadata/v1/instance/service-accounts/default/token?scopes=" +
              UriEncode(kGcsScope);
    // The server answers only requests that carry this header (SSRF guard).
    req.headers.emplace_back("Metadata-Flavor", "Google");
    auto resp = SendBlocking(std::move(req), CredentialEndpointOptions(kMetadataTimeoutMs));
    if (!resp.ok()) {
      // Any failure here means no usable credentials: say what was tried.
      return PermissionDeniedError(
          "no GCS token from the metadata server at " + host_ + ": " + resp.status().message() +
          " (or set GCS_KEY and GCS_SECRET, or GOOGLE_APPLICATION_CREDENTIALS)");
    }
    SLUICE_ASSIGN_OR_RETURN(AccessToken token,
                            ParseAccessTokenResponse(resp->body, "metadata server at " + host_));
    return BearerCredential("metadata server at " + host_, std::move(token), now);
  }

 private:
  std::string host_;
};

}  // namespace

std::optional<std::string> MetadataServerHost(std::string_view product_name_file) {
  if (auto host = GetEnv("GCE_METADATA_HOST"); host && !host->empty()) return *host;
  auto product = ReadFile(std::string(product_name_file), 4096);
  if (product.ok() && product->rfind("Google", 0) == 0) return "metadata.google.internal";
  return std::nullopt;
}

std::unique_ptr<CredentialSource> MakeGcsMetadataServerSource(std::string host) {
  return std::make_unique<MetadataServerSource>(std::move(host));
}

}  // namespace sluice
