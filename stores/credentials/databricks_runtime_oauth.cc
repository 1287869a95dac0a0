#include "stores/credentials/databricks_runtime_oauth.h"

#include <utility>
#include <vector>

#include "stores/credentials/databricks_oidc.h"
#include "stores/credentials/databricks_runtime_token.h"
#include "stores/credentials/gcs_access_token.h"

namespace sluice {
namespace {

class DatabricksRuntimeOauthSource final : public CredentialSource {
 public:
  DatabricksRuntimeOauthSource(DatabricksConfig config, bool chosen)
      : config_(std::move(config)), chosen_(chosen) {}
  std::string name() const override { return "runtime-oauth"; }

  Result<Credential> Fetch(int64_t now) override {
    return AsChosenDatabricksStrategy("runtime-oauth", chosen_, FetchIn(now));
  }

 private:
  Result<Credential> FetchIn(int64_t now) {
    if (config_.scopes.empty()) {
      // The runtime is said first: outside one the scopes do not matter.
      SLUICE_RETURN_IF_ERROR(FetchDatabricksRuntimeTokenFor(config_).status());
      return NotFoundError("in a Databricks runtime, but no OAuth scopes are configured (scopes in "
                           "the profile), so the runtime's token is not exchanged");
    }
    SLUICE_ASSIGN_OR_RETURN(DatabricksRuntimeToken runtime, FetchDatabricksRuntimeTokenFor(config_));
    // The SDK's form, its fields in its order; the runtime's host, with no
    // discovery.
    const std::vector<std::pair<std::string, std::string>> form = {
        {"grant_type", "urn:ietf:params:oauth:grant-type:token-exchange"},
        {"subject_token", std::move(runtime.token)},
        {"subject_token_type", "urn:databricks:params:oauth:token-type:personal-access-token"},
        {"requested_token_type", "urn:ietf:params:oauth:token-type:access_token"},
        {"scope", config_.scopes},
        // Left out when empty (FormBody), as the SDK leaves them out.
        {"authorization_details", config_.authorization_details},
        {"assume_group", config_.group_id}};
    SLUICE_ASSIGN_OR_RETURN(
        AccessToken token,
        RequestDatabricksToken(runtime.host + "/oidc/v1/token", form,
                               "token exchange of the Databricks runtime's token"));
    return BearerCredential("OAuth token for scopes " + config_.scopes + " (from " +
                                DatabricksSettingOrigin(config_, "scopes") +
                                "), exchanged for the Databricks runtime's token of " + runtime.host,
                            std::move(token), now);
  }

  DatabricksConfig config_;
  bool chosen_;
};

}  // namespace

std::unique_ptr<CredentialSource> MakeDatabricksRuntimeOauthSource(DatabricksConfig config, bool chosen) {
  return std::make_unique<DatabricksRuntimeOauthSource>(std::move(config), chosen);
}

}  // namespace sluice
