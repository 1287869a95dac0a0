#include "stores/gcs/gcs_store.h"

#include "stores/common/store_keys.h"
#include "stores/credentials/gcs_adc.h"
#include "stores/s3/s3_store.h"

namespace sluice {
namespace {

Result<S3StoreConfig> GcsConfigFromEnvironment(std::string_view url) {
  S3StoreConfig config;
  config.scheme = "gs";
  SLUICE_ASSIGN_OR_RETURN(BucketPath bp, SplitBucketPath(url, url.substr(5)));
  config.bucket = bp.bucket;
  config.prefix = bp.path;
  std::string endpoint = GetEnv("GCS_ENDPOINT_URL").value_or("https://storage.googleapis.com");
  auto ep = ParseUrl(endpoint);
  if (!ep.ok()) {
    return InvalidArgumentError("GCS_ENDPOINT_URL is not an http(s) URL: " +
                                ep.status().message());
  }
  config.endpoint = *ep;
  config.path_style = true;
  auto key = GetEnv("GCS_KEY");
  auto secret = GetEnv("GCS_SECRET");
  if (key.has_value() != secret.has_value()) {
    return PermissionDeniedError(
                  "only one of GCS_KEY and GCS_SECRET is set; set both");
  }
  if (key) {
    config.auth = S3Auth::kSigV4;
    config.credentials = SigV4Credentials{*key, *secret, ""};
    config.sigv4 = GcsHmacConfig();
    return config;
  }
  std::string absence = GcsAdcAbsence();
  if (!absence.empty()) {
    // As google-cloud-storage's anonymous client: public buckets only.
    config.auth = S3Auth::kNone;
    config.unsigned_reason = absence;
    return config;
  }
  config.auth = S3Auth::kBearer;
  config.credential = GcsAdcCredential();
  return config;
}

}  // namespace

Result<std::unique_ptr<Store>> OpenGcsStore(std::string_view url,
                                            boost::asio::any_io_executor executor,
                                            const StoreOptions& options) {
  SLUICE_ASSIGN_OR_RETURN(S3StoreConfig config, GcsConfigFromEnvironment(url));
  return OpenS3CompatibleStore(std::move(config), std::move(executor), options);
}

Result<std::string> DescribeGcsAuth(std::string_view url) {
  SLUICE_ASSIGN_OR_RETURN(S3StoreConfig config, GcsConfigFromEnvironment(url));
  std::string out = "gs://" + config.bucket + "\n";
  out += "  endpoint: " + config.endpoint.Redacted() + "\n";
  if (config.auth == S3Auth::kSigV4) {
    const std::string& id = config.credentials.access_key_id;
    std::string masked = id.size() > 4 ? "****" + id.substr(id.size() - 4) : "****";
    out += "  credentials: HMAC key from GCS_KEY and GCS_SECRET (access key " + masked + ")\n";
    return out;
  }
  if (!config.credential) {
    out += "  requests: unsigned (" + config.unsigned_reason + ")\n";
    return out;
  }
  auto current = config.credential->Get();
  if (!current.ok()) return current.status().WithContext(UrlForErrors(url));
  return out + config.credential->DescribeInUse(*current, "OAuth2 bearer token");
}

}  // namespace sluice
