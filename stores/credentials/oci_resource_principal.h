// OCI resource principals (OCI Functions, Data Science jobs and notebooks)
// as the OCI SDK's get_resource_principals_signer() reads them, version 2.2
// (the versions that buy their token are oci_resource_principal_exchange.h's):
//   OCI_RESOURCE_PRINCIPAL_VERSION         "2.2" (unknown versions refused by name)
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
  // "" or, for the leaf of a version 3.0 (oci_resource_principal_exchange.h),
  // "_FOR_LEAF_RESOURCE": what the variables' names end with.
  std::string suffix;
};

// True when OCI_RESOURCE_PRINCIPAL_VERSION is set (to anything).
bool OciResourcePrincipalConfigured();

// Reads the environment. Errors: kNotFound when OCI_RESOURCE_PRINCIPAL_VERSION
// is unset; kInvalidArgument for a version other than 2.2 (naming the
// supported ones) or a missing variable (named).
Result<OciResourcePrincipal> LoadOciResourcePrincipal();

// The version 2.2 variables ending in `suffix` ("" or "_FOR_LEAF_RESOURCE"),
// whatever OCI_RESOURCE_PRINCIPAL_VERSION says. Errors: as above.
Result<OciResourcePrincipal> LoadOciResourcePrincipalV22(const std::string& suffix);

// The key to sign the next request with (files read now). Errors:
// kPermissionDenied naming an unreadable or empty file, or an RPST whose
// JWT "exp" is past (with the time).
Result<OciApiKey> OciResourcePrincipalKey(const OciResourcePrincipal& rp);

// A resource principal's own key as OCI_RESOURCE_PRINCIPAL_PRIVATE_PEM<suffix>
// and its _PASSPHRASE give them (each the value, or an absolute path of the
// file holding it; the passphrase a file only when the key is one), read
// now; key_id left empty. Errors as OciResourcePrincipalKey's.
Result<OciApiKey> OciResourcePrincipalOwnKey(const std::string& private_pem,
                                             const std::string& passphrase,
                                             const std::string& suffix);

// For messages, never a secret: "resource principal (OCI_RESOURCE_PRINCIPAL_VERSION
// 2.2, RPST from <file> | from the environment, ...)".
std::string DescribeOciResourcePrincipal(const OciResourcePrincipal& rp);

}  // namespace sluice
