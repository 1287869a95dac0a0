#include "stores/credentials/databricks_metadata_service.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>

#include "formats/json/py_json.h"
#include "stores/credentials/blocking_http.h"
#include "stores/http/url.h"

namespace sluice {
namespace {

// The SDK's timeout for the service.
constexpr int64_t kMetadataServiceTimeoutMs = 10000;
// Caps a hostile expiry; the refresher asks again well before it anyway.
constexpr int64_t kMetadataServiceMaxLifetimeS = int64_t{366} * 24 * 3600;

// A JSON number (integer or not) of unix seconds, as datetime.fromtimestamp
// takes it; nullopt otherwise (the SDK refuses "" and null too).
std::optional<int64_t> MetadataServiceExpiry(const JsonValue& answer) {
  const JsonValue* m = JsonMember(answer, "expires_on");
  if (m == nullptr) return std::nullopt;
  if (const auto* i = std::get_if<int64_t>(&m->v)) return *i;
  if (const auto* d = std::get_if<double>(&m->v); d != nullptr && std::isfinite(*d) &&
                                                   std::fabs(*d) < 1e15) {
    return static_cast<int64_t>(std::floor(*d));
  }
  return std::nullopt;
}

class DatabricksMetadataServiceSource final : public CredentialSource {
 public:
  explicit DatabricksMetadataServiceSource(DatabricksConfig config) : config_(std::move(config)) {}
  std::string name() const override { return "metadata-service"; }

  Result<Credential> Fetch(int64_t now) override {
    const std::string& url = config_.metadata_service_url;
    if (url.empty()) return NotFoundError("no metadata service (DATABRICKS_METADATA_SERVICE_URL)");
    if (config_.host.empty()) return NotFoundError("a metadata service but no host (DATABRICKS_HOST)");
    auto parsed = ParseUrl(url);
    // Only the scheme and authority are named: the path is the service's key.
    const std::string where =
        "the metadata service " +
        (parsed.ok() ? parsed->scheme + "://" + parsed->Authority() + " " : std::string()) + "(from " +
        DatabricksSettingOrigin(config_, "metadata_service_url") + ")";
    if (!parsed.ok()) return PermissionDeniedError(where + " is not a URL");
    HttpRequest req;
    req.url = url;
    req.headers.emplace_back("x-databricks-metadata-version", "1");
    req.headers.emplace_back("x-databricks-host", config_.host);
    auto resp = SendBlocking(std::move(req), CredentialEndpointOptions(kMetadataServiceTimeoutMs));
    if (!resp.ok()) {
      std::string why = resp.status().message();
      // The client's text may quote the URL's path (the key); keep it out.
      if (const std::string& key = parsed->target; key.size() > 1) {
        for (size_t at = why.find(key); at != std::string::npos; at = why.find(key, at)) {
          why.replace(at, key.size(), "/...");
          at += 4;
        }
      }
      return PermissionDeniedError(where + " failed: " + why);
    }
    auto answer = ParsePyJson(resp->body);
    if (!answer.ok()) return PermissionDeniedError(where + " answered with no JSON");
    Credential out;
    out.bearer = JsonStringMember(*answer, "access_token");
    if (out.bearer.empty()) return PermissionDeniedError(where + " returned empty token");
    const std::string type = JsonStringMember(*answer, "token_type");
    if (type.empty()) return PermissionDeniedError(where + " returned empty token type");
    std::string lower = type;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    if (lower != "bearer") {
      return PermissionDeniedError(where + " returned a token of type '" + type +
                                   "'; Sluice sends Bearer tokens only");
    }
    std::optional<int64_t> expiry = MetadataServiceExpiry(*answer);
    if (!expiry) return PermissionDeniedError(where + " returned invalid expiry");
    out.expires_at = std::clamp<int64_t>(*expiry, now, now + kMetadataServiceMaxLifetimeS);
    out.source = where;
    return out;
  }

 private:
  DatabricksConfig config_;
};

}  // namespace

std::unique_ptr<CredentialSource> MakeDatabricksMetadataServiceSource(const DatabricksConfig& config) {
  return std::make_unique<DatabricksMetadataServiceSource>(config);
}

}  // namespace sluice
