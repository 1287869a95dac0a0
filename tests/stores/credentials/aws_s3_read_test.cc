// Every AWS credential source used for real reads through the SigV4-checking
// s3rver (it knows one key pair; the fakes of STS, EC2 metadata and the
// container endpoint hand that pair out as temporary credentials), a
// credential refreshed while a read streams, and one fetch shared by all
// stores of the process.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>

#include "base/file.h"
#include "stores/credentials/aws_credential_chain.h"
#include "stores/signing/digest.h"
#include "tests/stores/common/node_server_suite.h"
#include "tests/stores/credentials/aws_fakes.h"
#include "tests/stores/credentials/aws_test_env.h"

namespace sluice {
namespace {

using testing::FakeContainerEndpoint;
using testing::FakeCredentialOptions;
using testing::FakeImds;
using testing::FakeSts;
using testing::NodeServer;
using testing::ScopedEnv;

constexpr char kKeyId[] = "SLUICECREDKEY";
constexpr char kSecret[] = "cr3d-s3cr3t-never-printed";
constexpr char kRole[] = "arn:aws:iam::123456789012:role/trainer";

FakeCredentialOptions S3rverKeys(int64_t lifetime_s = 3600) {
  FakeCredentialOptions o;
  o.keys = SigV4Credentials{kKeyId, kSecret, ""};
  o.lifetime_s = lifetime_s;
  return o;
}

class AwsSourcesS3Test : public testing::NodeServerSuite<AwsSourcesS3Test> {
 public:
  static std::unique_ptr<NodeServer> StartServer(const std::string& dir) {
    return testing::StartS3rver(dir, kKeyId, kSecret, {"bkt"});
  }
  static std::map<std::string, std::optional<std::string>> StoreEnv() {
    auto env = testing::AwsCleanEnv(dir_->path());
    env["S3_ENDPOINT_URL"] = "http://127.0.0.1:" + std::to_string(server_->port());
    return env;
  }

 protected:
  void Write(const std::string& name, const std::string& text) {
    ASSERT_TRUE(WriteFileAtomic(dir_->path() + "/" + name, text).ok());
  }
  // A legacy SSO profile 'sso' (start URL and region in the profile) and a
  // live `aws sso login` for it: the token cache named by the URL's sha1,
  // under a home of its own, which it returns.
  std::string WriteSsoLogin() {
    const std::string home = dir_->path() + "/home";
    const std::string start_url = "https://corp.awsapps.com/start";
    EXPECT_TRUE(MakeDirs(home + "/.aws/sso/cache").ok());
    EXPECT_TRUE(
        WriteFileAtomic(home + "/.aws/sso/cache/" + Sha1Hex(start_url) + ".json",
                        "{\"accessToken\": \"sso-access-token\", \"expiresAt\": \"" +
                            testing::Iso8601(std::time(nullptr) + 3600) + "\"}")
            .ok());
    Write("config", "[profile sso]\nsso_start_url = " + start_url +
                        "\nsso_region = us-east-1\nsso_account_id = 123456789012\n"
                        "sso_role_name = Trainer\n");
    return home;
  }
  void TearDown() override {
    if (dir_ == nullptr) return;  // skipped: the servers cannot run here
    (void)::unlink((dir_->path() + "/credentials").c_str());
    (void)::unlink((dir_->path() + "/config").c_str());
  }

  // Writes and reads back an object through a store opened now; returns
  // the source the store signs with ("" and a failure when it cannot).
  std::string ReadThroughS3rver(const std::string& object) {
    auto store = Open("s3://bkt");
    if (store == nullptr) return "";
    Status put = loop_.Run(store->Put(object, "payload of " + object));
    EXPECT_TRUE(put.ok()) << put.ToString() << "\n" << server_->Log();
    auto got = loop_.Run(store->Get(object));
    EXPECT_TRUE(got.ok()) << got.status().ToString();
    if (got.ok()) {
      EXPECT_EQ(*got, "payload of " + object);
    }
    auto settings = LoadAwsSettings();
    if (!settings.ok()) return settings.status().ToString();
    auto current = AwsSharedCredential(*settings)->Get();  // the store's own, shared
    return current.ok() ? current->source : current.status().ToString();
  }
};

TEST_F(AwsSourcesS3Test, EnvironmentKeys) {
  ScopedEnv env(std::map<std::string, std::optional<std::string>>{
      {"AWS_ACCESS_KEY_ID", kKeyId}, {"AWS_SECRET_ACCESS_KEY", kSecret}});
  EXPECT_EQ(ReadThroughS3rver("env.txt"), "environment (AWS_ACCESS_KEY_ID)");
}

TEST_F(AwsSourcesS3Test, SharedFilesAndCredentialProcess) {
  Write("credentials", std::string("[files]\naws_access_key_id = ") + kKeyId +
                           "\naws_secret_access_key = " + kSecret + "\n");
  Write("proc.sh", std::string("#!/bin/sh\nprintf '{\"Version\": 1, \"AccessKeyId\": \"") + kKeyId +
                       "\", \"SecretAccessKey\": \"" + kSecret +
                       "\", \"SessionToken\": \"proc-token\", \"Expiration\": \"" +
                       testing::Iso8601(std::time(nullptr) + 3600) + "\"}'\n");
  ASSERT_EQ(::chmod((dir_->path() + "/proc.sh").c_str(), 0700), 0);
  Write("config", "[profile proc]\ncredential_process = " + dir_->path() +
                      "/proc.sh\n[profile cfg]\naws_access_key_id = " + kKeyId +
                      "\naws_secret_access_key = " + kSecret + "\n");
  {
    ScopedEnv env("AWS_PROFILE", "files");
    EXPECT_EQ(ReadThroughS3rver("files.txt"), "shared credentials file (profile 'files')");
  }
  {
    ScopedEnv env("AWS_PROFILE", "proc");
    EXPECT_EQ(ReadThroughS3rver("proc.txt"), "credential_process (profile 'proc')");
  }
  ScopedEnv env("AWS_PROFILE", "cfg");
  EXPECT_EQ(ReadThroughS3rver("cfg.txt"), "config file (profile 'cfg')");
}

TEST_F(AwsSourcesS3Test, AssumeRoleAndWebIdentityThroughFakeSts) {
  FakeSts sts(S3rverKeys(), "BASEKEY", "jwt-of-the-pod");
  Write("credentials", "[base]\naws_access_key_id = BASEKEY\naws_secret_access_key = b\n");
  Write("config", "[profile role]\nrole_arn = " + std::string(kRole) + "\nsource_profile = base\n");
  Write("token", "jwt-of-the-pod");
  ScopedEnv sts_env("AWS_ENDPOINT_URL_STS", sts.url());
  {
    ScopedEnv env("AWS_PROFILE", "role");
    EXPECT_EQ(ReadThroughS3rver("role.txt"),
              "assume role (profile 'role') as " + std::string(kRole));
  }
  ScopedEnv env(std::map<std::string, std::optional<std::string>>{
      {"AWS_WEB_IDENTITY_TOKEN_FILE", dir_->path() + "/token"},
      {"AWS_ROLE_ARN", kRole},
      {"AWS_ROLE_SESSION_NAME", "pod-7"}});
  EXPECT_EQ(ReadThroughS3rver("irsa.txt"), "web identity as " + std::string(kRole));
  EXPECT_EQ(sts.last_form("RoleSessionName"), "pod-7");
  EXPECT_EQ(sts.answers(), 2);
}

TEST_F(AwsSourcesS3Test, SsoProfileThroughFakePortal) {
  testing::FakeSsoPortal portal(S3rverKeys(), "sso-access-token", "123456789012", "Trainer");
  const std::string home = WriteSsoLogin();
  ScopedEnv env(std::map<std::string, std::optional<std::string>>{
      {"AWS_PROFILE", "sso"}, {"HOME", home}, {"AWS_ENDPOINT_URL_SSO", portal.url()}});
  EXPECT_EQ(ReadThroughS3rver("sso.txt"),
            "SSO (profile 'sso') as role Trainer in account 123456789012");
  EXPECT_EQ(portal.answers(), 1);
}

TEST_F(AwsSourcesS3Test, ContainerEndpointAndInstanceMetadataThroughFakes) {
  {
    FakeContainerEndpoint container(S3rverKeys(), "/v2/credentials/abc", "pod-identity-token");
    Write("pod-token", "pod-identity-token\n");
    ScopedEnv env(std::map<std::string, std::optional<std::string>>{
        {"AWS_CONTAINER_CREDENTIALS_FULL_URI", container.url() + "/v2/credentials/abc"},
        {"AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", dir_->path() + "/pod-token"}});
    EXPECT_EQ(ReadThroughS3rver("container.txt"), "container endpoint");
    EXPECT_EQ(container.answers(), 1);
  }
  FakeImds imds(S3rverKeys(), "trainer");
  ScopedEnv env(std::map<std::string, std::optional<std::string>>{
      {"AWS_EC2_METADATA_DISABLED", std::nullopt},
      {"AWS_EC2_METADATA_SERVICE_ENDPOINT", imds.url()}});
  EXPECT_EQ(ReadThroughS3rver("imds.txt"), "EC2 instance metadata (role 'trainer')");
  EXPECT_EQ(imds.answers(), 1);
  EXPECT_EQ(imds.refused(), 0);
}

TEST_F(AwsSourcesS3Test, OneFetchSharedByEveryStoreOfTheProcess) {
  FakeImds imds(S3rverKeys(), "trainer");
  ScopedEnv env(std::map<std::string, std::optional<std::string>>{
      {"AWS_EC2_METADATA_DISABLED", std::nullopt},
      {"AWS_EC2_METADATA_SERVICE_ENDPOINT", imds.url()}});
  std::vector<std::unique_ptr<Store>> stores;
  for (int i = 0; i < 4; ++i) {
    stores.push_back(Open("s3://bkt"));
    ASSERT_NE(stores.back(), nullptr);
    ASSERT_TRUE(loop_.Run(stores.back()->Put("shared-" + std::to_string(i), "x")).ok());
  }
  EXPECT_EQ(imds.answers(), 1);
}

// Streams reads of one object for `seconds` through a store opened now,
// while the environment's credential source hands out credentials living
// 4 s (3 to 4 s from the fetch, Expirations being whole seconds). Returns
// the seconds it ran; fails the test at the first failed read.
double StreamFor(EventLoop& loop, Store& store, int seconds) {
  const std::string data(1 << 20, 'd');
  EXPECT_TRUE(loop.Run(store.Put("stream.bin", data)).ok());
  auto start = std::chrono::steady_clock::now();
  int reads = 0;
  uint64_t offset = 0;
  while (std::chrono::steady_clock::now() - start < std::chrono::seconds(seconds)) {
    auto chunk = loop.Run(store.GetRange("stream.bin", offset, 65536));
    if (!chunk.ok()) {
      ADD_FAILURE() << "read " << reads << ": " << chunk.status().ToString();
      break;
    }
    EXPECT_EQ(chunk->size(), 65536u);
    offset = (offset + 65536) % data.size();
    ++reads;
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Each credential was replaced before it expired (at least one fetch per
// 4 s), in the background at half its life, and not more than once a
// second (plus the first fetch).
void ExpectRefreshedOncePerLifetime(int fetches, double elapsed) {
  EXPECT_GE(fetches, 1 + static_cast<int>(elapsed / 4)) << elapsed << " s";
  EXPECT_LE(fetches, 2 + static_cast<int>(elapsed)) << elapsed << " s";
}

TEST_F(AwsSourcesS3Test, ContainerCredentialExpiringEveryFewSecondsIsRefreshedDuringARead) {
  FakeContainerEndpoint container(S3rverKeys(/*lifetime_s=*/4), "/creds", "");
  ScopedEnv env("AWS_CONTAINER_CREDENTIALS_FULL_URI", container.url() + "/creds");
  auto store = Open("s3://bkt");
  ASSERT_NE(store, nullptr);
  double elapsed = StreamFor(loop_, *store, 8);
  ExpectRefreshedOncePerLifetime(container.answers(), elapsed);
}

TEST_F(AwsSourcesS3Test, InstanceMetadataCredentialIsRefreshedDuringARead) {
  FakeImds imds(S3rverKeys(/*lifetime_s=*/4), "trainer");
  ScopedEnv env(std::map<std::string, std::optional<std::string>>{
      {"AWS_EC2_METADATA_DISABLED", std::nullopt},
      {"AWS_EC2_METADATA_SERVICE_ENDPOINT", imds.url()}});
  auto store = Open("s3://bkt");
  ASSERT_NE(store, nullptr);
  double elapsed = StreamFor(loop_, *store, 6);
  ExpectRefreshedOncePerLifetime(imds.answers(), elapsed);
  EXPECT_EQ(imds.refused(), 0);
}

TEST_F(AwsSourcesS3Test, WebIdentityCredentialIsRefreshedDuringARead) {
  FakeSts sts(S3rverKeys(/*lifetime_s=*/4), "", "jwt-of-the-pod");
  Write("token", "jwt-of-the-pod");
  ScopedEnv env(std::map<std::string, std::optional<std::string>>{
      {"AWS_ENDPOINT_URL_STS", sts.url()},
      {"AWS_WEB_IDENTITY_TOKEN_FILE", dir_->path() + "/token"},
      {"AWS_ROLE_ARN", kRole}});
  auto store = Open("s3://bkt");
  ASSERT_NE(store, nullptr);
  double elapsed = StreamFor(loop_, *store, 6);
  ExpectRefreshedOncePerLifetime(sts.answers(), elapsed);
}

TEST_F(AwsSourcesS3Test, AssumedRoleCredentialIsRefreshedDuringARead) {
  FakeSts sts(S3rverKeys(/*lifetime_s=*/4), "BASEKEY", "");
  Write("credentials", "[base]\naws_access_key_id = BASEKEY\naws_secret_access_key = b\n");
  Write("config", "[profile role]\nrole_arn = " + std::string(kRole) + "\nsource_profile = base\n");
  ScopedEnv env(std::map<std::string, std::optional<std::string>>{
      {"AWS_ENDPOINT_URL_STS", sts.url()}, {"AWS_PROFILE", "role"}});
  auto store = Open("s3://bkt");
  ASSERT_NE(store, nullptr);
  double elapsed = StreamFor(loop_, *store, 6);
  ExpectRefreshedOncePerLifetime(sts.answers(), elapsed);
}

TEST_F(AwsSourcesS3Test, SsoRoleCredentialIsRefreshedDuringARead) {
  testing::FakeSsoPortal portal(S3rverKeys(/*lifetime_s=*/4), "sso-access-token", "123456789012",
                                "Trainer");
  const std::string home = WriteSsoLogin();
  ScopedEnv env(std::map<std::string, std::optional<std::string>>{
      {"AWS_PROFILE", "sso"}, {"HOME", home}, {"AWS_ENDPOINT_URL_SSO", portal.url()}});
  auto store = Open("s3://bkt");
  ASSERT_NE(store, nullptr);
  double elapsed = StreamFor(loop_, *store, 6);
  ExpectRefreshedOncePerLifetime(portal.answers(), elapsed);
}

TEST_F(AwsSourcesS3Test, CredentialProcessIsRunAgainDuringARead) {
  // The process counts its runs in a file and answers a 4 s credential.
  Write("count.sh", std::string("#!/bin/sh\necho run >> ") + dir_->path() +
                        "/runs\nprintf '{\"Version\": 1, \"AccessKeyId\": \"" + kKeyId +
                        "\", \"SecretAccessKey\": \"" + kSecret +
                        "\", \"Expiration\": \"%s\"}' \"$(date -u -d '+4 seconds' "
                        "+%Y-%m-%dT%H:%M:%SZ)\"\n");
  ASSERT_EQ(::chmod((dir_->path() + "/count.sh").c_str(), 0700), 0);
  (void)::unlink((dir_->path() + "/runs").c_str());
  Write("config", "[profile counted]\ncredential_process = " + dir_->path() + "/count.sh\n");
  ScopedEnv env("AWS_PROFILE", "counted");
  auto store = Open("s3://bkt");
  ASSERT_NE(store, nullptr);
  double elapsed = StreamFor(loop_, *store, 6);
  auto runs = ReadFile(dir_->path() + "/runs", 1 << 20);
  ASSERT_TRUE(runs.ok());
  ExpectRefreshedOncePerLifetime(static_cast<int>(std::count(runs->begin(), runs->end(), '\n')),
                                 elapsed);
}

}  // namespace
}  // namespace sluice
