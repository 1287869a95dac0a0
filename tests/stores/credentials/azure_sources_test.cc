// Azure's bearer-token sources (stores/credentials/azure_identity_sources.h)
// against loopback fakes of Entra ID, IMDS, App Service and Azure ML
// (azure_fakes.h): DefaultAzureCredential's order when several are present,
// what each sends, refresh ahead of expiry, errors naming every source
// tried and never a secret.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <ctime>

#include "base/file.h"
#include "stores/credentials/azure_client_assertion.h"
#include "stores/credentials/azure_credential.h"
#include "stores/credentials/azure_token.h"
#include "stores/signing/digest.h"
#include "tests/common/scoped_env.h"
#include "tests/common/temp_dir.h"
#include "tests/stores/common/node_servers.h"
#include "tests/stores/credentials/azure_fakes.h"

namespace sluice {
namespace {

using testing::CleanStoreEnv;
using testing::FakeEntraId;
using testing::FakeEntraOptions;
using testing::FakeManagedIdentity;
using testing::ManagedIdentityKind;
using testing::ScopedEnv;
using testing::TempDir;

constexpr char kTenant[] = "72f988bf-86f1-41af-91ab-2d7cd011db47";
constexpr char kClient[] = "0f1e2d3c-aaaa-bbbb-cccc-123456789abc";
constexpr char kSecret[] = "client-secret-Qx9~do-not-print";
constexpr char kFederated[] = "eyJhbGciOiJSUzI1NiJ9.federated-token-one.sig";
constexpr int64_t kNow = 1700000000;

class AzureSourcesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    env_ = std::make_unique<ScopedEnv>(CleanStoreEnv());
    endpoints_.dmi_dir = dir_.path() + "/dmi";  // no such folder: not an Azure VM
  }

  void Write(const std::string& name, const std::string& text) {
    ASSERT_TRUE(WriteFileAtomic(dir_.path() + "/" + name, text).ok());
  }

  // The chain as the store builds it, for `settings`: "source -> token", or the error.
  std::string Resolve(const AzureSettings& settings = {}, int64_t now = kNow) {
    auto got = MakeAzureCredentialChain(settings, endpoints_)->Fetch(now);
    if (!got.ok()) return got.status().ToString();
    std::string what = !got->bearer.empty()        ? got->bearer
                       : !got->account_key.empty() ? "key"
                                                   : "sas";
    return got->source + " -> " + what;
  }

  TempDir dir_;
  AzureEndpointOptions endpoints_;
  std::unique_ptr<ScopedEnv> env_;
};

FakeEntraOptions EntraFor(const std::string& cert_pem = "") {
  FakeEntraOptions o;
  o.tenant = kTenant;
  o.client_id = kClient;
  o.client_secret = kSecret;
  o.federated_token = kFederated;
  o.cert_pem = cert_pem;
  return o;
}

// Every source present at once, then removed one by one: each time the
// next in DefaultAzureCredential's order answers (after the key and SAS,
// which win when set).
TEST_F(AzureSourcesTest, DefaultAzureCredentialOrder) {
  FakeEntraId entra(EntraFor());
  FakeManagedIdentity imds(ManagedIdentityKind::kImds, "", kClient, 3600);
  Write("federated", std::string(kFederated) + "\n");
  ScopedEnv vars(std::map<std::string, std::optional<std::string>>{
      {"AZURE_AUTHORITY_HOST", entra.url()},
      {"AZURE_TENANT_ID", kTenant},
      {"AZURE_CLIENT_ID", kClient},
      {"AZURE_CLIENT_SECRET", kSecret},
      {"AZURE_FEDERATED_TOKEN_FILE", dir_.path() + "/federated"},
      {"AZURE_STORAGE_SAS_TOKEN", "sv=2021-12-02&se=2099-01-01T00%3A00%3A00Z&sig=abc"}});
  endpoints_.imds_endpoint = imds.url();
  AzureSettings settings;
  settings.account_key = "a2V5";
  settings.key_from = "AZURE_ACCOUNT_ACCESS_KEY";
  settings.sas_from = "AZURE_STORAGE_SAS_TOKEN";
  EXPECT_EQ(Resolve(settings), "account key (AZURE_ACCOUNT_ACCESS_KEY) -> key");
  settings.account_key.clear();
  EXPECT_EQ(Resolve(settings), "SAS token (AZURE_STORAGE_SAS_TOKEN) -> sas");
  ScopedEnv no_sas("AZURE_STORAGE_SAS_TOKEN", std::nullopt);
  EXPECT_EQ(Resolve(settings), std::string("environment (service principal ") + kClient +
                                   ", AZURE_CLIENT_SECRET) -> entra-token-1");
  EXPECT_EQ(entra.last_kind(), "secret");
  ScopedEnv no_secret("AZURE_CLIENT_SECRET", std::nullopt);
  EXPECT_EQ(Resolve(settings), std::string("workload identity (") + kClient +
                                   ", AZURE_FEDERATED_TOKEN_FILE) -> entra-token-2");
  EXPECT_EQ(entra.last_kind(), "federated");
  ScopedEnv no_file("AZURE_FEDERATED_TOKEN_FILE", std::nullopt);
  EXPECT_EQ(Resolve(settings),
            std::string("managed identity (IMDS, client id ") + kClient + ") -> mi-token-1");
  endpoints_.imds_endpoint.clear();
  EXPECT_EQ(Resolve(settings),
            "not found: no Azure credentials found; tried: account key (no account key set), "
            "SAS token (no SAS token set), environment (AZURE_CLIENT_SECRET or "
            "AZURE_CLIENT_CERTIFICATE_PATH not set), workload identity (AZURE_FEDERATED_TOKEN_FILE "
            "not set), managed identity (SLUICE_AZURE_METADATA_DISABLED is set), Azure CLI "
            "('/nonexistent/az' (SLUICE_AZURE_CLI) not found), "
            "Azure PowerShell ('/nonexistent/pwsh' (SLUICE_AZURE_POWERSHELL) not found), "
            "Azure Developer CLI "
            "('/nonexistent/azd' (SLUICE_AZURE_DEVELOPER_CLI) not found)");
  EXPECT_EQ(entra.refused(), 0);
  EXPECT_EQ(imds.refused(), 0);
}

TEST_F(AzureSourcesTest, ClientSecretRefusedNamesTheSourceNeverTheSecret) {
  FakeEntraOptions o = EntraFor();
  o.client_secret = "the-right-one";
  FakeEntraId entra(o);
  ScopedEnv vars(std::map<std::string, std::optional<std::string>>{
      {"AZURE_AUTHORITY_HOST", entra.url() + "/"},
      {"AZURE_TENANT_ID", kTenant},
      {"AZURE_CLIENT_ID", kClient},
      {"AZURE_CLIENT_SECRET", kSecret}});
  auto chain = MakeAzureCredentialChain({}, endpoints_);
  auto got = chain->Fetch(kNow);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kPermissionDenied);
  const std::string& m = got.status().message();
  EXPECT_EQ(m.find(kSecret), std::string::npos) << m;
  EXPECT_EQ(m.rfind("environment: client secret of " + std::string(kClient) +
                        ": token request to " + entra.url() + "/" + kTenant +
                        "/oauth2/v2.0/token failed: ",
                    0),
            0u)
      << m;
  EXPECT_NE(m.find("401"), std::string::npos) << m;
  EXPECT_NE(m.find("invalid_client: AADSTS7000215: Invalid client secret provided."),
            std::string::npos)
      << m;
  EXPECT_EQ(m.find("Trace ID"), std::string::npos) << m;  // the description's first line only
  EXPECT_NE(m.find("(tried before: account key (no account key set), SAS token (no SAS token "
                   "set))"),
            std::string::npos)
      << m;
  EXPECT_EQ(entra.refused(), 1);
}

TEST_F(AzureSourcesTest, CertificateSignsAnAssertionTheFakeVerifies) {
  // The fake checks exp and nbf against its wall clock.
  auto Now = [] { return static_cast<int64_t>(std::time(nullptr)); };
  testing::TestCertificate cert = testing::MakeTestCertificate("sluice-test-principal");
  FakeEntraId entra(EntraFor(cert.cert_pem));
  Write("principal.pem", cert.key_pem + cert.cert_pem);  // key first: either order works
  ScopedEnv vars(std::map<std::string, std::optional<std::string>>{
      {"AZURE_AUTHORITY_HOST", entra.url()},
      {"AZURE_TENANT_ID", kTenant},
      {"AZURE_CLIENT_ID", kClient},
      {"AZURE_CLIENT_CERTIFICATE_PATH", dir_.path() + "/principal.pem"}});
  EXPECT_EQ(Resolve({}, Now()), std::string("environment (service principal ") + kClient +
                           ", AZURE_CLIENT_CERTIFICATE_PATH) -> entra-token-1");
  EXPECT_EQ(entra.last_kind(), "certificate");
  // A fresh assertion (new jti) at every fetch: the fake refuses replays.
  EXPECT_EQ(Resolve({}, Now()), std::string("environment (service principal ") + kClient +
                           ", AZURE_CLIENT_CERTIFICATE_PATH) -> entra-token-2");

  auto read = ReadClientCertificate(dir_.path() + "/principal.pem");
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->x5t, cert.x5t);

  // Another key's certificate: the signature does not verify.
  testing::TestCertificate other = testing::MakeTestCertificate("someone-else");
  Write("principal.pem", other.cert_pem + other.key_pem);
  std::string refused = Resolve({}, Now());
  EXPECT_NE(refused.find("AADSTS700027: client assertion: signature does not verify"),
            std::string::npos)
      << refused;
  EXPECT_EQ(refused.find("BEGIN"), std::string::npos);  // no PEM text
  EXPECT_EQ(refused.find("eyJ"), std::string::npos);    // no assertion
  EXPECT_EQ(entra.refused(), 1);

  // A certificate without its key: named, no PEM text quoted.
  Write("principal.pem", cert.cert_pem);
  EXPECT_EQ(Resolve({}, Now()), "invalid argument: environment: AZURE_CLIENT_CERTIFICATE_PATH " +
                           dir_.path() + "/principal.pem holds no unencrypted PEM private key (tried before: account key (no "
                           "account key set), SAS token (no SAS token set))");
  Write("principal.pem", "not a certificate");
  EXPECT_EQ(Resolve({}, Now()), "invalid argument: environment: AZURE_CLIENT_CERTIFICATE_PATH " +
                           dir_.path() + "/principal.pem holds no PEM certificate (tried before: account key (no account key "
                           "set), SAS token (no SAS token set))");
}

// The kubelet rotates the projected token: every refresh reads the file again.
TEST_F(AzureSourcesTest, WorkloadIdentityRereadsTheTokenFileOnRefresh) {
  FakeEntraOptions o = EntraFor();
  o.lifetime_s = 600;
  auto entra = std::make_unique<FakeEntraId>(o);
  Write("federated", kFederated);
  ScopedEnv vars(std::map<std::string, std::optional<std::string>>{
      {"AZURE_AUTHORITY_HOST", entra->url()},
      {"AZURE_TENANT_ID", kTenant},
      {"AZURE_CLIENT_ID", kClient},
      {"AZURE_FEDERATED_TOKEN_FILE", dir_.path() + "/federated"}});
  int64_t now = kNow;
  SharedCredentialOptions options;
  options.background = false;
  options.clock = [&now] { return now; };
  SharedCredential shared(MakeAzureCredentialChain({}, endpoints_), options);
  auto first = shared.Get();
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->bearer, "entra-token-1");
  EXPECT_EQ(first->expires_at, kNow + 600);
  EXPECT_FALSE(shared.RefreshIfDue());  // not yet

  // The file rotated; the fake now accepts only the new token.
  const std::string rotated = "eyJhbGciOiJSUzI1NiJ9.federated-token-two.sig";
  Write("federated", rotated + "\n");
  entra.reset();
  o.federated_token = rotated;
  FakeEntraId second(o);
  ScopedEnv moved("AZURE_AUTHORITY_HOST", second.url());
  now = kNow + 301;  // within 300 s of expiry (at most half of 600 s): due
  EXPECT_TRUE(shared.RefreshIfDue());
  auto refreshed = shared.Get();
  ASSERT_TRUE(refreshed.ok()) << refreshed.status().ToString();
  EXPECT_EQ(refreshed->bearer, "entra-token-1");  // the new fake's first
  EXPECT_EQ(refreshed->expires_at, kNow + 301 + 600);
  EXPECT_EQ(second.answers(), 1);
  EXPECT_EQ(second.refused(), 0);
  EXPECT_EQ(shared.fetches(), 2);

  // A token Entra ID does not know: refused, the token never quoted.
  const std::string unknown = "eyJhbGciOiJSUzI1NiJ9.not-federated-anywhere.sig";
  Write("federated", unknown);
  auto refused = MakeAzureCredentialChain({}, endpoints_)->Fetch(kNow);
  EXPECT_EQ(refused.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(refused.status().message().find("workload identity: federated token " + dir_.path() +
                                            "/federated of " + kClient),
            std::string::npos)
      << refused.status().message();
  EXPECT_NE(refused.status().message().find("AADSTS700213"), std::string::npos);
  EXPECT_EQ(refused.status().message().find(unknown), std::string::npos);
  EXPECT_EQ(refused.status().message().find("not-federated-anywhere"), std::string::npos);

  // An empty file is an error naming it.
  Write("federated", "");
  auto chain = MakeAzureCredentialChain({}, endpoints_);
  auto empty = chain->Fetch(kNow);
  EXPECT_EQ(empty.status().ToString(), "permission denied: workload identity: "
                                       "AZURE_FEDERATED_TOKEN_FILE " +
                                           dir_.path() + "/federated is empty (tried before: "
                                           "account key (no account key set), SAS token (no SAS "
                                           "token set), environment (AZURE_CLIENT_SECRET or "
                                           "AZURE_CLIENT_CERTIFICATE_PATH not set))");
}

TEST_F(AzureSourcesTest, ManagedIdentityEndpoints) {
  const std::string header = "identity-header-do-not-print";
  {
    FakeManagedIdentity app(ManagedIdentityKind::kAppService, header, "", 7200);
    ScopedEnv vars(std::map<std::string, std::optional<std::string>>{
        {"IDENTITY_ENDPOINT", app.endpoint()}, {"IDENTITY_HEADER", header}});
    auto got = MakeAzureCredentialChain({}, endpoints_)->Fetch(kNow);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(got->source, "managed identity (App Service)");
    EXPECT_EQ(got->bearer, "mi-token-1");
    // expires_on (a string) is the fake's wall clock + 7200, not kNow's.
    EXPECT_GT(*got->expires_at, kNow + 7200);
    ScopedEnv wrong("IDENTITY_HEADER", "wrong-" + header);
    auto refused = MakeAzureCredentialChain({}, endpoints_)->Fetch(kNow);
    EXPECT_EQ(refused.status().code(), StatusCode::kPermissionDenied);
    EXPECT_EQ(refused.status().message().find(header), std::string::npos);
    EXPECT_NE(refused.status().message().find("managed identity: App Service endpoint " +
                                              app.endpoint() + ": "),
              std::string::npos)
        << refused.status().message();
  }
  {
    FakeManagedIdentity ml(ManagedIdentityKind::kAzureMl, header, kClient, 3600);
    ScopedEnv vars(std::map<std::string, std::optional<std::string>>{
        {"MSI_ENDPOINT", ml.endpoint()}, {"MSI_SECRET", header}, {"AZURE_CLIENT_ID", kClient}});
    auto got = MakeAzureCredentialChain({}, endpoints_)->Fetch(kNow);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(got->source, std::string("managed identity (Azure ML, client id ") + kClient + ")");
    EXPECT_EQ(got->bearer, "mi-token-1");
    EXPECT_EQ(ml.refused(), 0);
  }
  {
    // IMDS answers 400 for an identity not assigned: the source does not apply.
    FakeManagedIdentity imds(ManagedIdentityKind::kImds, "", "assigned-id", 3600);
    ScopedEnv vars("AZURE_POD_IDENTITY_AUTHORITY_HOST", imds.url());
    auto got = MakeAzureCredentialChain({}, endpoints_)->Fetch(kNow);
    EXPECT_EQ(got.status().code(), StatusCode::kNotFound) << got.status().ToString();
    EXPECT_NE(got.status().message().find("managed identity (IMDS endpoint " + imds.url() +
                                          "/metadata/identity/oauth2/token: no identity "
                                          "assigned to this machine"),
              std::string::npos)
        << got.status().message();
    ScopedEnv id("AZURE_CLIENT_ID", "assigned-id");
    auto assigned = MakeAzureCredentialChain({}, endpoints_)->Fetch(kNow);
    ASSERT_TRUE(assigned.ok()) << assigned.status().ToString();
    EXPECT_EQ(assigned->expires_at, kNow + 3600);  // IMDS's expires_in (a string)
  }
  {
    ScopedEnv vars(std::map<std::string, std::optional<std::string>>{
        {"IDENTITY_ENDPOINT", "http://127.0.0.1:9/x"}, {"IMDS_ENDPOINT", "http://127.0.0.1:9"}});
    EXPECT_EQ(Resolve(), "unimplemented: managed identity: Azure Arc managed identity "
                         "(IMDS_ENDPOINT) is not supported (tried before: account key (no account "
                         "key set), SAS token (no SAS token set), environment (AZURE_TENANT_ID, "
                         "AZURE_CLIENT_ID, AZURE_CLIENT_SECRET or AZURE_CLIENT_CERTIFICATE_PATH "
                         "not set), workload identity (AZURE_FEDERATED_TOKEN_FILE, "
                         "AZURE_CLIENT_ID, AZURE_TENANT_ID not set))");
  }
}

// Off Azure, 169.254.169.254 is never probed: the DMI asset tag decides.
TEST_F(AzureSourcesTest, ImdsOnlyOnAnAzureVm) {
  ScopedEnv enabled("SLUICE_AZURE_METADATA_DISABLED", std::nullopt);
  std::string why;
  EXPECT_FALSE(DmiSaysAzure(dir_.path() + "/dmi", &why));
  EXPECT_EQ(Resolve(), "not found: no Azure credentials found; tried: account key (no account "
                       "key set), SAS token (no SAS token set), environment (AZURE_TENANT_ID, "
                       "AZURE_CLIENT_ID, AZURE_CLIENT_SECRET or AZURE_CLIENT_CERTIFICATE_PATH not "
                       "set), workload identity (AZURE_FEDERATED_TOKEN_FILE, AZURE_CLIENT_ID, "
                       "AZURE_TENANT_ID not set), managed identity (" + why +
                       "), Azure CLI ('/nonexistent/az' (SLUICE_AZURE_CLI) not found), "
                       "Azure PowerShell ('/nonexistent/pwsh' (SLUICE_AZURE_POWERSHELL) not "
                       "found), Azure Developer CLI ('/nonexistent/azd' "
                       "(SLUICE_AZURE_DEVELOPER_CLI) not found)");
  ASSERT_TRUE(MakeDirs(dir_.path() + "/dmi").ok());
  Write("dmi/chassis_asset_tag", "7783-7084-3265-9085\n");
  EXPECT_TRUE(DmiSaysAzure(dir_.path() + "/dmi", &why));
}

TEST_F(AzureSourcesTest, TokenResponsesAndEndpoints) {
  auto in = ParseAzureTokenResponse(R"({"access_token": "t", "expires_in": "120"})", kNow, "x");
  ASSERT_TRUE(in.ok());
  EXPECT_EQ(in->expires_at, kNow + 120);
  auto on = ParseAzureTokenResponse(R"({"access_token": "t", "expires_on": 1700000500})", kNow, "x");
  ASSERT_TRUE(on.ok());
  EXPECT_EQ(on->expires_at, 1700000500);
  auto none = ParseAzureTokenResponse(R"({"token_type": "Bearer"})", kNow, "endpoint E");
  EXPECT_EQ(none.status().ToString(), "permission denied: endpoint E answered without an access_token");
  EXPECT_EQ(EntraTokenEndpoint("https://login.microsoftonline.com", "contoso.onmicrosoft.com").value(),
            "https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/token");
  EXPECT_EQ(EntraTokenEndpoint("https://h", "../x").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(AzureAuthorityHost(), "https://login.microsoftonline.com");
  ScopedEnv host("AZURE_AUTHORITY_HOST", "login.microsoftonline.us/");
  EXPECT_EQ(AzureAuthorityHost(), "https://login.microsoftonline.us");
}

// A SAS token rotated in the environment is seen at the next refresh, which
// its `se` schedules.
TEST_F(AzureSourcesTest, SasTokenRotationAndExpiry) {
  const std::string first = "sv=2021-12-02&se=2023-11-14T23%3A00%3A00Z&sig=first";
  const std::string second = "sv=2021-12-02&se=2023-11-15T23:00:00Z&sig=second";
  ScopedEnv var("AZURE_STORAGE_SAS_TOKEN", "?" + first);
  AzureSettings settings;
  settings.sas_token = first;
  settings.sas_from = "AZURE_STORAGE_SAS_TOKEN";
  int64_t now = kNow;  // 2023-11-14T22:13:20Z
  SharedCredentialOptions options;
  options.background = false;
  options.clock = [&now] { return now; };
  SharedCredential shared(MakeAzureCredentialChain(settings, endpoints_), options);
  auto got = shared.Get();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->sas_token, first);
  EXPECT_EQ(got->expires_at, 1700002800);
  ScopedEnv rotated("AZURE_STORAGE_SAS_TOKEN", second);
  now = 1700002800 - 200;
  EXPECT_TRUE(shared.RefreshIfDue());
  EXPECT_EQ(shared.Get()->sas_token, second);
  EXPECT_EQ(shared.Get()->expires_at, 1700002800 + 86400);
  // Expired in the variable: an error saying when, not the token.
  now = 1700002800 + 86400 + 1;
  auto expired = MakeAzureCredentialChain(settings, endpoints_)->Fetch(now);
  EXPECT_EQ(expired.status().ToString(),
            "permission denied: SAS token: the SAS token in AZURE_STORAGE_SAS_TOKEN expired at "
            "1700089200 (unix time, its 'se') (tried before: account key (no account key set))");
}

// A stand-in for the Azure CLI (or azd) at dir/<name>: records its
// arguments and the variable `color` in dir/<name>.args, writes
// `stderr_text` to stderr, prints `stdout_text` and exits with `status`.
std::string FakeAz(const std::string& dir, const std::string& name, const std::string& stdout_text,
                   int status = 0, const std::string& stderr_text = "",
                   const std::string& color = "AZURE_CORE_NO_COLOR") {
  const std::string path = dir + "/" + name;
  EXPECT_TRUE(WriteFileAtomic(path + ".stdout", stdout_text).ok());
  EXPECT_TRUE(WriteFileAtomic(path + ".stderr", stderr_text).ok());
  const std::string script =
      "#!/bin/sh\n"
      "echo \"$*\" > \"" + path + ".args\"\n"
      "echo \"" + color + "=$" + color + "\" >> \"" + path + ".args\"\n"
      "cat \"" + path + ".stderr\" >&2\n"
      "cat \"" + path + ".stdout\"\n"
      "exit " + std::to_string(status) + "\n";
  EXPECT_TRUE(WriteFileAtomic(path, script).ok());
  EXPECT_EQ(::chmod(path.c_str(), 0755), 0);
  return path;
}

// The CLI comes last, after managed identity, as in DefaultAzureCredential;
// it is asked for a storage token exactly as azure-identity asks.
TEST_F(AzureSourcesTest, AzureCliTokenOfTheLoggedInAccount) {
  const std::string az = FakeAz(dir_.path(), "az",
                                R"({"accessToken": "cli-token-1", "expiresOn": "2023-11-14 23:13:20.000000", )"
                                R"("expires_on": 1700003000, "tokenType": "Bearer"})");
  ScopedEnv cli("SLUICE_AZURE_CLI", az);
  EXPECT_EQ(Resolve(), "Azure CLI (" + az + " account get-access-token) -> cli-token-1");
  EXPECT_EQ(ReadFile(az + ".args", 1 << 10).value(),
            "account get-access-token --output json --resource https://storage.azure.com\n"
            "AZURE_CORE_NO_COLOR=true\n");
  auto got = MakeAzureCredentialChain({}, endpoints_)->Fetch(kNow);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->expires_at, 1700003000);  // expires_on wins over the local expiresOn

  // Any earlier source that applies still wins.
  FakeEntraId entra(EntraFor());
  {
    ScopedEnv vars(std::map<std::string, std::optional<std::string>>{
        {"AZURE_AUTHORITY_HOST", entra.url()}, {"AZURE_TENANT_ID", kTenant},
        {"AZURE_CLIENT_ID", kClient}, {"AZURE_CLIENT_SECRET", kSecret}});
    EXPECT_EQ(Resolve(), std::string("environment (service principal ") + kClient +
                             ", AZURE_CLIENT_SECRET) -> entra-token-1");
  }

  // Found on PATH when SLUICE_AZURE_CLI is not set.
  ScopedEnv unset("SLUICE_AZURE_CLI", std::nullopt);
  {
    ScopedEnv path("PATH", "/nonexistent/bin:" + dir_.path() + ":/usr/bin:/bin");
    EXPECT_EQ(Resolve(), "Azure CLI (az account get-access-token) -> cli-token-1");
  }
  ScopedEnv path("PATH", "/nonexistent/bin");
  EXPECT_EQ(Resolve(),
            "not found: no Azure credentials found; tried: account key (no account key set), "
            "SAS token (no SAS token set), environment (AZURE_TENANT_ID, AZURE_CLIENT_ID, "
            "AZURE_CLIENT_SECRET or AZURE_CLIENT_CERTIFICATE_PATH not set), workload identity "
            "(AZURE_FEDERATED_TOKEN_FILE, AZURE_CLIENT_ID, AZURE_TENANT_ID not set), managed "
            "identity (SLUICE_AZURE_METADATA_DISABLED is set), Azure CLI ('az' not found on PATH), "
            "Azure PowerShell ('/nonexistent/pwsh' (SLUICE_AZURE_POWERSHELL) not found), "
            "Azure Developer CLI ('/nonexistent/azd' (SLUICE_AZURE_DEVELOPER_CLI) not found)");
}

// Older CLIs print only expiresOn, a naive local time.
TEST_F(AzureSourcesTest, AzureCliLocalExpiryOfOlderVersions) {
  ScopedEnv tz("TZ", "UTC");
  ::tzset();
  auto got = ParseAzureCliToken(
      R"({"accessToken": "t", "expiresOn": "2023-11-14 23:13:20.123456"})", kNow, "az");
  ScopedEnv tz_back("TZ", std::nullopt);
  ::tzset();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->bearer, "t");
  EXPECT_EQ(got->expires_at, kNow + 3600);  // 2023-11-14T23:13:20Z
}

// Signed out: the CLI does not apply and the chain says so. Any other
// failure stops the chain, quoting the CLI's error, never its output.
TEST_F(AzureSourcesTest, AzureCliSignedOutOrFailing) {
  const std::string out =
      FakeAz(dir_.path(), "az-out", "", 1,
             "ERROR: Please run 'az login' to setup account.\n");
  ScopedEnv cli("SLUICE_AZURE_CLI", out);
  EXPECT_EQ(Resolve(),
            "not found: no Azure credentials found; tried: account key (no account key set), "
            "SAS token (no SAS token set), environment (AZURE_TENANT_ID, AZURE_CLIENT_ID, "
            "AZURE_CLIENT_SECRET or AZURE_CLIENT_CERTIFICATE_PATH not set), workload identity "
            "(AZURE_FEDERATED_TOKEN_FILE, AZURE_CLIENT_ID, AZURE_TENANT_ID not set), managed "
            "identity (SLUICE_AZURE_METADATA_DISABLED is set), Azure CLI (not logged in: run "
            "'az login'), "
            "Azure PowerShell ('/nonexistent/pwsh' (SLUICE_AZURE_POWERSHELL) not found), "
            "Azure Developer CLI ('/nonexistent/azd' (SLUICE_AZURE_DEVELOPER_CLI) "
            "not found)");

  const std::string expired = FakeAz(
      dir_.path(), "az-expired", "", 2,
      "\nERROR: AADSTS700082: The refresh token has expired due to inactivity.\nTrace ID: 1\n");
  ScopedEnv cli2("SLUICE_AZURE_CLI", expired);
  const std::string tried =
      " (tried before: account key (no account key set), SAS token (no SAS token set), "
      "environment (AZURE_TENANT_ID, AZURE_CLIENT_ID, AZURE_CLIENT_SECRET or "
      "AZURE_CLIENT_CERTIFICATE_PATH not set), workload identity (AZURE_FEDERATED_TOKEN_FILE, "
      "AZURE_CLIENT_ID, AZURE_TENANT_ID not set), managed identity "
      "(SLUICE_AZURE_METADATA_DISABLED is set))";
  EXPECT_EQ(Resolve(), "permission denied: Azure CLI: '" + expired +
                           " account get-access-token': '" + expired +
                           "' exited with status 2: ERROR: AADSTS700082: The refresh token has "
                           "expired due to inactivity." + tried);

  // A token without an expiry is refused without quoting it.
  const std::string odd = FakeAz(dir_.path(), "az-odd", R"({"accessToken": "secret-cli-token"})");
  ScopedEnv cli3("SLUICE_AZURE_CLI", odd);
  const std::string refused = Resolve();
  EXPECT_EQ(refused, "permission denied: Azure CLI: '" + odd +
                         " account get-access-token' printed neither expires_on nor a readable "
                         "expiresOn" + tried);
  EXPECT_EQ(refused.find("secret-cli-token"), std::string::npos);
}

// The Azure Developer CLI comes after the Azure CLI, asked for a storage
// token as azure-identity's AzureDeveloperCliCredential asks.
TEST_F(AzureSourcesTest, AzureDeveloperCliTokenOfTheLoggedInAccount) {
  const std::string azd =
      FakeAz(dir_.path(), "azd", R"({"token": "azd-token-1", "expiresOn": "2023-11-14T23:13:20Z"})",
             0, "", "NO_COLOR");
  ScopedEnv dev("SLUICE_AZURE_DEVELOPER_CLI", azd);
  EXPECT_EQ(Resolve(), "Azure Developer CLI (" + azd + " auth token) -> azd-token-1");
  EXPECT_EQ(ReadFile(azd + ".args", 1 << 10).value(),
            "auth token --output json --no-prompt --scope https://storage.azure.com/.default\n"
            "NO_COLOR=true\n");
  auto got = MakeAzureCredentialChain({}, endpoints_)->Fetch(kNow);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->expires_at, kNow + 3600);  // 2023-11-14T23:13:20Z, whatever the time zone

  // The Azure CLI, when signed in, comes first.
  const std::string az = FakeAz(dir_.path(), "az",
                                R"({"accessToken": "cli-token-1", "expires_on": 1700003000})");
  {
    ScopedEnv cli("SLUICE_AZURE_CLI", az);
    EXPECT_EQ(Resolve(), "Azure CLI (" + az + " account get-access-token) -> cli-token-1");
  }
  // Found on PATH when SLUICE_AZURE_DEVELOPER_CLI is not set.
  ScopedEnv unset("SLUICE_AZURE_DEVELOPER_CLI", std::nullopt);
  ScopedEnv path("PATH", "/nonexistent/bin:" + dir_.path() + ":/usr/bin:/bin");
  ASSERT_EQ(::unlink(az.c_str()), 0);  // only azd on PATH
  EXPECT_EQ(Resolve(), "Azure Developer CLI (azd auth token) -> azd-token-1");
}

// Signed out, azd does not apply; its other failures stop the chain with
// azd's own error (the "error" of its JSON lines), never its stdout.
TEST_F(AzureSourcesTest, AzureDeveloperCliSignedOutOrFailing) {
  const std::string all_tried =
      "not found: no Azure credentials found; tried: account key (no account key set), SAS "
      "token (no SAS token set), environment (AZURE_TENANT_ID, AZURE_CLIENT_ID, "
      "AZURE_CLIENT_SECRET or AZURE_CLIENT_CERTIFICATE_PATH not set), workload identity "
      "(AZURE_FEDERATED_TOKEN_FILE, AZURE_CLIENT_ID, AZURE_TENANT_ID not set), managed identity "
      "(SLUICE_AZURE_METADATA_DISABLED is set), Azure CLI ('/nonexistent/az' (SLUICE_AZURE_CLI) "
      "not found), "
      "Azure PowerShell ('/nonexistent/pwsh' (SLUICE_AZURE_POWERSHELL) not found), "
      "Azure Developer CLI (";
  const std::string out = FakeAz(
      dir_.path(), "azd-out", "", 1,
      R"({"type":"consoleMessage","timestamp":"t","data":{"message":"\nERROR: fetching token: )"
      R"(not logged in, run `azd auth login` to login\n"}})" "\n",
      "NO_COLOR");
  ScopedEnv dev("SLUICE_AZURE_DEVELOPER_CLI", out);
  EXPECT_EQ(Resolve(), all_tried + "not logged in: run 'azd auth login')");

  const std::string failing = FakeAz(
      dir_.path(), "azd-failing", "", 1,
      R"({"type":"consoleMessage","timestamp":"t","data":{"message":""}})" "\n"
      R"({"error":"fetching token: AADSTS70043: The refresh token has expired.\nTrace ID: 2"})" "\n",
      "NO_COLOR");
  ScopedEnv dev2("SLUICE_AZURE_DEVELOPER_CLI", failing);
  const std::string refused = Resolve();
  EXPECT_EQ(refused.substr(0, refused.find(" (tried before:")),
            "permission denied: Azure Developer CLI: '" + failing + " auth token': '" + failing +
                "' exited with status 1: fetching token: AADSTS70043: The refresh token has "
                "expired.");

  const std::string odd = FakeAz(dir_.path(), "azd-odd", R"({"token": "secret-azd-token"})", 0, "",
                                 "NO_COLOR");
  ScopedEnv dev3("SLUICE_AZURE_DEVELOPER_CLI", odd);
  const std::string no_expiry = Resolve();
  EXPECT_EQ(no_expiry.substr(0, no_expiry.find(" (tried before:")),
            "permission denied: Azure Developer CLI: '" + odd +
                " auth token' printed no readable expiresOn");
  EXPECT_EQ(no_expiry.find("secret-azd-token"), std::string::npos);
}

// The script pwsh was given (-EncodedCommand: base64 of UTF-16LE), from the
// arguments a FakeAz recorded; "" unless they are azure-identity's flags.
std::string PowerShellScript(const std::string& args_file) {
  auto read = ReadFile(args_file, 1 << 16);
  const std::string args = read.ok() ? *read : "";
  const std::string flags = "-NoProfile -NonInteractive -EncodedCommand ";
  if (args.rfind(flags, 0) != 0) return "";
  std::string utf16;
  if (!Base64Decode(args.substr(flags.size(), args.find('\n') - flags.size()), &utf16)) return "";
  std::string script;
  for (size_t i = 0; i + 1 < utf16.size(); i += 2) {
    if (utf16[i + 1] != '\0') return "";  // the script is ASCII
    script += utf16[i];
  }
  return script;
}

// Azure PowerShell comes after the Azure CLI and before azd, as in
// DefaultAzureCredential; pwsh runs a Get-AzAccessToken script for the
// storage resource and its "azsdk%" line gives the token and its expiry.
TEST_F(AzureSourcesTest, AzurePowerShellTokenOfTheSignedInAccount) {
  const std::string pwsh = FakeAz(dir_.path(), "pwsh",
                                  "WARNING: Upcoming breaking changes in the cmdlet\n\n"
                                  "azsdk%ps-token-1%1700003000\n\n",
                                  0, "", "SLUICE_AZURE_POWERSHELL");
  ScopedEnv ps("SLUICE_AZURE_POWERSHELL", pwsh);
  // A unix time: the same instant whatever the local time zone.
  ScopedEnv tz("TZ", "America/New_York");
  ::tzset();
  auto got = MakeAzureCredentialChain({}, endpoints_)->Fetch(kNow);
  ScopedEnv tz_back("TZ", std::nullopt);
  ::tzset();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->source, "Azure PowerShell (" + pwsh + " Get-AzAccessToken)");
  EXPECT_EQ(got->bearer, "ps-token-1");
  EXPECT_EQ(got->expires_at, 1700003000);
  const std::string script = PowerShellScript(pwsh + ".args");
  EXPECT_NE(script.find("Import-Module -Name Az.Accounts -MinimumVersion '2.2.0' -PassThru"),
            std::string::npos) << script;
  EXPECT_NE(script.find("Write-Output 'NO_AZ_ACCOUNT_MODULE'; exit 0"), std::string::npos);
  EXPECT_NE(script.find("@{ ResourceUrl = 'https://storage.azure.com'; WarningAction = 'Ignore' }"),
            std::string::npos);
  EXPECT_NE(script.find("$token = Get-AzAccessToken @request\n"), std::string::npos);
  EXPECT_NE(script.find("\"`nazsdk%{0}%{1}`n\" -f $value, $token.ExpiresOn.ToUnixTimeSeconds()"),
            std::string::npos);
  EXPECT_EQ(script.find("TenantId"), std::string::npos);  // DefaultAzureCredential gives none

  // Before azd, both signed in.
  const std::string azd = FakeAz(dir_.path(), "azd",
                                 R"({"token": "azd-token-1", "expiresOn": "2023-11-14T23:13:20Z"})",
                                 0, "", "NO_COLOR");
  ScopedEnv dev("SLUICE_AZURE_DEVELOPER_CLI", azd);
  EXPECT_EQ(Resolve(), "Azure PowerShell (" + pwsh + " Get-AzAccessToken) -> ps-token-1");
  // After the Azure CLI, both signed in.
  const std::string az = FakeAz(dir_.path(), "az",
                                R"({"accessToken": "cli-token-1", "expires_on": 1700003000})");
  {
    ScopedEnv cli("SLUICE_AZURE_CLI", az);
    EXPECT_EQ(Resolve(), "Azure CLI (" + az + " account get-access-token) -> cli-token-1");
  }
  // Found on PATH when SLUICE_AZURE_POWERSHELL is not set.
  ScopedEnv unset("SLUICE_AZURE_POWERSHELL", std::nullopt);
  ScopedEnv path("PATH", "/nonexistent/bin:" + dir_.path() + ":/usr/bin:/bin");
  ASSERT_EQ(::unlink(az.c_str()), 0);  // not the Azure CLI on PATH
  EXPECT_EQ(Resolve(), "Azure PowerShell (pwsh Get-AzAccessToken) -> ps-token-1");
}

// Without Az.Accounts, signed out, refused by the execution policy, or
// failing in any other way, Azure PowerShell does not apply (as in
// DefaultAzureCredential, where all of these are "unavailable"): the chain
// goes on to azd and says why, quoting pwsh's error, never its stdout.
TEST_F(AzureSourcesTest, AzurePowerShellUnavailableGoesOnToAzd) {
  const std::string before =
      "not found: no Azure credentials found; tried: account key (no account key set), SAS "
      "token (no SAS token set), environment (AZURE_TENANT_ID, AZURE_CLIENT_ID, "
      "AZURE_CLIENT_SECRET or AZURE_CLIENT_CERTIFICATE_PATH not set), workload identity "
      "(AZURE_FEDERATED_TOKEN_FILE, AZURE_CLIENT_ID, AZURE_TENANT_ID not set), managed identity "
      "(SLUICE_AZURE_METADATA_DISABLED is set), Azure CLI ('/nonexistent/az' (SLUICE_AZURE_CLI) "
      "not found), Azure PowerShell (";
  const std::string after =
      "), Azure Developer CLI ('/nonexistent/azd' (SLUICE_AZURE_DEVELOPER_CLI) not found)";
  struct Case {
    std::string name, stdout_text, stderr_text;
    int status;
    std::string why;
  };
  const std::vector<Case> cases = {
      {"pwsh-no-module", "NO_AZ_ACCOUNT_MODULE\n", "", 0,
       "the Az.Accounts module (2.2.0 or later) is not installed"},
      {"pwsh-out", "secret-ps-output",
       "Get-AzAccessToken: Run Connect-AzAccount to login.\n", 1,
       "not logged in: run 'Connect-AzAccount'"},
      {"pwsh-policy", "", "File C:\\x.ps1 cannot be loaded. AuthorizationManager check failed.\n",
       1, "PowerShell's execution policy prevented running Get-AzAccessToken"},
      {"pwsh-failing", "secret-ps-output",
       "\nGet-AzAccessToken: ClientSecretCredential authentication failed: AADSTS7000215: "
       "Invalid client secret provided.\nTrace ID: 3\n",
       1, ""},
      {"pwsh-silent", "nothing to see\n", "", 0, ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string pwsh = FakeAz(dir_.path(), c.name, c.stdout_text, c.status, c.stderr_text,
                                    "SLUICE_AZURE_POWERSHELL");
    ScopedEnv ps("SLUICE_AZURE_POWERSHELL", pwsh);
    std::string why = c.why;
    if (c.name == "pwsh-failing") {
      why = "'" + pwsh + " Get-AzAccessToken': '" + pwsh +
            "' exited with status 1: Get-AzAccessToken: ClientSecretCredential authentication "
            "failed: AADSTS7000215: Invalid client secret provided.";
    } else if (c.name == "pwsh-silent") {
      why = "'" + pwsh + " Get-AzAccessToken' printed no 'azsdk%<token>%<expiry>' line";
    }
    const std::string tried = Resolve();
    EXPECT_EQ(tried, before + why + after);
    EXPECT_EQ(tried.find("secret-ps-output"), std::string::npos);
    // azd, signed in, is next.
    const std::string azd = FakeAz(dir_.path(), "azd",
                                   R"({"token": "azd-token-1", "expiresOn": "2023-11-14T23:13:20Z"})",
                                   0, "", "NO_COLOR");
    ScopedEnv dev("SLUICE_AZURE_DEVELOPER_CLI", azd);
    EXPECT_EQ(Resolve(), "Azure Developer CLI (" + azd + " auth token) -> azd-token-1");
  }
}

// A malformed token line stops the chain (as azure-identity's parse error
// stops DefaultAzureCredential), without quoting it.
TEST_F(AzureSourcesTest, AzurePowerShellMalformedTokenLineIsAnError) {
  for (const std::string line :
       {"azsdk%secret-ps-token%soon", "azsdk%secret-ps-token", "azsdk%%1700003000",
        "azsdk%secret-ps-token%1700003000%extra"}) {
    SCOPED_TRACE(line);
    const std::string pwsh = FakeAz(dir_.path(), "pwsh-odd", "\n" + line + "\n", 0, "",
                                    "SLUICE_AZURE_POWERSHELL");
    ScopedEnv ps("SLUICE_AZURE_POWERSHELL", pwsh);
    const std::string refused = Resolve();
    EXPECT_EQ(refused.substr(0, refused.find(" (tried before:")),
              "permission denied: Azure PowerShell: '" + pwsh +
                  " Get-AzAccessToken' printed a malformed 'azsdk%<token>%<expiry>' line");
    EXPECT_EQ(refused.find("secret-ps-token"), std::string::npos);
  }
}

}  // namespace
}  // namespace sluice
