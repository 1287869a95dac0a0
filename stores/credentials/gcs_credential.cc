#include "stores/credentials/gcs_credential.h"

#include <vector>

namespace sluice {

SharedCredentialOptions GcsTokenOptions() {
  SharedCredentialOptions o;
  o.min_validity_s = 60;
  o.retry_first_fetch = true;
  return o;
}

std::unique_ptr<CredentialChain> MakeGcsServiceAccountChain(ServiceAccountKey key) {
  std::vector<std::unique_ptr<CredentialSource>> sources;
  sources.push_back(MakeGcsServiceAccountSource(std::move(key)));
  return std::make_unique<CredentialChain>("GCS credentials", std::move(sources));
}

}  // namespace sluice
