#include "stores/gcs/metadata_server.h"

#include "base/file.h"
#include "stores/common/store_keys.h"
#include "stores/gcs/oauth_token.h"

namespace sluice {
namespace {

using boost::asio::awaitable;

class MetadataServerTokenSource final : public CachingTokenSource {
 public:
  MetadataServerTokenSource(std::string host, int64_t (*clock)())
      : CachingTokenSource(clock), host_(std::move(host)) {}

 protected:
  awaitable<Result<AccessToken>> Fetch(HttpClient& client, int64_t /*now*/) override {
    HttpRequest req;
    req.url = "http://" + host_ + "/computeMetadata/v1/instance/service-accounts/default/token";
    // The server answers only requests that carry this header (SSRF guard).
    req.headers.emplace_back("Metadata-Flavor", "Google");
    auto resp = co_await client.Send(std::move(req));
    if (!resp.ok()) {
      // Any failure here means no usable credentials: say what was tried.
      co_return PermissionDeniedError(
                       "no GCS token from the metadata server at " + host_ + ": " +
                           resp.status().message() +
                           " (or set GCS_KEY and GCS_SECRET, or GOOGLE_APPLICATION_CREDENTIALS)");
    }
    co_return ParseAccessTokenResponse(resp->body, "metadata server at " + host_);
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

std::shared_ptr<BearerTokenSource> MakeMetadataServerTokenSource(std::string host,
                                                                 int64_t (*clock)()) {
  return std::make_shared<MetadataServerTokenSource>(std::move(host), clock);
}

}  // namespace sluice
