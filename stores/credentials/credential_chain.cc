#include "stores/credentials/credential_chain.h"

namespace sluice {

CredentialChain::CredentialChain(std::string what,
                                 std::vector<std::unique_ptr<CredentialSource>> sources)
    : what_(std::move(what)), sources_(std::move(sources)) {}

std::string CredentialChain::DescribeAttempts() const {
  std::string out;
  for (const CredentialAttempt& a : attempts_) {
    if (!out.empty()) out += ", ";
    out += a.source + " (" + (a.outcome.ok() ? "used" : a.outcome.message()) + ")";
  }
  return out;
}

Result<Credential> CredentialChain::Fetch(int64_t now) {
  attempts_.clear();
  for (const auto& source : sources_) {
    std::string before = DescribeAttempts();
    Result<Credential> got = source->Fetch(now);
    attempts_.push_back({source->name(), got.status()});
    if (got.ok()) {
      if (got->source.empty()) got->source = source->name();
      return got;
    }
    if (!IsNotFound(got.status())) {
      return Status(got.status().code(),
                    source->name() + ": " + got.status().message() +
                        (before.empty() ? "" : " (tried before: " + before + ")"));
    }
  }
  return NotFoundError("no " + what_ + " found; tried: " + DescribeAttempts());
}

}  // namespace sluice
