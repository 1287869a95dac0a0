// OCI resource principals (OCI Functions, Data Science jobs and notebooks)
// as the OCI SDK's get_resource_principals_signer() reads them, version 2.2:
//   OCI_RESOURCE_PRINCIPAL_VERSION         "2.2" (other versions refused by name)
//   OCI_RESOURCE_PRINCIPAL_RPST            the resource principal session token
//   OCI_RESOURCE_PRINCIPAL_PRIVATE_PEM     its private key (PEM)
//   OCI_RESOURCE_PRINCIPAL_PRIVATE_PEM_PASSPHRASE  optional
//   OCI_RESOURCE_PRINCIPAL_REGION          the region
// As the SDK decides: a value that is an absolute path names the file that
// holds it (the platform rewrites those files), anything else is the value
// itself; the passphrase is a file only when the key is one. Requests are
// signed with key id "ST$<rpst>" and that key; files are read again at every
// request, so a token the platform replaced reaches a running job.
// Thread-safe as long as nobody changes the environment meanwhile. The token,
// key and passphrase are secrets: errors name the variables and files only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "stores/signing/oci_signature.h"

namespace sluice {

struct OciResourcePrincipal {
  std::string rpst;        // the token, or the absolute path of its file (secret)
  std::string private_pem; // the PEM, or the absolute path of its file (secret)
  std::string passphrase;  // "", the passphrase, or (key in a file) its file (secret)
  std::string region;
};

// True when OCI_RESOURCE_PRINCIPAL_VERSION is set (to anything).
bool OciResourcePrincipalConfigured();

// Reads the environment. Errors: kNotFound when OCI_RESOURCE_PRINCIPAL_VERSION
// is unset; kInvalidArgument for an unsupported version or a missing
// variable (named).
Result<OciResourcePrincipal> LoadOciResourcePrincipal();

// The key to sign the next request with (files read now). Errors:
// kPermissionDenied naming an unreadable or empty file, or an RPST whose
// JWT "exp" is past (with the time).
Result<OciApiKey> OciResourcePrincipalKey(const OciResourcePrincipal& rp);

// For messages, never a secret: "resource principal (OCI_RESOURCE_PRINCIPAL_VERSION
// 2.2, RPST from <file> | from the environment, ...)".
std::string DescribeOciResourcePrincipal(const OciResourcePrincipal& rp);

// The "exp" claim (unix seconds) of a JWT, nullopt when `token` is not one
// (the service then judges it). Session tokens and RPSTs both carry one.
std::optional<int64_t> OciJwtExpiry(std::string_view token);

}  // namespace sluice
