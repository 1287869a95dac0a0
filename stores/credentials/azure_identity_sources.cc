// The service-principal sources: environment (secret or certificate) and
// workload identity (a federated token as the client assertion).
#include "stores/credentials/azure_identity_sources.h"

#include "base/file.h"
#include "stores/common/store_keys.h"
#include "stores/credentials/azure_client_assertion.h"
#include "stores/credentials/azure_token.h"

namespace sluice {
namespace {

constexpr uint64_t kMaxFederatedToken = uint64_t{1} << 16;
constexpr char kJwtBearer[] = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

std::string MissingOf(std::initializer_list<const char*> names) {
  std::string out;
  for (const char* n : names) {
    if (GetEnv(n)) continue;
    out += (out.empty() ? "" : ", ") + std::string(n);
  }
  return out;
}

class AzureEnvironmentSource final : public CredentialSource {
 public:
  std::string name() const override { return "environment"; }

  Result<Credential> Fetch(int64_t now) override {
    auto tenant = GetEnv("AZURE_TENANT_ID");
    auto client = GetEnv("AZURE_CLIENT_ID");
    auto secret = GetEnv("AZURE_CLIENT_SECRET");
    auto cert_path = GetEnv("AZURE_CLIENT_CERTIFICATE_PATH");
    if (!tenant || !client || (!secret && !cert_path)) {
      std::string missing = MissingOf({"AZURE_TENANT_ID", "AZURE_CLIENT_ID"});
      if (!secret && !cert_path) {
        missing += (missing.empty() ? "" : ", ") +
                   std::string("AZURE_CLIENT_SECRET or AZURE_CLIENT_CERTIFICATE_PATH");
      }
      return NotFoundError(missing + " not set");
    }
    SLUICE_ASSIGN_OR_RETURN(std::string endpoint, EntraTokenEndpoint(AzureAuthorityHost(), *tenant));
    std::vector<std::pair<std::string, std::string>> form = {
        {"client_id", *client}, {"grant_type", "client_credentials"},
        {"scope", std::string(kAzureStorageScope)}};
    std::string what;
    if (secret) {
      form.emplace_back("client_secret", *secret);
      what = "client secret of " + *client;
    } else {
      SLUICE_ASSIGN_OR_RETURN(ClientCertificate cert, ReadClientCertificate(*cert_path));
      SLUICE_ASSIGN_OR_RETURN(std::string assertion,
                              MakeClientAssertion(cert, *client, endpoint, now, *cert_path));
      form.emplace_back("client_assertion_type", kJwtBearer);
      form.emplace_back("client_assertion", std::move(assertion));
      what = "certificate " + *cert_path + " of " + *client;
    }
    SLUICE_ASSIGN_OR_RETURN(Credential c, RequestEntraToken(endpoint, form, now, what));
    c.source = "environment (service principal " + *client + ", " +
               (secret ? "AZURE_CLIENT_SECRET" : "AZURE_CLIENT_CERTIFICATE_PATH") + ")";
    return c;
  }
};

class AzureWorkloadIdentitySource final : public CredentialSource {
 public:
  std::string name() const override { return "workload identity"; }

  Result<Credential> Fetch(int64_t now) override {
    auto tenant = GetEnv("AZURE_TENANT_ID");
    auto client = GetEnv("AZURE_CLIENT_ID");
    auto file = GetEnv("AZURE_FEDERATED_TOKEN_FILE");
    if (!tenant || !client || !file) {
      return NotFoundError(
          MissingOf({"AZURE_FEDERATED_TOKEN_FILE", "AZURE_CLIENT_ID", "AZURE_TENANT_ID"}) +
          " not set");
    }
    auto token = ReadFile(*file, kMaxFederatedToken);
    if (!token.ok()) {
      return PermissionDeniedError("AZURE_FEDERATED_TOKEN_FILE: " + token.status().message());
    }
    while (!token->empty() && (token->back() == '\n' || token->back() == '\r' ||
                               token->back() == ' ')) {
      token->pop_back();
    }
    if (token->empty()) {
      return PermissionDeniedError("AZURE_FEDERATED_TOKEN_FILE " + *file + " is empty");
    }
    SLUICE_ASSIGN_OR_RETURN(std::string endpoint, EntraTokenEndpoint(AzureAuthorityHost(), *tenant));
    SLUICE_ASSIGN_OR_RETURN(
        Credential c,
        RequestEntraToken(endpoint,
                          {{"client_id", *client},
                           {"grant_type", "client_credentials"},
                           {"client_assertion_type", kJwtBearer},
                           {"client_assertion", std::move(*token)},
                           {"scope", std::string(kAzureStorageScope)}},
                          now, "federated token " + *file + " of " + *client));
    c.source = "workload identity (" + *client + ", AZURE_FEDERATED_TOKEN_FILE)";
    return c;
  }
};

}  // namespace

std::unique_ptr<CredentialSource> MakeAzureEnvironmentSource() {
  return std::make_unique<AzureEnvironmentSource>();
}

std::unique_ptr<CredentialSource> MakeAzureWorkloadIdentitySource() {
  return std::make_unique<AzureWorkloadIdentitySource>();
}

}  // namespace sluice
