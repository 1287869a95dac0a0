// S3 and every store that speaks S3's XML API: s3:// (AWS and S3-compatible
// endpoints such as R2, MinIO, CoreWeave, B2), oci:// (OCI's S3-compatible
// endpoint), and gs:// (GCS's XML API, by stores/gcs).
//
// Environment (s3://):
//   AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_PROFILE,
//   AWS_SHARED_CREDENTIALS_FILE, AWS_CONFIG_FILE, AWS_REGION,
//   AWS_DEFAULT_REGION: see aws_settings.h.
//   S3_ENDPOINT_URL (Mosaic's), else AWS_ENDPOINT_URL_S3, else
//   AWS_ENDPOINT_URL: a custom endpoint, e.g. "http://127.0.0.1:9000".
//   S3_ADDRESSING_STYLE: "path" or "virtual". Default: path style for custom
//   endpoints and for bucket names holding '.', virtual-hosted otherwise.
//   S3_UNSIGNED or AWS_NO_SIGN_REQUEST ("1", "true", "yes"): send requests
//   unsigned (public buckets), whatever credentials exist.
//   MOSAICML_STREAMING_AWS_REQUESTER_PAYS (Mosaic's): bucket names separated
//   by commas or spaces; requests to them carry x-amz-request-payer: requester.
// Environment (oci://bucket/key): OCI_NAMESPACE and OCI_REGION (required)
//   make the endpoint https://<namespace>.compat.objectstorage.<region>.oraclecloud.com
//   (OCI_ENDPOINT_URL overrides it); credentials are OCI "customer secret
//   keys" given as the AWS variables or profile above; path style.
//
// Thread safety: as every Store (one executor, see store.h).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include "base/status.h"
#include "stores/http/http_client.h"
#include "stores/http/url.h"
#include "stores/signing/sigv4.h"
#include "stores/store.h"

namespace sluice {

// Supplies OAuth2 bearer tokens (GCS); awaited on the store's executor.
class BearerTokenSource {
 public:
  virtual ~BearerTokenSource() = default;
  // A token valid for at least a minute; errors name what to fix.
  virtual boost::asio::awaitable<Result<std::string>> Token(HttpClient& client) = 0;
};

enum class S3Auth { kNone, kSigV4, kBearer };

struct S3StoreConfig {
  std::string scheme = "s3";  // for root() and error text: "<scheme>://bucket/prefix"
  std::string bucket;
  std::string prefix;         // the root inside the bucket; no '/' at either end
  Url endpoint;               // scheme, host and port; its target is ignored
  bool path_style = true;
  S3Auth auth = S3Auth::kSigV4;
  SigV4Credentials credentials;  // kSigV4
  SigV4Config sigv4 = S3SigV4Config("us-east-1");
  std::shared_ptr<BearerTokenSource> bearer;  // kBearer
  HttpHeaders extra_headers;  // sent (and signed) on every request
};

// Opens a store over an explicit configuration (tests, gs://).
Result<std::unique_ptr<Store>> OpenS3CompatibleStore(S3StoreConfig config,
                                                     boost::asio::any_io_executor executor,
                                                     const StoreOptions& options);

// s3://bucket[/prefix], configured from the environment (above). Errors:
// kInvalidArgument for a malformed URL or endpoint; kPermissionDenied when no
// credentials are found and unsigned requests were not asked for.
Result<std::unique_ptr<Store>> OpenS3Store(std::string_view url,
                                           boost::asio::any_io_executor executor,
                                           const StoreOptions& options);

// oci://bucket[/prefix]. Errors as OpenS3Store, plus kInvalidArgument naming
// OCI_NAMESPACE / OCI_REGION when unset.
Result<std::unique_ptr<Store>> OpenOciStore(std::string_view url,
                                            boost::asio::any_io_executor executor,
                                            const StoreOptions& options);

// True for "1", "true", "yes", "on" (any case).
bool EnvFlag(const char* name);

}  // namespace sluice
