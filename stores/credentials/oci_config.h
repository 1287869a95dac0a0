// An OCI API key as the OCI SDK's oci.config.from_file() finds it:
//   the file: ~/.oci/config when it exists, else OCI_CONFIG_FILE, else
//     ~/.oraclebmc/config;
//   the profile: OCI_CLI_PROFILE, else DEFAULT; a profile inherits the
//     DEFAULT section's keys (configparser);
//   keys: user, tenancy, fingerprint, key_file (a leading "~/" is the home
//     folder), pass_phrase, region (else OCI_REGION; a short code such as
//     "phx" stands for its region: oci_regions.h), security_token_file.
//   how it signs: with its API key (key id "<tenancy>/<user>/<fingerprint>"),
//     or with the session token `oci session authenticate` wrote to
//     security_token_file (key id "ST$<token>", signed by key_file; no user
//     needed). OCI_CLI_AUTH=api_key or security_token chooses, as the OCI
//     CLI's --auth; unset, a profile with a security_token_file and no user
//     signs with its token.
// With no config file (and OCI_CLI_AUTH unset), or OCI_CLI_AUTH=
// resource_principal: the resource principal of the environment
// (stores/credentials/oci_resource_principal.h for version 2.2,
// oci_resource_principal_exchange.h for the versions that buy their token).
// OCI_CLI_AUTH=
// instance_principal: the instance principal (oci_instance_principal.h),
// never tried unasked. Other OCI_CLI_AUTH values are refused by name.
// Reads the environment and files; thread-safe as long as nobody changes the
// environment meanwhile. The key and its passphrase are secrets.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "stores/credentials/oci_resource_principal.h"
#include "stores/credentials/shared_credential.h"
#include "stores/signing/oci_signature.h"

namespace sluice {

struct OciProfile {
  std::string config_file;  // the file read
  std::string profile;      // the profile used
  std::string region;
  std::string tenancy;
  std::string user;
  std::string fingerprint;
  std::string key_file;
  // The session token's file, "" when the profile signs with its API key.
  std::string security_token_file;
  // key_id "<tenancy>/<user>/<fingerprint>" (empty for a session token: see
  // OciRequestKey), the PEM and passphrase.
  OciApiKey key;
  // Set when the profile is a resource principal (no config file involved:
  // config_file, profile and key are empty); see oci_resource_principal.h.
  std::optional<OciResourcePrincipal> resource_principal;
  // Set for an instance principal (OCI_CLI_AUTH=instance_principal; see
  // oci_instance_principal.h) and a resource principal that buys its token
  // (resource_principal_version set; oci_resource_principal_exchange.h):
  // the refreshing token and session key.
  std::shared_ptr<SharedCredential> session_credential;
  std::string resource_principal_version;  // of session_credential; "" for an instance principal
  std::string metadata_endpoint;    // an instance principal's
  std::string federation_endpoint;  // an instance principal's
};

// The config file's path by the rules above ("" when HOME is unset and
// OCI_CONFIG_FILE too), and whether it exists.
std::string OciConfigPath();

// Errors: kNotFound when neither the file nor a resource principal exists
// (naming both); kInvalidArgument for a
// missing profile ("Profile 'X' not found in config file F"), missing keys
// (named), an unreadable key file (named, never its content).
Result<OciProfile> LoadOciProfile();

// The key to sign the next request with: the profile's API key, or for a
// session token the key with key_id "ST$<token>", the token read from its
// file at every call (`oci session refresh` rewrites the file while a job
// runs). The token is a secret. Errors: the file unreadable or empty
// (kPermissionDenied naming the file); a token whose JWT "exp" is past
// (kPermissionDenied naming the profile, the time and the refresh command).
// An instance or token-buying resource principal's key: Get() of its shared credential, blocking on
// the first fetch or a due refresh (callers on an event loop use
// OciSessionKey with AwaitGet() instead).
Result<OciApiKey> OciRequestKey(const OciProfile& profile);

// The key of an OCI security-token credential: key id "ST$<bearer>", the
// session key.
OciApiKey OciSessionKey(const Credential& credential);

// The detail of an OCI error answer ({"code": ..., "message": ...}) for
// HttpClientOptions::error_detail: "code: message", the message cut at
// 200 characters; "" when the body is not such JSON.
std::string OciErrorDetail(std::string_view body);

// For messages: how the profile signs ("API key ... (key id ...)" or
// "session token ... (security_token_file ...)"), never a secret.
std::string DescribeOciSigner(const OciProfile& profile);

}  // namespace sluice
