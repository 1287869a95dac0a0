// The documents AWS credential endpoints answer with, parsed into a
// Credential: the JSON of credential_process (Version 1), of the container
// endpoint and of EC2 instance metadata, and the XML of STS. Pure functions;
// thread-safe. Errors are kPermissionDenied naming `source` (no secret, no
// value from the document beyond its field names and error code).
#pragma once

#include <cstdint>
#include <string_view>

#include "base/status.h"
#include "stores/credentials/credential.h"

namespace sluice {

enum class AwsCredentialJson {
  kProcess,   // {"Version": 1, "AccessKeyId", "SecretAccessKey", "SessionToken"?, "Expiration"?}
  kEndpoint,  // container / IMDS: {"AccessKeyId", "SecretAccessKey", "Token", "Expiration",
              // "Code"?}
};

// Parses `body` into a Credential whose source is `source`. An "Expiration"
// present must parse; IMDS's "Code" other than "Success" is an error.
Result<Credential> ParseAwsCredentialJson(std::string_view body, AwsCredentialJson kind,
                                          std::string_view source);

// STS's answer to `action` (AssumeRole, AssumeRoleWithWebIdentity):
// <ActionResponse><ActionResult><Credentials>AccessKeyId, SecretAccessKey,
// SessionToken, Expiration</Credentials>...
Result<Credential> ParseStsCredentialsXml(std::string_view body, std::string_view action,
                                          std::string_view source);

}  // namespace sluice
