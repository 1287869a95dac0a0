// The AWS chain against loopback fakes of STS, EC2 metadata and the container
// endpoint (aws_fakes.h): boto3's order when several sources are present,
// and a clear error from each source when it is broken.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "base/file.h"
#include "stores/credentials/aws_credential_chain.h"
#include "stores/credentials/aws_credential_documents.h"
#include "stores/signing/digest.h"
#include "tests/stores/common/node_servers.h"
#include "tests/stores/credentials/aws_fakes.h"
#include "tests/stores/credentials/aws_test_env.h"
#include "tests/stores/http/test_servers.h"

namespace sluice {
namespace {

using testing::AwsCleanEnv;
using testing::FakeContainerEndpoint;
using testing::FakeCredentialOptions;
using testing::FakeImds;
using testing::FakeSsoOidc;
using testing::FakeSsoPortal;
using testing::FakeSts;
using testing::ScopedEnv;
using testing::TempDir;

constexpr char kSourcesRole[] = "arn:aws:iam::123456789012:role/trainer";

FakeCredentialOptions Keys(const std::string& id) {
  FakeCredentialOptions o;
  o.keys = SigV4Credentials{id, "secret-of-" + id, ""};
  return o;
}

class AwsChainTest : public ::testing::Test {
 protected:
  void SetUp() override { env_ = std::make_unique<ScopedEnv>(AwsCleanEnv(dir_.path())); }

  void Write(const std::string& name, const std::string& text) {
    ASSERT_TRUE(WriteFileAtomic(dir_.path() + "/" + name, text).ok());
  }

  // The chain as OpenS3Store builds it: credential source and key id, or the error.
  std::string Resolve() {
    auto settings = LoadAwsSettings();
    if (!settings.ok()) return "settings: " + settings.status().ToString();
    AwsEndpointOptions endpoints;
    endpoints.dmi_dir = dir_.path() + "/dmi";  // no such folder: not EC2
    auto got = MakeAwsCredentialChain(*settings, endpoints)->Fetch(1700000000);
    if (!got.ok()) return got.status().ToString();
    return got->source + " -> " + got->keys.access_key_id;
  }

  TempDir dir_;
  std::unique_ptr<ScopedEnv> env_;
};

// Every source present at once, then removed one by one: each time the next
// in boto3's order answers.
TEST_F(AwsChainTest, SourcesAnswerInBoto3Order) {
  FakeSts sts(Keys("STS-KEY"), "BASE-KEY", "jwt-of-the-pod");
  FakeImds imds(Keys("IMDS-KEY"), "trainer");
  FakeContainerEndpoint container(Keys("TASK-KEY"), "/v2/credentials/task", "task-token");
  Write("token", "jwt-of-the-pod\n");
  Write("proc.sh",
        "#!/bin/sh\nprintf '{\"Version\": 1, \"AccessKeyId\": \"PROC-KEY\", "
        "\"SecretAccessKey\": \"s\"}'\n");
  ASSERT_EQ(::chmod((dir_.path() + "/proc.sh").c_str(), 0700), 0);
  Write("credentials",
        "[base]\naws_access_key_id = BASE-KEY\naws_secret_access_key = b\n"
        "[dev]\naws_access_key_id = FILE-KEY\naws_secret_access_key = f\n");
  Write("config", "[profile dev]\nrole_arn = " + std::string(kSourcesRole) +
                      "\nsource_profile = base\ncredential_process = " + dir_.path() +
                      "/proc.sh\naws_access_key_id = CONFIG-KEY\naws_secret_access_key = c\n");
  ScopedEnv env(std::map<std::string, std::optional<std::string>>{
      {"AWS_ACCESS_KEY_ID", "ENV-KEY"},
      {"AWS_SECRET_ACCESS_KEY", "e"},
      {"AWS_PROFILE", "dev"},
      {"AWS_ENDPOINT_URL_STS", sts.url()},
      {"AWS_WEB_IDENTITY_TOKEN_FILE", dir_.path() + "/token"},
      {"AWS_ROLE_ARN", kSourcesRole},
      {"AWS_CONTAINER_CREDENTIALS_FULL_URI", container.url() + "/v2/credentials/task"},
      {"AWS_CONTAINER_AUTHORIZATION_TOKEN", "task-token"},
      {"AWS_EC2_METADATA_DISABLED", "false"},
      {"AWS_EC2_METADATA_SERVICE_ENDPOINT", imds.url()}});
  EXPECT_EQ(Resolve(), "environment (AWS_ACCESS_KEY_ID) -> ENV-KEY");
  ScopedEnv no_env(std::map<std::string, std::optional<std::string>>{
      {"AWS_ACCESS_KEY_ID", std::nullopt}, {"AWS_SECRET_ACCESS_KEY", std::nullopt}});
  EXPECT_EQ(Resolve(), "assume role (profile 'dev') as " + std::string(kSourcesRole) + " -> STS-KEY");
  EXPECT_EQ(sts.last_form("Action"), "AssumeRole");
  EXPECT_EQ(sts.last_form("RoleSessionName"), "sluice-session-1700000000");
  // Without role_arn in the profile: web identity, from the environment.
  Write("config", "[profile dev]\ncredential_process = " + dir_.path() +
                      "/proc.sh\naws_access_key_id = CONFIG-KEY\naws_secret_access_key = c\n");
  EXPECT_EQ(Resolve(), "web identity as " + std::string(kSourcesRole) + " -> STS-KEY");
  EXPECT_EQ(sts.last_form("Action"), "AssumeRoleWithWebIdentity");
  ScopedEnv no_web(std::map<std::string, std::optional<std::string>>{
      {"AWS_WEB_IDENTITY_TOKEN_FILE", std::nullopt}, {"AWS_ROLE_ARN", std::nullopt}});
  EXPECT_EQ(Resolve(), "shared credentials file (profile 'dev') -> FILE-KEY");
  Write("credentials", "[base]\naws_access_key_id = BASE-KEY\naws_secret_access_key = b\n");
  EXPECT_EQ(Resolve(), "credential_process (profile 'dev') -> PROC-KEY");
  Write("config", "[profile dev]\naws_access_key_id = CONFIG-KEY\naws_secret_access_key = c\n");
  EXPECT_EQ(Resolve(), "config file (profile 'dev') -> CONFIG-KEY");
  Write("config", "[profile dev]\nregion = eu-west-1\n");
  EXPECT_EQ(Resolve(), "container endpoint -> TASK-KEY");
  ScopedEnv no_container("AWS_CONTAINER_CREDENTIALS_FULL_URI", std::nullopt);
  EXPECT_EQ(Resolve(), "EC2 instance metadata (role 'trainer') -> IMDS-KEY");
  EXPECT_EQ(imds.refused(), 0);
  ScopedEnv no_imds("AWS_EC2_METADATA_DISABLED", "true");
  const std::string d = dir_.path();
  EXPECT_EQ(
      Resolve(),
      "not found: no AWS credentials found; tried: environment (AWS_ACCESS_KEY_ID not set), "
      "assume role (profile 'dev') (profile 'dev' has no role_arn with source_profile or "
      "credential_source), web identity (AWS_WEB_IDENTITY_TOKEN_FILE not set and profile "
      "'dev' has no web_identity_token_file), SSO (profile 'dev') (profile 'dev' has no "
      "sso_session or sso_start_url), shared credentials file (profile 'dev') (no "
      "profile 'dev' in " +
          d +
          "/credentials), credential_process (profile 'dev') "
          "(profile 'dev' has no credential_process in " +
          d +
          "/config), config file (profile "
          "'dev') (profile 'dev' has no keys in " +
          d +
          "/config), container endpoint "
          "(AWS_CONTAINER_CREDENTIALS_RELATIVE_URI and AWS_CONTAINER_CREDENTIALS_FULL_URI not "
          "set), EC2 instance metadata (AWS_EC2_METADATA_DISABLED is true)");
}

TEST_F(AwsChainTest, CredentialSourceOfARoleProfileSignsAssumeRole) {
  FakeSts sts(Keys("STS-KEY"), "ENV-BASE", "");
  Write("config", "[profile ci]\nrole_arn = " + std::string(kSourcesRole) +
                      "\ncredential_source = Environment\nrole_session_name = nightly\n"
                      "external_id = ext-7\nduration_seconds = 900\n");
  ScopedEnv env(std::map<std::string, std::optional<std::string>>{
      {"AWS_PROFILE", "ci"}, {"AWS_ENDPOINT_URL_STS", sts.url()}});
  // The environment source comes first: with keys there it answers itself;
  // here the profile's own credential_source reads them (boto3 does the same).
  {
    ScopedEnv keys(std::map<std::string, std::optional<std::string>>{
        {"AWS_ACCESS_KEY_ID", "ENV-BASE"}, {"AWS_SECRET_ACCESS_KEY", "e"}});
    EXPECT_EQ(Resolve(), "environment (AWS_ACCESS_KEY_ID) -> ENV-BASE");
  }
  EXPECT_EQ(
      Resolve(),
      "invalid argument: assume role (profile 'ci'): profile 'ci' in " + dir_.path() +
          "/config: credential_source Environment gave no credentials "
          "(AWS_ACCESS_KEY_ID not set) (tried before: environment (AWS_ACCESS_KEY_ID not set))");
}

// A role profile whose source_profile is itself a role profile: the roles
// are assumed in order, each signed by the credentials of the one before
// (boto3's role chaining); a cycle is refused naming its profiles.
TEST_F(AwsChainTest, RoleChainsAreAssumedInOrderAndCyclesRefused) {
  FakeSts sts(Keys("STS-KEY"), "BASE-KEY", "");
  const std::string kHub = "arn:aws:iam::111111111111:role/hub";
  const std::string kData = "arn:aws:iam::222222222222:role/data";
  Write("credentials", "[base]\naws_access_key_id = BASE-KEY\naws_secret_access_key = b\n");
  Write("config", "[profile data]\nrole_arn = " + kData + "\nsource_profile = hub\n"
                  "role_session_name = reader\n[profile hub]\nrole_arn = " + kHub +
                  "\nsource_profile = base\n");
  ScopedEnv env(std::map<std::string, std::optional<std::string>>{
      {"AWS_PROFILE", "data"}, {"AWS_ENDPOINT_URL_STS", sts.url()}});
  EXPECT_EQ(Resolve(), "assume role (profile 'data') as " + kData + " -> STS-KEY");
  EXPECT_EQ(sts.assumed(), (std::vector<std::string>{
                               kHub + " by BASE-KEY", kData + " by STS-KEY with sts-session-1"}));
  EXPECT_EQ(sts.last_form("RoleSessionName"), "reader");

  // Static keys in the source profile win over its role (as boto3).
  Write("credentials", "[base]\naws_access_key_id = BASE-KEY\naws_secret_access_key = b\n"
                       "[hub]\naws_access_key_id = BASE-KEY\naws_secret_access_key = h\n");
  EXPECT_EQ(Resolve(), "assume role (profile 'data') as " + kData + " -> STS-KEY");
  EXPECT_EQ(sts.assumed().back(), kData + " by BASE-KEY");
  EXPECT_EQ(sts.assumed().size(), 3u);

  // A profile naming itself is fine for its own static keys only.
  Write("credentials", "[data]\naws_access_key_id = BASE-KEY\naws_secret_access_key = d\n");
  Write("config", "[profile data]\nrole_arn = " + kData + "\nsource_profile = data\n");
  EXPECT_EQ(Resolve(), "assume role (profile 'data') as " + kData + " -> STS-KEY");
  EXPECT_EQ(sts.assumed().back(), kData + " by BASE-KEY");
  EXPECT_EQ(sts.assumed().size(), 4u);
  Write("credentials", "");
  const std::string cfg = dir_.path() + "/config";
  std::string self = Resolve();
  EXPECT_EQ(self.rfind("invalid argument: assume role (profile 'data'): profile 'data' in " + cfg +
                           ": source_profile makes a cycle: 'data' -> 'data' (tried before: ",
                       0),
            0u)
      << self;
  Write("config", "[profile data]\nrole_arn = " + kData + "\nsource_profile = hub\n"
                  "[profile hub]\nrole_arn = " + kHub + "\nsource_profile = edge\n"
                  "[profile edge]\nrole_arn = " + kHub + "\nsource_profile = data\n");
  std::string cycle = Resolve();
  EXPECT_EQ(cycle.rfind("invalid argument: assume role (profile 'data'): profile 'edge' in " +
                            cfg + ": source_profile makes a cycle: 'data' -> 'hub' -> 'edge' -> "
                            "'data' (tried before: ",
                        0),
            0u)
      << cycle;
  EXPECT_EQ(sts.assumed().size(), 4u);  // nothing sent for a cycle
  Write("config", "[profile data]\nrole_arn = " + kData + "\nsource_profile = hub\n"
                  "[profile hub]\nregion = eu-west-1\n");
  std::string dead_end = Resolve();
  EXPECT_EQ(dead_end.rfind("invalid argument: assume role (profile 'data'): profile 'data' in " +
                               cfg + ": source_profile 'hub' has no static keys, SSO settings, "
                               "credential_process, nor role_arn with source_profile or "
                               "credential_source (tried before: ",
                           0),
            0u)
      << dead_end;

  // A source profile's credential_process signs too (as boto3), at the end of a chain.
  Write("proc.sh",
        "#!/bin/sh\nprintf '{\"Version\": 1, \"AccessKeyId\": \"BASE-KEY\", "
        "\"SecretAccessKey\": \"p\"}'\n");
  ASSERT_EQ(::chmod((dir_.path() + "/proc.sh").c_str(), 0700), 0);
  Write("config", "[profile data]\nrole_arn = " + kData + "\nsource_profile = hub\n"
                  "[profile hub]\nrole_arn = " + kHub + "\nsource_profile = proc\n"
                  "[profile proc]\ncredential_process = " + dir_.path() + "/proc.sh\n");
  EXPECT_EQ(Resolve(), "assume role (profile 'data') as " + kData + " -> STS-KEY");
  auto assumed = sts.assumed();
  ASSERT_EQ(assumed.size(), 6u);
  EXPECT_EQ(assumed[4], kHub + " by BASE-KEY");
  EXPECT_EQ(assumed[5].rfind(kData + " by STS-KEY with sts-session-", 0), 0u) << assumed[5];
}

TEST_F(AwsChainTest, BrokenSourcesSayWhatIsWrong) {
  FakeSts sts(Keys("STS-KEY"), "BASE-KEY", "jwt-of-the-pod");
  ScopedEnv sts_env("AWS_ENDPOINT_URL_STS", sts.url());
  {
    ScopedEnv env("AWS_SECRET_ACCESS_KEY", "only-half");
    EXPECT_EQ(Resolve(),
              "permission denied: environment: only one of AWS_ACCESS_KEY_ID and "
              "AWS_SECRET_ACCESS_KEY is set; set both");
  }
  {
    ScopedEnv env(std::map<std::string, std::optional<std::string>>{
        {"AWS_WEB_IDENTITY_TOKEN_FILE", dir_.path() + "/token"}, {"AWS_ROLE_ARN", std::nullopt}});
    EXPECT_EQ(Resolve(),
              "invalid argument: web identity: AWS_WEB_IDENTITY_TOKEN_FILE is set but AWS_ROLE_ARN "
              "is not (tried before: environment (AWS_ACCESS_KEY_ID not set), assume role "
              "(profile 'default') (profile 'default' has no role_arn with source_profile or "
              "credential_source))");
    ScopedEnv role("AWS_ROLE_ARN", kSourcesRole);
    std::string missing = Resolve();
    EXPECT_EQ(missing.rfind("permission denied: web identity: AWS_WEB_IDENTITY_TOKEN_FILE: cannot "
                            "read the token file: ",
                            0),
              0u)
        << missing;
    Write("token", "not-the-pods-jwt");
    std::string refused = Resolve();
    EXPECT_NE(refused.find("web identity: AWS_WEB_IDENTITY_TOKEN_FILE: STS "
                           "AssumeRoleWithWebIdentity for " +
                           std::string(kSourcesRole) + " failed: "),
              std::string::npos)
        << refused;
    EXPECT_NE(refused.find("InvalidIdentityToken"), std::string::npos) << refused;
    EXPECT_EQ(refused.find("not-the-pods-jwt"), std::string::npos) << refused;
  }
  {
    FakeContainerEndpoint container(Keys("TASK-KEY"), "/creds", "right-token");
    ScopedEnv env(std::map<std::string, std::optional<std::string>>{
        {"AWS_CONTAINER_CREDENTIALS_FULL_URI", container.url() + "/creds"},
        {"AWS_CONTAINER_AUTHORIZATION_TOKEN", "wrong-token"}});
    std::string refused = Resolve();
    EXPECT_EQ(refused.rfind("permission denied: container endpoint: ", 0), 0u) << refused;
    EXPECT_NE(refused.find("401"), std::string::npos) << refused;
    EXPECT_EQ(refused.find("wrong-token"), std::string::npos) << refused;
    Write("token-file", "right-token\n");
    ScopedEnv file("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", dir_.path() + "/token-file");
    EXPECT_EQ(Resolve(), "container endpoint -> TASK-KEY");  // the file wins over the variable
    ScopedEnv far("AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://198.51.100.7/creds");
    EXPECT_EQ(Resolve(),
              "invalid argument: container endpoint: AWS_CONTAINER_CREDENTIALS_FULL_URI "
              "http://198.51.100.7/creds: plain http only to a loopback address, 169.254.170.2 "
              "or 169.254.170.23 (tried before: environment (AWS_ACCESS_KEY_ID not set), assume "
              "role (profile 'default') (profile 'default' has no role_arn with source_profile "
              "or credential_source), web identity (AWS_WEB_IDENTITY_TOKEN_FILE not set and "
              "profile 'default' has no web_identity_token_file), SSO (profile 'default') (profile "
              "'default' has no sso_session or sso_start_url), shared credentials file "
              "(profile 'default') (no profile 'default' in " +
                  dir_.path() +
                  "/credentials), "
                  "credential_process (profile 'default') (profile 'default' has no "
                  "credential_process in " +
                  dir_.path() +
                  "/config), config file (profile "
                  "'default') (no profile 'default' in " +
                  dir_.path() + "/config))");
  }
  {
    FakeImds no_role(Keys("IMDS-KEY"), "");
    ScopedEnv env(std::map<std::string, std::optional<std::string>>{
        {"AWS_EC2_METADATA_DISABLED", std::nullopt},
        {"AWS_EC2_METADATA_SERVICE_ENDPOINT", no_role.url()}});
    std::string got = Resolve();
    EXPECT_NE(got.find("permission denied: EC2 instance metadata: " + no_role.url() +
                       ": the instance has no IAM role attached"),
              std::string::npos)
        << got;
  }
  {
    Write("config", "[default]\ncredential_process = " + dir_.path() + "/fails.sh\n");
    Write("fails.sh", "#!/bin/sh\necho 'expired session' >&2\nexit 3\n");
    ASSERT_EQ(::chmod((dir_.path() + "/fails.sh").c_str(), 0700), 0);
    std::string got = Resolve();
    EXPECT_NE(got.find("permission denied: credential_process (profile 'default'): '" +
                       dir_.path() + "/fails.sh' exited with status 3"),
              std::string::npos)
        << got;
    Write("fails.sh", "#!/bin/sh\necho '{\"AccessKeyId\": \"A\", \"SecretAccessKey\": \"S\"}'\n");
    ASSERT_EQ(::chmod((dir_.path() + "/fails.sh").c_str(), 0700), 0);
    got = Resolve();
    EXPECT_NE(got.find("answered JSON without \"Version\": 1"), std::string::npos) << got;
  }
}

TEST_F(AwsChainTest, SsoProfileComesBeforeTheProfilesKeysAndNeedsALiveLogin) {
  const std::string home = dir_.path() + "/home";
  FakeSsoPortal portal(Keys("SSO-KEY"), "sso-access-token", "123456789012", "Trainer");
  Write("credentials", "[dev]\naws_access_key_id = FILE-KEY\naws_secret_access_key = f\n");
  Write("config",
        "[profile dev]\nsso_session = corp\nsso_account_id = 123456789012\n"
        "sso_role_name = Trainer\n[sso-session corp]\n"
        "sso_start_url = https://corp.awsapps.com/start\nsso_region = eu-west-1\n");
  ASSERT_TRUE(MakeDirs(home + "/.aws/sso/cache").ok());
  const std::string cache = home + "/.aws/sso/cache/" + Sha1Hex("corp") + ".json";
  ScopedEnv env(std::map<std::string, std::optional<std::string>>{
      {"AWS_PROFILE", "dev"}, {"HOME", home}, {"AWS_ENDPOINT_URL_SSO", portal.url()}});
  EXPECT_EQ(Resolve(), "permission denied: SSO (profile 'dev'): no SSO token in " + cache +
                           ": run 'aws sso login --profile dev' (tried before: environment "
                           "(AWS_ACCESS_KEY_ID not set), assume role (profile 'dev') (profile "
                           "'dev' has no role_arn with source_profile or credential_source), web "
                           "identity (AWS_WEB_IDENTITY_TOKEN_FILE not set and profile 'dev' has "
                           "no web_identity_token_file))");
  ASSERT_TRUE(WriteFileAtomic(cache, "{\"accessToken\": \"sso-access-token\", \"expiresAt\": \"" +
                                         testing::Iso8601(1700000000 + 3600) + "\"}")
                  .ok());
  EXPECT_EQ(Resolve(), "SSO (profile 'dev') as role Trainer in account 123456789012 -> SSO-KEY");
  ASSERT_TRUE(WriteFileAtomic(cache, "{\"accessToken\": \"sso-access-token\", \"expiresAt\": \"" +
                                         testing::Iso8601(1700000000 - 1) + "\"}")
                  .ok());
  std::string expired = Resolve();
  // A cache without the registration and refresh token cannot be refreshed.
  EXPECT_EQ(expired.rfind("permission denied: SSO (profile 'dev'): the SSO token in " + cache +
                              " has expired and could not be refreshed (it holds no "
                              "refreshToken, clientId, clientSecret and registrationExpiresAt "
                              "to refresh it with): run 'aws sso login --profile dev'",
                          0),
            0u)
      << expired;
  EXPECT_EQ(portal.answers(), 1);
}

// An sso-session token about to expire is refreshed through SSO-OIDC with
// the cached registration and refresh token, and written back as the AWS
// CLI writes it; a failed refresh keeps a still-valid token, and once the
// token has expired says why and to log in again, never a secret.
TEST_F(AwsChainTest, SsoTokenIsRefreshedThroughOidcAndWrittenBack) {
  const int64_t now = 1700000000;  // Resolve()'s clock
  const std::string home = dir_.path() + "/home";
  FakeSsoPortal portal(Keys("SSO-KEY"), "sso-access-token", "123456789012", "Trainer");
  FakeSsoOidc oidc("client-7", "client-secret-Zq8", "refresh-0", "sso-access-token", 28800);
  Write("config",
        "[profile dev]\nsso_session = corp\nsso_account_id = 123456789012\n"
        "sso_role_name = Trainer\n[sso-session corp]\n"
        "sso_start_url = https://corp.awsapps.com/start\nsso_region = eu-west-1\n");
  ASSERT_TRUE(MakeDirs(home + "/.aws/sso/cache").ok());
  const std::string cache = home + "/.aws/sso/cache/" + Sha1Hex("corp") + ".json";
  ScopedEnv env(std::map<std::string, std::optional<std::string>>{
      {"AWS_PROFILE", "dev"},
      {"HOME", home},
      {"AWS_ENDPOINT_URL_SSO", portal.url()},
      {"AWS_ENDPOINT_URL_SSO_OIDC", oidc.url()}});
  const std::string ok = "SSO (profile 'dev') as role Trainer in account 123456789012 -> SSO-KEY";

  // Expired: refreshed, used, written back (mode 0600, the CLI's fields and order).
  ASSERT_TRUE(WriteFileAtomic(cache, testing::CachedSsoToken("stale-token", now - 60, "refresh-0", now + 86400)).ok());
  EXPECT_EQ(Resolve(), ok);
  EXPECT_EQ(oidc.answers(), 1);
  EXPECT_EQ(*ReadFile(cache), testing::CachedSsoToken("sso-access-token", now + 28800, "refresh-1", now + 86400));
  struct stat st{};
  ASSERT_EQ(::stat(cache.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  // More than 15 minutes left: no refresh.
  EXPECT_EQ(Resolve(), ok);
  EXPECT_EQ(oidc.answers(), 1);

  // Less than 15 minutes left: refreshed ahead, with the rotated refresh token.
  ASSERT_TRUE(
      WriteFileAtomic(cache, testing::CachedSsoToken("sso-access-token", now + 600, "refresh-1", now + 86400)).ok());
  EXPECT_EQ(Resolve(), ok);
  EXPECT_EQ(oidc.answers(), 2);
  EXPECT_EQ(*ReadFile(cache), testing::CachedSsoToken("sso-access-token", now + 28800, "refresh-2", now + 86400));

  // A refused refresh (a refresh token already used) keeps a token still valid...
  const std::string stale_refresh =
      testing::CachedSsoToken("sso-access-token", now + 600, "refresh-1", now + 86400);
  ASSERT_TRUE(WriteFileAtomic(cache, stale_refresh).ok());
  EXPECT_EQ(Resolve(), ok);
  EXPECT_EQ(oidc.refused(), 1);
  EXPECT_EQ(*ReadFile(cache), stale_refresh);  // left as it was

  // ... and once it has expired, says why.
  ASSERT_TRUE(WriteFileAtomic(cache, testing::CachedSsoToken("sso-access-token", now - 1, "refresh-1", now + 86400)).ok());
  std::string refused = Resolve();
  EXPECT_EQ(refused.rfind("permission denied: SSO (profile 'dev'): the SSO token in " + cache +
                              " has expired and could not be refreshed (SSO-OIDC CreateToken "
                              "failed: POST " + oidc.url() + "/token: HTTP 400",
                          0),
            0u)
      << refused;
  EXPECT_NE(refused.find("(invalid_grant)"), std::string::npos) << refused;
  EXPECT_NE(refused.find("): run 'aws sso login --profile dev' (tried before: "), std::string::npos)
      << refused;
  for (const char* secret : {"client-secret-Zq8", "refresh-1", "sso-access-token"}) {
    EXPECT_EQ(refused.find(secret), std::string::npos) << secret << " in " << refused;
  }
  EXPECT_EQ(oidc.refused(), 2);

  // An expired client registration is not sent at all.
  ASSERT_TRUE(WriteFileAtomic(cache, testing::CachedSsoToken("sso-access-token", now - 1, "refresh-2", now - 5)).ok());
  EXPECT_EQ(Resolve().rfind("permission denied: SSO (profile 'dev'): the SSO token in " + cache +
                                " has expired and could not be refreshed (its client "
                                "registration expired at " + testing::Iso8601(now - 5) +
                                "): run 'aws sso login --profile dev'",
                            0),
            0u);
  EXPECT_EQ(oidc.answers() + oidc.refused(), 4);
  EXPECT_EQ(portal.answers(), 4);
}

// The relative URI is resolved against 169.254.170.2 (ECS); here that base
// is swapped for a loopback fake, the only way to test it without leaving
// the machine.
TEST_F(AwsChainTest, ContainerRelativeUriIsResolvedAgainstTheContainerHost) {
  FakeContainerEndpoint container(Keys("TASK-KEY"), "/v2/credentials/5f3a", "");
  ScopedEnv env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "/v2/credentials/5f3a");
  AwsEndpointOptions endpoints;
  endpoints.dmi_dir = dir_.path() + "/dmi";
  endpoints.container_host = container.url();
  auto got = MakeAwsContainerSource(endpoints)->Fetch(0);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->keys.access_key_id, "TASK-KEY");
  EXPECT_EQ(got->keys.session_token, "container-session-1");
  EXPECT_TRUE(got->expires_at.has_value());
}

TEST(AwsEc2DetectionTest, OnlyDmiNamingAmazonOrEc2CountsAsEc2) {
  TempDir dir;
  std::string why;
  EXPECT_FALSE(DmiSaysEc2(dir.path(), &why));
  EXPECT_EQ(why, "not on EC2 (" + dir.path() +
                     "/{sys_vendor,product_name,board_vendor} name neither Amazon nor EC2; set "
                     "AWS_EC2_METADATA_SERVICE_ENDPOINT to probe anyway)");
  ASSERT_TRUE(WriteFileAtomic(dir.path() + "/sys_vendor", "QEMU\n").ok());
  EXPECT_FALSE(DmiSaysEc2(dir.path(), &why));
  ASSERT_TRUE(WriteFileAtomic(dir.path() + "/product_name", "m5.large\n").ok());
  ASSERT_TRUE(WriteFileAtomic(dir.path() + "/board_vendor", "Amazon EC2\n").ok());
  EXPECT_TRUE(DmiSaysEc2(dir.path(), &why));
}

TEST(AwsDocumentsTest, ParsesWhatTheEndpointsAnswer) {
  auto process = ParseAwsCredentialJson(
      R"({"Version": 1, "AccessKeyId": "A", "SecretAccessKey": "S", "SessionToken": "T",
          "Expiration": "2026-11-26T15:04:05Z"})",
      AwsCredentialJson::kProcess, "proc");
  ASSERT_TRUE(process.ok()) << process.status().ToString();
  EXPECT_EQ(process->keys.session_token, "T");
  EXPECT_EQ(*process->expires_at, 1795705445);
  auto imds = ParseAwsCredentialJson(R"({"Code": "AssumeRoleUnauthorizedAccess"})",
                                     AwsCredentialJson::kEndpoint, "imds");
  EXPECT_EQ(imds.status().message(), "imds answered Code 'AssumeRoleUnauthorizedAccess'");
  // A Code that could carry another value of the document is not quoted
  // (found by the fuzzer: a token spliced into Code).
  auto spliced = ParseAwsCredentialJson(
      R"({"Code": "UsFQoGEXAMPLETOKENss", "AccessKeyId": "A", "Token": "FQoGEXAMPLETOKEN"})",
      AwsCredentialJson::kEndpoint, "imds");
  EXPECT_EQ(spliced.status().message(), "imds answered Code of 20 characters");
  auto secretless = ParseAwsCredentialJson(R"({"AccessKeyId": "A", "Token": "sekrit"})",
                                           AwsCredentialJson::kEndpoint, "box");
  EXPECT_EQ(secretless.status().message(), "box answered without AccessKeyId and SecretAccessKey");
  auto sts = ParseStsCredentialsXml(
      "<AssumeRoleResponse><AssumeRoleResult><Credentials><AccessKeyId>A</AccessKeyId>"
      "<SecretAccessKey>S&amp;</SecretAccessKey><SessionToken>T</SessionToken>"
      "<Expiration>2026-11-26T15:04:05Z</Expiration></Credentials></AssumeRoleResult>"
      "</AssumeRoleResponse>",
      "AssumeRole", "sts");
  ASSERT_TRUE(sts.ok()) << sts.status().ToString();
  EXPECT_EQ(sts->keys.secret_access_key, "S&");
  EXPECT_EQ(ParseStsCredentialsXml("<x/>", "AssumeRole", "sts").status().message(),
            "sts: STS answered AssumeRole without Credentials (AccessKeyId, SecretAccessKey)");
}

TEST(AwsDocumentsTest, CommandLinesSplitAsAShellWould) {
  auto words = SplitCommandLine(R"(aws-vault exec 'my profile' --json "a \"b\"" c\ d)");
  ASSERT_TRUE(words.ok());
  EXPECT_EQ(*words, (std::vector<std::string>{"aws-vault", "exec", "my profile", "--json",
                                              "a \"b\"", "c d"}));
  EXPECT_EQ(SplitCommandLine("say 'unterminated").status().message(), "unterminated ' quote");
}

}  // namespace
}  // namespace sluice
