// How GCS's OAuth2 bearer tokens are shared and refreshed: one
// SharedCredential per process for every gs:// store with the same
// Application Default Credentials (gcs_adc.h), refreshed ahead of expiry by
// the shared refresher.
//
// A token is never handed out within a minute of its expiry (a request must
// not outlive its token), nor within the second half of its life when it
// lives less than two minutes: a refresh is due first. A failed first fetch
// is tried again by a later request after the backoff, since GCS stores
// fetch their first token at their first request (AwaitGet(), on the
// refresher thread), not at open.
//
// Thread safety: every function is thread-safe.
#pragma once

#include <memory>

#include "stores/credentials/credential_chain.h"
#include "stores/credentials/gcs_service_account.h"
#include "stores/credentials/shared_credential.h"

namespace sluice {

// The refresh rules above, for a SharedCredential over a GCS chain.
SharedCredentialOptions GcsTokenOptions();

// A chain of the one source of `key` (tests of the service-account flow).
std::unique_ptr<CredentialChain> MakeGcsServiceAccountChain(ServiceAccountKey key);

}  // namespace sluice
