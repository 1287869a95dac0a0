#include "stores/gcs/gcs_store.h"

#include "base/file.h"
#include "stores/common/store_keys.h"
#include "stores/credentials/gcs_credential.h"
#include "stores/credentials/gcs_metadata_server.h"
#include "stores/s3/s3_store.h"

namespace sluice {

Result<std::unique_ptr<Store>> OpenGcsStore(std::string_view url,
                                            boost::asio::any_io_executor executor,
                                            const StoreOptions& options) {
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
  } else if (auto path = GetEnv("GOOGLE_APPLICATION_CREDENTIALS")) {
    SLUICE_ASSIGN_OR_RETURN(std::string text, ReadFile(*path, uint64_t{1} << 20));
    SLUICE_ASSIGN_OR_RETURN(ServiceAccountKey sa, ParseServiceAccountKey(text, *path));
    config.auth = S3Auth::kBearer;
    config.credential = GcsServiceAccountCredential(sa);
  } else if (auto host = MetadataServerHost()) {
    config.auth = S3Auth::kBearer;
    config.credential = GcsMetadataServerCredential(*host);
  } else {
    return PermissionDeniedError(
                  "no credentials for " + UrlForErrors(url) +
                      ": set GCS_KEY and GCS_SECRET (HMAC key) or "
                      "GOOGLE_APPLICATION_CREDENTIALS (service-account key file), or run on "
                      "Google Compute Engine or set GCE_METADATA_HOST (metadata server)");
  }
  return OpenS3CompatibleStore(std::move(config), std::move(executor), options);
}

}  // namespace sluice
