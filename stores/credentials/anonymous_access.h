// Whether a store signs its requests or sends them unsigned (public
// buckets and containers), decided the same way for every store:
//   - unsigned when the user asks (a store's switch variables, e.g.
//     S3_UNSIGNED or AWS_NO_SIGN_REQUEST);
//   - else signed with the credential the chain finds;
//   - else, when no source of the chain applies at all (kNotFound),
//     unsigned, as Mosaic does with boto3 for public data; a source that
//     applies but fails is an error, not a reason to go unsigned.
// Reads the environment: thread-safe as long as nobody changes it meanwhile.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "stores/credentials/shared_credential.h"

namespace sluice {

struct RequestAuth {
  std::shared_ptr<SharedCredential> credential;  // null: unsigned
  // Why requests go unsigned ("S3_UNSIGNED is set", "no AWS credentials
  // found; tried: ..."); "" when signed.
  std::string unsigned_reason;
};

// True for "1", "true", "yes", "on" (any case).
bool EnvFlag(const char* name);

// Decides as above. `unsigned_switches` are variable names read with
// EnvFlag; `credential` is asked (its first Get() may block) only when no
// switch is set. Errors: the credential's first fetch error other than
// kNotFound.
Result<RequestAuth> ChooseRequestAuth(const std::vector<const char*>& unsigned_switches,
                                      std::shared_ptr<SharedCredential> credential);

}  // namespace sluice
