#include "stores/credentials/azure_credential.h"

#include <vector>

#include "stores/signing/digest.h"

namespace sluice {
namespace {

// A secret the settings already hold (`value`, from variable `from`), put
// into the Credential member `field`.
class AzureStaticSource final : public CredentialSource {
 public:
  AzureStaticSource(std::string name, std::string Credential::*field, std::string value,
                    std::string from)
      : name_(std::move(name)), field_(field), value_(std::move(value)), from_(std::move(from)) {}
  std::string name() const override { return name_; }
  Result<Credential> Fetch(int64_t /*now*/) override {
    if (value_.empty()) return NotFoundError("no " + name_ + " set");
    Credential c;
    c.source = name_ + " (" + from_ + ")";
    c.*field_ = value_;
    return c;
  }

 private:
  std::string name_;
  std::string Credential::*field_;
  std::string value_;  // a secret
  std::string from_;
};

}  // namespace

std::unique_ptr<CredentialChain> MakeAzureCredentialChain(const AzureSettings& settings) {
  std::vector<std::unique_ptr<CredentialSource>> sources;
  sources.push_back(std::make_unique<AzureStaticSource>("account key", &Credential::account_key,
                                                        settings.account_key, settings.key_from));
  sources.push_back(std::make_unique<AzureStaticSource>("SAS token", &Credential::sas_token,
                                                        settings.sas_token, settings.sas_from));
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
