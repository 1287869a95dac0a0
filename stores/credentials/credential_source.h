// One place a credential may come from (environment variables, a profile
// file, a metadata endpoint, a token exchange): the unit a CredentialChain
// tries in order. Sources for every cloud implement this interface.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "stores/credentials/credential.h"

namespace sluice {

class CredentialSource {
 public:
  virtual ~CredentialSource() = default;

  // A short name for error text and `sluice whoami`, e.g. "environment",
  // "web identity". No secret. Stable for the source's lifetime.
  virtual std::string name() const = 0;

  // A fresh credential. kNotFound means "does not apply here" (its message
  // says why, e.g. "AWS_ROLE_ARN not set") and lets the chain go on; any
  // other error means the source applies but failed, and stops the chain.
  // `now` is unix seconds (from the caller's clock), for expiries given as
  // durations. May block (files, processes, HTTP on a private event loop);
  // never called on a store's executor. Called from one thread at a time.
  // Messages never hold a secret.
  virtual Result<Credential> Fetch(int64_t now) = 0;
};

}  // namespace sluice
