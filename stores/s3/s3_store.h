// S3 and every store that speaks S3's XML API: s3:// (AWS and S3-compatible
// endpoints such as R2, MinIO, CoreWeave, B2), oci:// (OCI's S3-compatible
// endpoint), and gs:// (GCS's XML API, by stores/gcs).
//
// Environment (s3://):
//   Credentials: the AWS chain in boto3's order (environment keys, profile
//   role_arn, web identity, SSO, shared credentials file, credential_process,
//   config file, container endpoint, EC2 instance metadata), with its
//   variables (AWS_ACCESS_KEY_ID, AWS_PROFILE, AWS_WEB_IDENTITY_TOKEN_FILE, AWS_ENDPOINT_URL_SSO,
//   AWS_CONTAINER_CREDENTIALS_RELATIVE_URI, AWS_EC2_METADATA_DISABLED, ...):
//   see stores/credentials/aws_credential_chain.h. Fetched once per process,
//   shared by every s3:// store, refreshed before expiry in the background.
//   AWS_REGION, AWS_DEFAULT_REGION, the profile's region: see
//   stores/credentials/aws_settings.h. AWS_ENDPOINT_URL_STS: STS endpoint.
//   S3_ENDPOINT_URL (Mosaic's), else AWS_ENDPOINT_URL_S3, else
//   AWS_ENDPOINT_URL: a custom endpoint, e.g. "http://127.0.0.1:9000".
//   S3_ADDRESSING_STYLE: "path" or "virtual". Default: path style for custom
//   endpoints and for bucket names holding '.', virtual-hosted otherwise.
//   S3_UNSIGNED or AWS_NO_SIGN_REQUEST ("1", "true", "yes"): send requests
//   unsigned (public buckets), whatever credentials exist. When no source of
//   the chain applies, requests go unsigned too (as Mosaic with boto3); a
//   source that applies but fails is an error at open.
//   Region: when S3 answers that the bucket lives in another region
//   (AuthorizationHeaderMalformed, or PermanentRedirect to a PUT/POST/DELETE,
//   naming the region; see bucket_region.h), the request is re-signed for it
//   (and sent to s3.<region>.amazonaws.com when the endpoint is AWS's) and
//   the region is remembered for the bucket in this process. A GET or HEAD
//   answered 301 without Location is not followed yet (stores/http fails it
//   before the body is read).
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
#include "stores/credentials/anonymous_access.h"
#include "stores/credentials/shared_credential.h"
#include "stores/http/http_client.h"
#include "stores/http/url.h"
#include "stores/signing/sigv4.h"
#include "stores/store.h"

namespace sluice {

enum class S3Auth { kNone, kSigV4, kBearer };

struct S3StoreConfig {
  std::string scheme = "s3";  // for root() and error text: "<scheme>://bucket/prefix"
  std::string bucket;
  std::string prefix;         // the root inside the bucket; no '/' at either end
  Url endpoint;               // scheme, host and port; its target is ignored
  bool path_style = true;
  S3Auth auth = S3Auth::kSigV4;
  // kSigV4: `credential` when set, else `credentials`. kBearer:
  // `credential`'s bearer token. Asked per request with AwaitGet(): a fetch
  // then due (GCS: the first token, or a refresh the background thread has
  // not made in time) runs on the credential's refresher thread while the
  // request's coroutine waits; the store's executor never blocks on it.
  SigV4Credentials credentials;
  std::shared_ptr<SharedCredential> credential;
  std::string unsigned_reason;  // kNone: why (a switch, or no source applied)
  SigV4Config sigv4 = S3SigV4Config("us-east-1");
  HttpHeaders extra_headers;  // sent (and signed) on every request
  // The endpoint is AWS's s3.<region>.amazonaws.com: when S3 says the
  // bucket lives in another region, requests go to that region's endpoint.
  bool regional_aws_endpoint = false;
};

// Opens a store over an explicit configuration (tests, gs://).
Result<std::unique_ptr<Store>> OpenS3CompatibleStore(S3StoreConfig config,
                                                     boost::asio::any_io_executor executor,
                                                     const StoreOptions& options);

// s3://bucket[/prefix], configured from the environment (above). Runs the
// credential chain's first fetch (blocking) unless this process already did.
// Errors: kInvalidArgument for a malformed URL or endpoint; the chain's error
// when a credential source applies but fails (it names every source tried).
Result<std::unique_ptr<Store>> OpenS3Store(std::string_view url,
                                           boost::asio::any_io_executor executor,
                                           const StoreOptions& options);

// What `sluice whoami` prints for s3://bucket[/prefix]: region, endpoint,
// and either the credential source requests would be signed with (the
// access key id masked to its last 4 characters, never a secret) and the
// sources tried, or why requests go unsigned. Runs the chain as OpenS3Store
// does (blocking). Errors as OpenS3Store.
Result<std::string> DescribeS3Auth(std::string_view url);

// oci://bucket[/prefix]. Errors as OpenS3Store, plus kInvalidArgument naming
// OCI_NAMESPACE / OCI_REGION when unset.
Result<std::unique_ptr<Store>> OpenOciStore(std::string_view url,
                                            boost::asio::any_io_executor executor,
                                            const StoreOptions& options);

}  // namespace sluice
