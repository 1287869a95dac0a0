// Reads through the Azure store with a bearer token from the chain: Entra
// ID's fake hands out the token, a fake Blob endpoint that takes only the
// tokens it is told of, until their expiry, serves the bytes (so a test
// controls lifetimes; azure_azurite_bearer_test.cc reads from azurite
// itself). And `sluice whoami`'s account of it.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "engine/runtime/event_loop.h"
#include "stores/azure/azure_store.h"
#include "stores/store.h"
#include "tests/common/scoped_env.h"
#include "tests/stores/common/node_servers.h"
#include "tests/stores/credentials/azure_fakes.h"

namespace sluice {
namespace {

using testing::CleanStoreEnv;
using testing::FakeBearerBlob;
using testing::FakeEntraId;
using testing::FakeEntraOptions;
using testing::ScopedEnv;

constexpr char kReadTenant[] = "contoso.onmicrosoft.com";
constexpr char kReadClient[] = "11111111-2222-3333-4444-555555555555";
constexpr char kReadSecret[] = "s3cr3t-value-never-printed";

std::string Pattern(size_t n) {
  std::string out(n, '\0');
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<char>((i * 131 + i / 7) & 0xff);
  return out;
}

TEST(AzureBearerReadTest, ServicePrincipalTokenReadsBlobs) {
  ScopedEnv env(CleanStoreEnv());
  FakeEntraOptions o;
  o.tenant = kReadTenant;
  o.client_id = kReadClient;
  o.client_secret = kReadSecret;
  FakeEntraId entra(o);
  const std::string bytes = Pattern(3 << 20);
  FakeBearerBlob blob("acct", {{"data/shards/shard.00000.mds", bytes}});
  blob.Accept("entra-token-1");
  ScopedEnv vars(std::map<std::string, std::optional<std::string>>{
      {"AZURE_ACCOUNT_NAME", "acct"},
      {"AZURE_BLOB_ENDPOINT", blob.url()},
      {"AZURE_AUTHORITY_HOST", entra.url()},
      {"AZURE_TENANT_ID", kReadTenant},
      {"AZURE_CLIENT_ID", kReadClient},
      {"AZURE_CLIENT_SECRET", kReadSecret}});
  EventLoop loop;
  auto store = OpenStore("azure://data/shards", loop.executor());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto whole = loop.Run((*store)->Get("shard.00000.mds"));
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  EXPECT_EQ(*whole, bytes);
  auto range = loop.Run((*store)->GetRange("shard.00000.mds", 1000, 5000));
  ASSERT_TRUE(range.ok()) << range.status().ToString();
  EXPECT_EQ(*range, bytes.substr(1000, 5000));
  EXPECT_EQ(entra.answers(), 1);  // one token, shared by every request
  EXPECT_EQ(blob.refused(), 0);

  auto described = DescribeAzureAuth("azure://data/shards");
  ASSERT_TRUE(described.ok()) << described.status().ToString();
  const std::string head = "azure://data\n  account: acct\n  endpoint: " + blob.url() +
                           "\n  credentials: environment (service principal " + kReadClient +
                           ", AZURE_CLIENT_SECRET) (bearer token)\n  expires: ";
  EXPECT_EQ(described->substr(0, head.size()), head) << *described;
  EXPECT_NE(described->find("\n  sources tried: account key (no account key set), SAS token "
                            "(no SAS token set), environment (used)\n"),
            std::string::npos)
      << *described;
  EXPECT_EQ(described->find(kReadSecret), std::string::npos);
  EXPECT_EQ(described->find("entra-token"), std::string::npos);
}

// Tokens living 4 s, a read lasting 7 s: the shared credential refreshes
// them in the background (at half their life) and no request carries an
// expired one (the Blob fake refuses those).
TEST(AzureBearerReadTest, TokenIsRefreshedDuringARead) {
  ScopedEnv env(CleanStoreEnv());
  const std::string bytes = Pattern(64 << 10);
  FakeBearerBlob blob("acct", {{"data/shard", bytes}});
  FakeEntraOptions o;
  o.tenant = kReadTenant;
  o.client_id = kReadClient;
  o.client_secret = kReadSecret;
  o.lifetime_s = 4;
  o.on_issue = [&blob](const std::string& token, int64_t expires_at) {
    blob.Accept(token, expires_at);
  };
  FakeEntraId entra(o);
  ScopedEnv vars(std::map<std::string, std::optional<std::string>>{
      {"AZURE_ACCOUNT_NAME", "acct"},
      {"AZURE_BLOB_ENDPOINT", blob.url()},
      {"AZURE_AUTHORITY_HOST", entra.url()},
      {"AZURE_TENANT_ID", kReadTenant},
      {"AZURE_CLIENT_ID", kReadClient},
      {"AZURE_CLIENT_SECRET", kReadSecret}});
  EventLoop loop;
  auto store = OpenStore("azure://data", loop.executor());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(7);
  int reads = 0;
  while (std::chrono::steady_clock::now() < end) {
    auto got = loop.Run((*store)->GetRange("shard", 4096, 8192));
    ASSERT_TRUE(got.ok()) << "read " << reads << ": " << got.status().ToString();
    ASSERT_EQ(*got, bytes.substr(4096, 8192));
    ++reads;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_GT(reads, 50);
  EXPECT_GE(entra.answers(), 3);
  EXPECT_GE(blob.distinct_tokens(), 3);
  EXPECT_EQ(blob.refused(), 0);
}

TEST(AzureBearerReadTest, RefusedTokenAndAnonymousFallback) {
  ScopedEnv env(CleanStoreEnv());
  FakeBearerBlob blob("acct", {{"data/x", "bytes"}});
  ScopedEnv vars(std::map<std::string, std::optional<std::string>>{
      {"AZURE_ACCOUNT_NAME", "acct"}, {"AZURE_BLOB_ENDPOINT", blob.url()}});
  // No source applies: anonymous requests (public containers), said so.
  auto described = DescribeAzureAuth("azure-dl://data");
  ASSERT_TRUE(described.ok()) << described.status().ToString();
  EXPECT_EQ(*described,
            "azure-dl://data\n  account: acct\n  endpoint: " + blob.url() +
                "\n  requests: anonymous (no Azure credentials found; tried: account key (no "
                "account key set), SAS token (no SAS token set), environment (AZURE_TENANT_ID, "
                "AZURE_CLIENT_ID, AZURE_CLIENT_SECRET or AZURE_CLIENT_CERTIFICATE_PATH not set), "
                "workload identity (AZURE_FEDERATED_TOKEN_FILE, AZURE_CLIENT_ID, AZURE_TENANT_ID "
                "not set), managed identity (SLUICE_AZURE_METADATA_DISABLED is set), Azure CLI "
                "('/nonexistent/az' (SLUICE_AZURE_CLI) not found), "
                "Azure PowerShell ('/nonexistent/pwsh' (SLUICE_AZURE_POWERSHELL) not found), "
                "Azure Developer CLI "
                "('/nonexistent/azd' (SLUICE_AZURE_DEVELOPER_CLI) not found))\n");
  EventLoop loop;
  auto store = OpenStore("azure://data", loop.executor());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto get = loop.Run((*store)->Get("x"));
  EXPECT_EQ(get.status().code(), StatusCode::kPermissionDenied) << get.status().ToString();
  EXPECT_EQ(blob.refused(), 1);

  // A broken source stops the chain at open (no silent anonymous fallback).
  ScopedEnv broken(std::map<std::string, std::optional<std::string>>{
      {"AZURE_TENANT_ID", kReadTenant}, {"AZURE_CLIENT_ID", kReadClient},
      {"AZURE_CLIENT_SECRET", kReadSecret}, {"AZURE_AUTHORITY_HOST", "http://127.0.0.1:9"}});
  auto failed = OpenStore("azure://data", loop.executor());
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().message().find(kReadSecret), std::string::npos);
  EXPECT_NE(failed.status().message().find("environment: client secret of " +
                                           std::string(kReadClient) +
                                           ": token request to http://127.0.0.1:9/" + kReadTenant +
                                           "/oauth2/v2.0/token failed"),
            std::string::npos)
      << failed.status().ToString();
}

}  // namespace
}  // namespace sluice
