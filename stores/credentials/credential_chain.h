// Tries credential sources in a fixed order and returns the first
// credential found, remembering for each source tried why it did not apply
// or how it failed, so that an error (or `sluice whoami`) can tell the
// whole story without a secret.
//
// Thread safety: Fetch() may be called from one thread at a time (the
// sources are not locked); attempts() reads what the last Fetch() recorded.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "stores/credentials/credential_source.h"

namespace sluice {

// What happened when one source was tried.
struct CredentialAttempt {
  std::string source;  // CredentialSource::name()
  Status outcome;      // OK: it gave the credential; kNotFound: did not apply
};

class CredentialChain {
 public:
  // `what` names the credential for error text, e.g. "AWS credentials".
  CredentialChain(std::string what, std::vector<std::unique_ptr<CredentialSource>> sources);

  // The credential of the first source that applies. Errors:
  //   kNotFound "no <what> found; tried: a (why), b (why), ..." when none applies;
  //   the failing source's code, "<source>: <message> (tried before: ...)"
  //   when one applies but fails (later sources are not tried, as the AWS
  //   SDKs do: a broken configuration is reported, not skipped).
  Result<Credential> Fetch(int64_t now);

  // Each source tried by the last Fetch(), in order.
  const std::vector<CredentialAttempt>& attempts() const { return attempts_; }

  // "a (why), b (why)": the attempts of the last Fetch() as one line.
  std::string DescribeAttempts() const;

  const std::string& what() const { return what_; }

 private:
  std::string what_;
  std::vector<std::unique_ptr<CredentialSource>> sources_;
  std::vector<CredentialAttempt> attempts_;
};

}  // namespace sluice
