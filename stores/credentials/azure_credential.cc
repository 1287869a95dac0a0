#include "stores/credentials/azure_credential.h"

#include <vector>

#include "stores/signing/digest.h"

namespace sluice {
namespace {

class AzureAccountKeySource final : public CredentialSource {
 public:
  explicit AzureAccountKeySource(AzureSettings settings) : s_(std::move(settings)) {}
  std::string name() const override { return "account key"; }
  Result<Credential> Fetch(int64_t /*now*/) override {
    if (s_.account_key.empty()) return NotFoundError("no account key set");
    Credential c;
    c.source = "account key (" + s_.key_from + ")";
    c.account_key = s_.account_key;
    return c;
  }

 private:
  AzureSettings s_;
};

class AzureSasSource final : public CredentialSource {
 public:
  explicit AzureSasSource(AzureSettings settings) : s_(std::move(settings)) {}
  std::string name() const override { return "SAS token"; }
  Result<Credential> Fetch(int64_t /*now*/) override {
    if (s_.sas_token.empty()) return NotFoundError("no SAS token set");
    Credential c;
    c.source = "SAS token (" + s_.sas_from + ")";
    c.sas_token = s_.sas_token;
    return c;
  }

 private:
  AzureSettings s_;
};

}  // namespace

std::unique_ptr<CredentialChain> MakeAzureCredentialChain(const AzureSettings& settings) {
  std::vector<std::unique_ptr<CredentialSource>> sources;
  sources.push_back(std::make_unique<AzureAccountKeySource>(settings));
  sources.push_back(std::make_unique<AzureSasSource>(settings));
  return std::make_unique<CredentialChain>("Azure credentials", std::move(sources));
}

std::shared_ptr<SharedCredential> AzureSharedCredential(const AzureSettings& settings) {
  // Hashed: the inputs hold secrets.
  std::string material = "azure\n" + settings.account + "\n" + settings.endpoint + "\n" +
                         settings.key_from + "\n" + settings.account_key + "\n" +
                         settings.sas_from + "\n" + settings.sas_token;
  return SharedCredentialFor(Sha256Hex(material), [&] {
    return std::make_shared<SharedCredential>(MakeAzureCredentialChain(settings));
  });
}

}  // namespace sluice
