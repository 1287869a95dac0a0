// Google's Application Default Credentials for gs:// in google-auth's order
// (google.auth.default()):
//   1. GOOGLE_APPLICATION_CREDENTIALS: a credentials file;
//   2. gcloud's file: $CLOUDSDK_CONFIG/application_default_credentials.json
//      (default ~/.config/gcloud/), written by
//      `gcloud auth application-default login`;
//   3. the metadata server (gcs_metadata_server.h): on Compute Engine and
//      GKE (Workload Identity), or wherever GCE_METADATA_HOST points.
// A credentials file is read at every fetch and has a "type":
// service_account (gcs_service_account.h), authorized_user,
// impersonated_service_account (gcs_token_flows.h) or external_account
// (gcs_external_account.h); each yields an OAuth2 bearer token for the
// read-write storage scope. When none of the three applies the chain's
// error is kNotFound and gs:// reads go unsigned (public buckets; see
// anonymous_access.h). HMAC keys (GCS_KEY, GCS_SECRET) are the store's
// business and win over all of this (stores/gcs/gcs_store.h).
//
// Every endpoint comes from the file (token_uri, token_url, credential
// source URLs, service_account_impersonation_url) or GCE_METADATA_HOST, so
// tests point them at loopback fakes. Errors name each source tried and why
// it did not apply, never a secret.
#pragma once

#include <memory>
#include <string>

#include "stores/credentials/credential_chain.h"
#include "stores/credentials/gcs_metadata_server.h"
#include "stores/credentials/gcs_service_account.h"
#include "stores/credentials/shared_credential.h"

namespace sluice {

struct GcsAdcOptions {
  // Where Compute Engine is recognized (see MetadataServerHost).
  std::string product_name_file = std::string(kGceProductNameFile);
  // What a credentials file's token is asked for (the metadata server's
  // comes with the instance's scopes): gs://'s storage scope, or IAM's for
  // a source of impersonation (databricks_google.h's google-id).
  std::string scope = std::string(kGcsScope);
};

// gcloud's ADC file path: $CLOUDSDK_CONFIG/application_default_credentials.json,
// else $HOME/.config/gcloud/application_default_credentials.json; "" when
// neither variable is set.
std::string GcloudAdcPath();

// A token for `scope` (user credentials: none, as google-auth) from the
// credentials file `json` read from `path`, by its "type". kInvalidArgument naming the file for an unknown type or a
// missing field (a type that is not a plain word is not quoted).
Result<Credential> FetchGcsFileCredential(std::string_view json, const std::string& path,
                                          int64_t now, std::string_view scope = kGcsScope);

// "" when one of the three sources applies (a file is named or exists, or a
// metadata server is expected), else the chain's kNotFound text ("no GCS
// credentials found; tried: ..."), without fetching anything: a store
// decides at open whether to go unsigned, and fetches its first token at
// its first request.
std::string GcsAdcAbsence(const GcsAdcOptions& options = {});

// A new chain of the three sources above.
std::unique_ptr<CredentialChain> MakeGcsAdcChain(const GcsAdcOptions& options = {});

// The process-wide shared token for the current environment and files
// (every gs:// store opened with the same ones shares it; GcsTokenOptions()).
// Nothing is fetched here. Thread-safe.
std::shared_ptr<SharedCredential> GcsAdcCredential(const GcsAdcOptions& options = {});

}  // namespace sluice
