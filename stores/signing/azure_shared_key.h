// Azure Storage "SharedKey" request signing for the Blob service, as
// specified for x-ms-version 2015-02-21 and later ("Authorize with Shared
// Key"). Pure functions; thread-safe. The account key and the signature never
// appear in an error message.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "stores/signing/signing_request.h"

namespace sluice {

struct AzureSharedKeySignature {
  std::string string_to_sign;
  std::string signature;      // base64 HMAC-SHA256; a secret of the request
  std::string authorization;  // "SharedKey <account>:<signature>"
};

// Signs `request` with the account's base64 `account_key`.
//
// The canonicalized resource is "/" + account_name + request.path, where
// `path` is the path as sent: against Azurite in path style the path already
// starts with the account ("/devstoreaccount1/container/blob"), so the
// resource holds the account twice, as Azurite expects. Query parameters are
// added per the spec (lower-case names, sorted, values sorted and joined with
// ','). The request must carry x-ms-date or Date, and no Authorization.
// The caller adds the Authorization header to the request it sends.
Result<AzureSharedKeySignature> SignAzureSharedKey(const SigningRequest& request,
                                                   std::string_view account_name,
                                                   std::string_view account_key);

}  // namespace sluice
