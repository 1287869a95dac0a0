#include "stores/credentials/gcs_credential.h"

#include <vector>

#include "stores/credentials/gcs_metadata_server.h"
#include "stores/signing/digest.h"

namespace sluice {
namespace {

std::unique_ptr<CredentialChain> ChainOf(std::unique_ptr<CredentialSource> source) {
  std::vector<std::unique_ptr<CredentialSource>> sources;
  sources.push_back(std::move(source));
  return std::make_unique<CredentialChain>("GCS credentials", std::move(sources));
}

}  // namespace

SharedCredentialOptions GcsTokenOptions() {
  SharedCredentialOptions o;
  o.min_validity_s = 60;
  o.retry_first_fetch = true;
  return o;
}

std::unique_ptr<CredentialChain> MakeGcsServiceAccountChain(ServiceAccountKey key) {
  return ChainOf(MakeGcsServiceAccountSource(std::move(key)));
}

std::unique_ptr<CredentialChain> MakeGcsMetadataServerChain(std::string host) {
  return ChainOf(MakeGcsMetadataServerSource(std::move(host)));
}

std::shared_ptr<SharedCredential> GcsServiceAccountCredential(const ServiceAccountKey& key) {
  // Hashed: the key is a secret. The path is part of it, so that errors
  // name the file each store was configured with.
  std::string material = "gcs service account\n" + key.path + "\n" + key.client_email + "\n" +
                         key.private_key_id + "\n" + key.token_uri + "\n" + key.private_key_pem;
  return SharedCredentialFor(Sha256Hex(material), [&] {
    return std::make_shared<SharedCredential>(MakeGcsServiceAccountChain(key), GcsTokenOptions());
  });
}

std::shared_ptr<SharedCredential> GcsMetadataServerCredential(const std::string& host) {
  return SharedCredentialFor(Sha256Hex("gcs metadata server\n" + host), [&] {
    return std::make_shared<SharedCredential>(MakeGcsMetadataServerChain(host), GcsTokenOptions());
  });
}

}  // namespace sluice
