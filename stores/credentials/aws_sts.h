// AWS STS, the two calls credential sources make: AssumeRole (a SigV4-signed
// POST form) and AssumeRoleWithWebIdentity (unsigned; the web identity token
// is the proof). Blocking (see blocking_http.h); thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/status.h"
#include "stores/credentials/credential.h"
#include "stores/http/url.h"
#include "stores/signing/sigv4.h"

namespace sluice {

struct StsRoleRequest {
  Url endpoint;
  std::string region;  // for signing AssumeRole (StsEndpoint::signing_region)
  std::string role_arn;
  std::string session_name;
  std::string external_id;  // AssumeRole only; "" = none
  std::optional<int64_t> duration_seconds;
  std::string source;  // names the caller in errors, e.g. "profile 'dev' (role_arn)"
};

// AssumeRole signed with `signer` at unix time `now`.
Result<Credential> StsAssumeRole(const StsRoleRequest& request, const SigV4Credentials& signer,
                                 int64_t now);

// AssumeRoleWithWebIdentity with `web_identity_token` (a secret).
Result<Credential> StsAssumeRoleWithWebIdentity(const StsRoleRequest& request,
                                                const std::string& web_identity_token);

}  // namespace sluice
