// A streamed read from azurite with a bearer token: azurite's `--oauth
// basic` mode (HTTPS only) checks the token's audience, issuer and
// lifetime; the fake Entra ID hands out tokens shaped so, for a service
// principal found by the chain.
#include <gtest/gtest.h>

#include "base/file.h"
#include "engine/runtime/event_loop.h"
#include "stores/store.h"
#include "tests/common/scoped_env.h"
#include "tests/common/temp_dir.h"
#include "tests/stores/common/azurite_suite.h"
#include "tests/stores/common/node_servers.h"
#include "tests/stores/credentials/azure_fakes.h"

namespace sluice {
namespace {

using testing::CleanStoreEnv;
using testing::FakeEntraId;
using testing::FakeEntraOptions;
using testing::ScopedEnv;
using testing::TempDir;

constexpr char kTenant[] = "9188040d-6c67-4c5b-b112-36a304b66dad";
constexpr char kClient[] = "22222222-3333-4444-5555-666666666666";
constexpr char kAzuriteSecret[] = "azurite-principal-secret";

TEST(AzureAzuriteBearerTest, ServicePrincipalTokenReadsFromAzurite) {
  const std::string why = testing::NodeServersUnavailableReason();
  if (!why.empty()) GTEST_SKIP() << why;
  TempDir dir;
  testing::TestCertificate tls = testing::MakeTestCertificate("azurite");
  ASSERT_TRUE(WriteFileAtomic(dir.path() + "/tls.pem", tls.cert_pem).ok());
  ASSERT_TRUE(WriteFileAtomic(dir.path() + "/tls.key", tls.key_pem).ok());
  auto azurite = testing::StartAzurite(
      dir.path(), {"--oauth", "basic", "--cert", dir.path() + "/tls.pem", "--key",
                   dir.path() + "/tls.key"});
  ASSERT_NE(azurite, nullptr);
  const std::string endpoint =
      "https://127.0.0.1:" + std::to_string(azurite->port()) + "/devstoreaccount1";
  ScopedEnv env(CleanStoreEnv());
  ScopedEnv ca("SSL_CERT_FILE", dir.path() + "/tls.pem");
  EventLoop loop;
  ASSERT_TRUE(testing::CreateAzuriteContainer(loop, azurite->port(), "data", endpoint).ok());
  std::string bytes(5 << 20, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>((i * 2654435761u) >> 13);
  {
    // Written with the account key (azurite takes both).
    ScopedEnv key("AZURE_STORAGE_CONNECTION_STRING",
                  "AccountName=devstoreaccount1;AccountKey=" + std::string(kAzuriteAccountKey) +
                      ";BlobEndpoint=" + endpoint + ";");
    auto writer = OpenStore("azure://data", loop.executor());
    ASSERT_TRUE(writer.ok()) << writer.status().ToString();
    ASSERT_TRUE(loop.Run((*writer)->Put("shards/shard.00000.mds", bytes)).ok());
  }
  FakeEntraOptions o;
  o.tenant = kTenant;
  o.client_id = kClient;
  o.client_secret = kAzuriteSecret;
  o.jwt_tokens = true;
  FakeEntraId entra(o);
  ScopedEnv vars(std::map<std::string, std::optional<std::string>>{
      {"AZURE_ACCOUNT_NAME", "devstoreaccount1"},
      {"AZURE_BLOB_ENDPOINT", endpoint},
      {"AZURE_AUTHORITY_HOST", entra.url()},
      {"AZURE_TENANT_ID", kTenant},
      {"AZURE_CLIENT_ID", kClient},
      {"AZURE_CLIENT_SECRET", kAzuriteSecret}});
  auto store = OpenStore("azure://data/shards", loop.executor());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  const std::string local = dir.path() + "/shard.00000.mds";
  Status streamed = loop.Run((*store)->GetToFile("shard.00000.mds", local, bytes.size()));
  ASSERT_TRUE(streamed.ok()) << streamed.ToString();
  auto read = ReadFile(local);
  ASSERT_TRUE(read.ok());
  EXPECT_TRUE(*read == bytes);
  auto range = loop.Run((*store)->GetRange("shard.00000.mds", 12345, 4096));
  ASSERT_TRUE(range.ok()) << range.status().ToString();
  EXPECT_EQ(*range, bytes.substr(12345, 4096));
  EXPECT_EQ(entra.answers(), 1);

  // An opaque token (not a JWT azurite can read) is refused: the check is real.
  FakeEntraOptions opaque = o;
  opaque.tenant = "contoso.onmicrosoft.com";
  opaque.jwt_tokens = false;
  FakeEntraId opaque_entra(opaque);
  ScopedEnv other(std::map<std::string, std::optional<std::string>>{
      {"AZURE_TENANT_ID", opaque.tenant}, {"AZURE_AUTHORITY_HOST", opaque_entra.url()}});
  auto other_store = OpenStore("azure://data/shards", loop.executor());
  ASSERT_TRUE(other_store.ok()) << other_store.status().ToString();
  auto refused = loop.Run((*other_store)->Get("shard.00000.mds"));
  EXPECT_EQ(refused.status().code(), StatusCode::kPermissionDenied) << refused.status().ToString();
  EXPECT_EQ(opaque_entra.answers(), 1);
}

}  // namespace
}  // namespace sluice
