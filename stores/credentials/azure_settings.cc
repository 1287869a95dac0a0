#include "stores/credentials/azure_settings.h"

#include "stores/common/store_keys.h"
#include "stores/signing/azure_connection_string.h"

namespace sluice {

Result<AzureSettings> ReadAzureSettings(std::string_view url) {
  AzureSettings s;
  if (auto cs = GetEnv("AZURE_STORAGE_CONNECTION_STRING")) {
    auto parsed = ParseAzureConnectionString(*cs);
    if (!parsed.ok()) return parsed.status().WithContext("AZURE_STORAGE_CONNECTION_STRING");
    s.account = parsed->account_name;
    s.account_key = parsed->account_key;
    s.sas_token = parsed->sas_token;
    s.endpoint = parsed->blob_endpoint;
    s.key_from = s.sas_from = "AZURE_STORAGE_CONNECTION_STRING";
  } else {
    s.account = GetEnv("AZURE_ACCOUNT_NAME").value_or("");
    s.account_key = GetEnv("AZURE_ACCOUNT_ACCESS_KEY").value_or("");
    s.key_from = "AZURE_ACCOUNT_ACCESS_KEY";
    if (s.account.empty()) {
      return PermissionDeniedError(
          "no Azure account for " + UrlForErrors(url) +
          ": set AZURE_ACCOUNT_NAME with AZURE_ACCOUNT_ACCESS_KEY or "
          "AZURE_STORAGE_SAS_TOKEN, or AZURE_STORAGE_CONNECTION_STRING");
    }
    s.endpoint = "https://" + s.account + ".blob.core.windows.net";
  }
  if (auto sas = GetEnv("AZURE_STORAGE_SAS_TOKEN")) {
    s.sas_token = *sas;
    s.sas_from = "AZURE_STORAGE_SAS_TOKEN";
  }
  if (!s.sas_token.empty() && s.sas_token.front() == '?') s.sas_token.erase(0, 1);
  if (auto ep = GetEnv("AZURE_BLOB_ENDPOINT")) s.endpoint = *ep;
  while (!s.endpoint.empty() && s.endpoint.back() == '/') s.endpoint.pop_back();
  return s;
}

}  // namespace sluice
