// Azure's settings and credential chain (stores/credentials/azure_*): which
// variable wins, the key before the SAS token, the chain's story without a
// secret, one shared credential per settings. The requests themselves run
// against azurite in tests/stores/azure.
#include "stores/credentials/azure_credential.h"

#include <gtest/gtest.h>

#include "stores/signing/azure_connection_string.h"
#include "tests/stores/common/node_servers.h"

namespace sluice {
namespace {

using testing::CleanStoreEnv;
using testing::ScopedEnv;

const char kKey[] = "a2V5LWJ5dGVzLXRoYXQtYXJlLXNlY3JldA==";
const char kSas[] = "sv=2021-12-02&sig=c2VjcmV0LXNpZw%3D%3D";

TEST(AzureSettingsEnvTest, VariablesAndTheirOrder) {
  ScopedEnv env(CleanStoreEnv());
  {
    ScopedEnv vars(std::map<std::string, std::optional<std::string>>{
        {"AZURE_ACCOUNT_NAME", "acct"}, {"AZURE_ACCOUNT_ACCESS_KEY", kKey},
        {"AZURE_STORAGE_SAS_TOKEN", std::string("?") + kSas}});
    auto s = ReadAzureSettings("azure://c/p");
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    EXPECT_EQ(s->account, "acct");
    EXPECT_EQ(s->endpoint, "https://acct.blob.core.windows.net");
    EXPECT_EQ(s->account_key, kKey);
    EXPECT_EQ(s->key_from, "AZURE_ACCOUNT_ACCESS_KEY");
    EXPECT_EQ(s->sas_token, kSas);  // the leading '?' dropped
    EXPECT_EQ(s->sas_from, "AZURE_STORAGE_SAS_TOKEN");
  }
  {
    // The connection string wins over the account variables; the SAS
    // variable and the endpoint variable win over it.
    ScopedEnv vars(std::map<std::string, std::optional<std::string>>{
        {"AZURE_STORAGE_CONNECTION_STRING",
         std::string("AccountName=cs;SharedAccessSignature=sig=cs-sas;"
                     "BlobEndpoint=http://127.0.0.1:10000/cs/")},
        {"AZURE_ACCOUNT_NAME", "acct"}, {"AZURE_ACCOUNT_ACCESS_KEY", kKey}});
    auto s = ReadAzureSettings("azure://c/p");
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    EXPECT_EQ(s->account, "cs");
    EXPECT_EQ(s->endpoint, "http://127.0.0.1:10000/cs");
    EXPECT_EQ(s->account_key, "");
    EXPECT_EQ(s->sas_token, "sig=cs-sas");
    EXPECT_EQ(s->sas_from, "AZURE_STORAGE_CONNECTION_STRING");
    ScopedEnv over(std::map<std::string, std::optional<std::string>>{
        {"AZURE_STORAGE_SAS_TOKEN", kSas}, {"AZURE_BLOB_ENDPOINT", "http://127.0.0.1:9/x//"}});
    s = ReadAzureSettings("azure://c/p");
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    EXPECT_EQ(s->sas_token, kSas);
    EXPECT_EQ(s->sas_from, "AZURE_STORAGE_SAS_TOKEN");
    EXPECT_EQ(s->endpoint, "http://127.0.0.1:9/x");
  }
  auto none = ReadAzureSettings("azure://c/p");
  EXPECT_EQ(none.status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(none.status().message(),
            "no Azure account for azure://c/p: set AZURE_ACCOUNT_NAME with "
            "AZURE_ACCOUNT_ACCESS_KEY or AZURE_STORAGE_SAS_TOKEN, or "
            "AZURE_STORAGE_CONNECTION_STRING");
}

TEST(AzureCredentialTest, KeyBeforeSasAndNeitherIsNotFound) {
  ScopedEnv env(CleanStoreEnv());
  ScopedEnv sas_var("AZURE_STORAGE_SAS_TOKEN", kSas);
  AzureSettings s;
  s.account = "acct";
  s.account_key = kKey;
  s.key_from = "AZURE_ACCOUNT_ACCESS_KEY";
  s.sas_token = kSas;
  s.sas_from = "AZURE_STORAGE_SAS_TOKEN";
  auto both = MakeAzureCredentialChain(s)->Fetch(0);
  ASSERT_TRUE(both.ok()) << both.status().ToString();
  EXPECT_EQ(both->source, "account key (AZURE_ACCOUNT_ACCESS_KEY)");
  EXPECT_EQ(both->account_key, kKey);
  EXPECT_EQ(both->sas_token, "");
  EXPECT_EQ(both->expires_at, std::nullopt);

  s.account_key.clear();
  auto chain = MakeAzureCredentialChain(s);
  auto sas = chain->Fetch(0);
  ASSERT_TRUE(sas.ok()) << sas.status().ToString();
  EXPECT_EQ(sas->source, "SAS token (AZURE_STORAGE_SAS_TOKEN)");
  EXPECT_EQ(sas->sas_token, kSas);
  EXPECT_EQ(chain->DescribeAttempts(), "account key (no account key set), SAS token (used)");

  // The SAS variable is read again at every fetch: gone, the SAS token is.
  s.sas_token.clear();
  ScopedEnv no_sas("AZURE_STORAGE_SAS_TOKEN", std::nullopt);
  auto neither = MakeAzureCredentialChain(s)->Fetch(0);
  EXPECT_EQ(neither.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(neither.status().message(),
            "no Azure credentials found; tried: account key (no account key set), SAS token "
            "(no SAS token set), environment (AZURE_TENANT_ID, AZURE_CLIENT_ID, "
            "AZURE_CLIENT_SECRET or AZURE_CLIENT_CERTIFICATE_PATH not set), workload identity "
            "(AZURE_FEDERATED_TOKEN_FILE, AZURE_CLIENT_ID, AZURE_TENANT_ID not set), managed "
            "identity (SLUICE_AZURE_METADATA_DISABLED is set), Azure CLI ('/nonexistent/az' "
            "(SLUICE_AZURE_CLI) not found), "
            "Azure PowerShell ('/nonexistent/pwsh' (SLUICE_AZURE_POWERSHELL) not found), "
            "Azure Developer CLI ('/nonexistent/azd' "
            "(SLUICE_AZURE_DEVELOPER_CLI) not found)");
}

TEST(AzureCredentialTest, OneSharedCredentialPerSettings) {
  AzureSettings s;
  s.account = "acct";
  s.endpoint = "https://acct.blob.core.windows.net";
  s.account_key = kKey;
  auto a = AzureSharedCredential(s);
  auto b = AzureSharedCredential(s);
  EXPECT_EQ(a.get(), b.get());
  s.account_key = kAzuriteAccountKey;
  auto other = AzureSharedCredential(s);
  EXPECT_NE(a.get(), other.get());
  auto got = other->Get();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->account_key, kAzuriteAccountKey);
  EXPECT_EQ(a->Get()->account_key, kKey);
  EXPECT_EQ(a->fetches(), 1);
}

}  // namespace
}  // namespace sluice
