#include "stores/credentials/azure_credential.h"

#include <algorithm>
#include <vector>

#include "base/iso8601.h"
#include "stores/common/store_keys.h"
#include "stores/signing/digest.h"
#include "stores/signing/uri_encoding.h"

extern char** environ;

namespace sluice {
namespace {

class AzureAccountKeySource final : public CredentialSource {
 public:
  AzureAccountKeySource(std::string key, std::string from)
      : key_(std::move(key)), from_(std::move(from)) {}
  std::string name() const override { return "account key"; }
  Result<Credential> Fetch(int64_t /*now*/) override {
    if (key_.empty()) return NotFoundError("no account key set");
    Credential c;
    c.source = "account key (" + from_ + ")";
    c.account_key = key_;
    return c;
  }

 private:
  std::string key_;  // a secret
  std::string from_;
};

// The SAS token's signed expiry (`se`, ISO 8601, percent-encoded or not;
// a date alone means its midnight UTC); nullopt when absent or unreadable.
std::optional<int64_t> SasExpiry(std::string_view sas) {
  for (const std::string& pair : SplitAny(sas, "&")) {
    if (pair.rfind("se=", 0) != 0) continue;
    auto text = StrictPercentDecode(pair.substr(3));
    if (!text.ok()) return std::nullopt;
    if (text->size() == 10) *text += "T00:00:00Z";
    auto t = ParseIso8601(*text);
    if (t.ok()) return *t;
    return std::nullopt;
  }
  return std::nullopt;
}

class AzureSasSource final : public CredentialSource {
 public:
  AzureSasSource(std::string sas, std::string from) : sas_(std::move(sas)), from_(std::move(from)) {}
  std::string name() const override { return "SAS token"; }
  Result<Credential> Fetch(int64_t now) override {
    std::string sas = sas_;
    if (from_ == "AZURE_STORAGE_SAS_TOKEN") {
      // Read again: whoever rotates the token rotates the variable.
      sas = GetEnv("AZURE_STORAGE_SAS_TOKEN").value_or("");
      if (!sas.empty() && sas.front() == '?') sas.erase(0, 1);
    }
    if (sas.empty()) return NotFoundError("no SAS token set");
    Credential c;
    c.source = "SAS token (" + from_ + ")";
    c.expires_at = SasExpiry(sas);
    if (c.expires_at && *c.expires_at <= now) {
      return PermissionDeniedError("the SAS token in " + from_ + " expired at " +
                                   std::to_string(*c.expires_at) + " (unix time, its 'se')");
    }
    c.sas_token = std::move(sas);
    return c;
  }

 private:
  std::string sas_;  // a secret
  std::string from_;
};

}  // namespace

std::unique_ptr<CredentialChain> MakeAzureCredentialChain(const AzureSettings& settings,
                                                          const AzureEndpointOptions& endpoints) {
  std::vector<std::unique_ptr<CredentialSource>> sources;
  sources.push_back(std::make_unique<AzureAccountKeySource>(settings.account_key, settings.key_from));
  sources.push_back(std::make_unique<AzureSasSource>(settings.sas_token, settings.sas_from));
  sources.push_back(MakeAzureEnvironmentSource());
  sources.push_back(MakeAzureWorkloadIdentitySource());
  sources.push_back(MakeAzureManagedIdentitySource(endpoints));
  sources.push_back(MakeAzureCliSource());
  sources.push_back(MakeAzurePowerShellSource());
  sources.push_back(MakeAzureDeveloperCliSource());
  return std::make_unique<CredentialChain>("Azure credentials", std::move(sources));
}

std::shared_ptr<SharedCredential> AzureSharedCredential(const AzureSettings& settings,
                                                        const AzureEndpointOptions& endpoints) {
  std::vector<std::string> vars;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view v(*e);
    if (v.rfind("AZURE_", 0) == 0 || v.rfind("IDENTITY_", 0) == 0 || v.rfind("MSI_", 0) == 0 ||
        v.rfind("IMDS_", 0) == 0 || v.rfind("SLUICE_AZURE_", 0) == 0 || v.rfind("PATH=", 0) == 0) {
      vars.emplace_back(v);
    }
  }
  std::sort(vars.begin(), vars.end());
  // Hashed: the inputs hold secrets.
  std::string material = "azure\n" + settings.account + "\n" + settings.endpoint + "\n" +
                         settings.key_from + "\n" + settings.account_key + "\n" +
                         settings.sas_from + "\n" + settings.sas_token + "\n" +
                         endpoints.dmi_dir + "\n" + endpoints.imds_endpoint + "\n";
  for (const std::string& v : vars) material += v + "\n";
  return SharedCredentialFor(Sha256Hex(material), [&] {
    SharedCredentialOptions options;
    options.min_validity_s = 60;  // a bearer token must outlast the request
    return std::make_shared<SharedCredential>(MakeAzureCredentialChain(settings, endpoints),
                                              options);
  });
}

}  // namespace sluice
