// gs://bucket/prefix through GCS's XML API (S3-compatible requests, see
// stores/s3/s3_store.h), path style.
//
// Environment:
//   GCS_KEY and GCS_SECRET (Mosaic's names): an HMAC key pair; requests are
//     signed GOOG4-HMAC-SHA256 (region "auto", service "storage");
//   else GOOGLE_APPLICATION_CREDENTIALS: a service-account key file; requests
//     carry an OAuth2 bearer token (stores/credentials/gcs_service_account.h);
//   else, on Google Compute Engine or GKE or with GCE_METADATA_HOST set, a
//     bearer token from the metadata server (gcs_metadata_server.h).
//   Tokens are shared by every gs:// store of the process with the same key
//   or server, fetched for the first request (off the store's executor, by
//   the token's refresher thread), refreshed ahead of expiry
//   (stores/credentials/gcs_credential.h);
//   GCS_ENDPOINT_URL: overrides https://storage.googleapis.com (tests,
//     emulators, private endpoints).
// None of these -> kPermissionDenied naming the variables. Mosaic stops at
// the first two; the metadata server is what Google's own clients use next.
#pragma once

#include <memory>
#include <string_view>

#include <boost/asio/any_io_executor.hpp>

#include "base/status.h"
#include "stores/store.h"

namespace sluice {

Result<std::unique_ptr<Store>> OpenGcsStore(std::string_view url,
                                            boost::asio::any_io_executor executor,
                                            const StoreOptions& options);

}  // namespace sluice
