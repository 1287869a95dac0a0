// gs://bucket/prefix through GCS's XML API (S3-compatible requests, see
// stores/s3/s3_store.h), path style.
//
// Environment:
//   GCS_KEY and GCS_SECRET (Mosaic's names): an HMAC key pair; requests are
//     signed GOOG4-HMAC-SHA256 (region "auto", service "storage"); they win
//     over everything below;
//   else Application Default Credentials as google-auth finds them
//     (stores/credentials/gcs_adc.h: GOOGLE_APPLICATION_CREDENTIALS, gcloud's
//     file, the metadata server): requests carry an OAuth2 bearer token,
//     shared by every gs:// store of the process with the same environment
//     and files, fetched for the first request (off the store's executor,
//     by the token's refresher thread), refreshed ahead of expiry
//     (stores/credentials/gcs_credential.h);
//   else requests go unsigned (public buckets), as google-cloud-storage's
//     anonymous client;
//   GCS_ENDPOINT_URL: overrides https://storage.googleapis.com (tests,
//     emulators, private endpoints).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <boost/asio/any_io_executor.hpp>

#include "base/status.h"
#include "stores/store.h"

namespace sluice {

Result<std::unique_ptr<Store>> OpenGcsStore(std::string_view url,
                                            boost::asio::any_io_executor executor,
                                            const StoreOptions& options);

// What `sluice whoami` prints for gs://bucket[/prefix]: the endpoint and the
// HMAC key (id masked to its last 4 characters), the ADC source whose token
// requests carry with the sources tried, or why requests go unsigned. Fetches
// the token (blocking). Never a secret.
Result<std::string> DescribeGcsAuth(std::string_view url);

}  // namespace sluice
