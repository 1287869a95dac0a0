// GCS's OAuth2 bearer tokens (a service-account key or the metadata server)
// as SharedCredentials: one token per process for every gs:// store with the
// same key or server, refreshed ahead of expiry by the shared refresher.
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
#include <string>

#include "stores/credentials/credential_chain.h"
#include "stores/credentials/gcs_service_account.h"
#include "stores/credentials/shared_credential.h"

namespace sluice {

// The refresh rules above, for a SharedCredential over a GCS chain.
SharedCredentialOptions GcsTokenOptions();

// A chain of the one source that applies: the key's, or the server's.
std::unique_ptr<CredentialChain> MakeGcsServiceAccountChain(ServiceAccountKey key);
std::unique_ptr<CredentialChain> MakeGcsMetadataServerChain(std::string host);

// The process-wide shared token for `key` (or the server at `host`): the
// live one while any store holds it, else a new one (GcsTokenOptions()).
// Nothing is fetched here.
std::shared_ptr<SharedCredential> GcsServiceAccountCredential(const ServiceAccountKey& key);
std::shared_ptr<SharedCredential> GcsMetadataServerCredential(const std::string& host);

}  // namespace sluice
