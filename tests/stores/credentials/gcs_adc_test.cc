// GCS Application Default Credentials (stores/credentials/gcs_adc.h) in
// google-auth's order, each source against FakeGoogle (a loopback fake of
// Google's OAuth2, STS, IAM Credentials and metadata endpoints and of the
// XML API: no emulator of them exists), then a read through a gs:// store
// whose token came from each source.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <ctime>
#include <map>
#include <optional>
#include <string>

#include "base/file.h"
#include "engine/runtime/event_loop.h"
#include "stores/credentials/gcs_adc.h"
#include "stores/credentials/gcs_credential.h"
#include "stores/gcs/gcs_store.h"
#include "stores/store.h"
#include "tests/common/scoped_env.h"
#include "tests/common/temp_dir.h"
#include "tests/stores/common/node_servers.h"
#include "tests/stores/credentials/gcs_fakes.h"

namespace sluice {
namespace {

using testing::FakeGoogle;
using testing::ScopedEnv;
using testing::TempDir;

constexpr const char* kReadWrite = "https://www.googleapis.com/auth/devstorage.read_write";
constexpr const char* kIam = "https://www.googleapis.com/auth/iam";
constexpr const char* kTarget = "loader@proj.iam.gserviceaccount.com";

class GcsAdcTest : public ::testing::Test {
 protected:
  void SetUp() override {
    gcloud_dir_ = dir_.path() + "/gcloud";
    ASSERT_TRUE(MakeDirs(gcloud_dir_).ok());
    auto env = testing::CleanStoreEnv();
    env["CLOUDSDK_CONFIG"] = gcloud_dir_;
    env["GCS_ENDPOINT_URL"] = fake_.url();
    env_ = std::make_unique<ScopedEnv>(env);
    options_.product_name_file = dir_.path() + "/no-product-name";  // not on GCE
  }

  std::string Write(const std::string& name, const std::string& text) {
    std::string path = dir_.path() + "/" + name;
    EXPECT_TRUE(WriteFileAtomic(path, text).ok());
    return path;
  }
  std::string GcloudFile() const { return gcloud_dir_ + "/application_default_credentials.json"; }

  std::string AuthorizedUser() const {
    return "{\"type\": \"authorized_user\", \"client_id\": \"" + fake_.expect().client_id +
           "\", \"client_secret\": \"" + fake_.expect().client_secret +
           "\", \"refresh_token\": \"" + fake_.expect().refresh_token + "\", \"token_uri\": \"" +
           fake_.url() + "/token\"}";
  }
  // An external_account file with `source` as its credential_source and
  // `extra` members.
  std::string ExternalAccount(const std::string& source, const std::string& extra = "") const {
    return "{\"type\": \"external_account\", \"audience\": \"" + fake_.expect().audience +
           "\", \"subject_token_type\": \"" + fake_.expect().subject_token_type +
           "\", \"token_url\": \"" + fake_.url() + "/v1/token\", \"credential_source\": " +
           source + extra + "}";
  }
  std::string ImpersonationUrl() const {
    return fake_.url() + "/v1/projects/-/serviceAccounts/" + kTarget + ":generateAccessToken";
  }

  Result<Credential> Fetch() {
    chain_ = MakeGcsAdcChain(options_);
    return chain_->Fetch(static_cast<int64_t>(std::time(nullptr)));
  }

  // Opens gs://bkt/data, reads a.txt, and returns the Authorization it sent.
  std::string ReadThroughStore() {
    StoreOptions options;
    options.download_retry = 0;
    auto store = OpenStore("gs://bkt/data", loop_.executor(), options);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    if (!store.ok()) return "";
    auto got = loop_.Run((*store)->Get("a.txt"));
    EXPECT_TRUE(got.ok()) << got.status().ToString();
    if (got.ok()) {
      EXPECT_EQ(*got, fake_.object_bytes);
    }
    return fake_.last_object_authorization();
  }

  TempDir dir_;
  std::string gcloud_dir_;
  FakeGoogle fake_;
  std::unique_ptr<ScopedEnv> env_;
  GcsAdcOptions options_;
  std::unique_ptr<CredentialChain> chain_;
  EventLoop loop_;
};

TEST_F(GcsAdcTest, NothingAppliesNamesEverySourceAndReadsGoUnsigned) {
  auto got = Fetch();
  ASSERT_EQ(got.status().code(), StatusCode::kNotFound) << got.status().ToString();
  const std::string expected =
      "no GCS credentials found; tried: GOOGLE_APPLICATION_CREDENTIALS (not set), gcloud "
      "application default credentials (no file " + GcloudFile() +
      "), metadata server (not on Google Compute Engine and GCE_METADATA_HOST not set)";
  EXPECT_EQ(got.status().message(), expected);
  EXPECT_EQ(GcsAdcAbsence(options_), expected);

  // A public bucket reads without a token; whoami says why.
  StoreOptions options;
  options.download_retry = 0;
  auto store = OpenStore("gs://pub/data", loop_.executor(), options);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto read = loop_.Run((*store)->Get("a.txt"));
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(*read, fake_.object_bytes);
  EXPECT_EQ(fake_.last_object_authorization(), "");
  if (GcsAdcAbsence().empty()) return;  // on a GCE machine the metadata server applies
  auto described = DescribeGcsAuth("gs://pub/data");
  ASSERT_TRUE(described.ok()) << described.status().ToString();
  EXPECT_EQ(*described, "gs://pub\n  endpoint: " + fake_.url() + "/\n  requests: unsigned (" +
                            GcsAdcAbsence() + ")\n");
}

// gcloud's file comes before the metadata server, even where one answers.
TEST_F(GcsAdcTest, AuthorizedUserFromTheGcloudFile) {
  ASSERT_TRUE(WriteFileAtomic(GcloudFile(), AuthorizedUser()).ok());
  ScopedEnv metadata("GCE_METADATA_HOST", fake_.host());
  auto got = Fetch();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->bearer, "ya29.user-1");
  EXPECT_EQ(got->source, "authorized user (client " + fake_.expect().client_id + ")");
  EXPECT_EQ(chain_->DescribeAttempts(),
            "GOOGLE_APPLICATION_CREDENTIALS (not set), gcloud application default credentials "
            "(used)");
  // google-auth sends no scope for user credentials.
  EXPECT_EQ(fake_.last_fields("/token"),
            (std::vector<std::string>{"client_id", "client_secret", "grant_type",
                                      "refresh_token"}));
  EXPECT_EQ(fake_.last("/token", "refresh_token"), fake_.expect().refresh_token);
  EXPECT_EQ(ReadThroughStore(), "Bearer ya29.user-2");
  EXPECT_EQ(fake_.requests("metadata"), 0);
}

TEST_F(GcsAdcTest, EnvironmentFileWinsOverTheGcloudFile) {
  ASSERT_TRUE(WriteFileAtomic(GcloudFile(), AuthorizedUser()).ok());
  std::string token_file = Write("subject.jwt", fake_.expect().subject_token);
  std::string file =
      Write("wif.json", ExternalAccount("{\"file\": \"" + token_file + "\"}"));
  ScopedEnv env("GOOGLE_APPLICATION_CREDENTIALS", file);
  auto got = Fetch();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->bearer, "ya29.sts-1");
  EXPECT_EQ(got->source, "external account (audience " + fake_.expect().audience + ")");
  EXPECT_EQ(fake_.requests("/token"), 0);
  EXPECT_EQ(chain_->DescribeAttempts(), "GOOGLE_APPLICATION_CREDENTIALS (used)");
  // Google's token-exchange fields, scoped to storage.
  EXPECT_EQ(fake_.last_fields("/v1/token"),
            (std::vector<std::string>{"audience", "grant_type", "requested_token_type", "scope",
                                      "subject_token", "subject_token_type"}));
  EXPECT_EQ(fake_.last("/v1/token", "scope"), kReadWrite);
  EXPECT_EQ(fake_.last("/v1/token", "header:authorization"), "");
  EXPECT_EQ(ReadThroughStore(), "Bearer ya29.sts-2");
}

TEST_F(GcsAdcTest, ExternalAccountJsonFileWithClientAuthentication) {
  std::string token_file =
      Write("subject.json", "{\"other\": 1, \"access_token\": \"" +
                                fake_.expect().subject_token + "\"}");
  std::string file = Write(
      "wif.json", ExternalAccount("{\"file\": \"" + token_file +
                                      "\", \"format\": {\"type\": \"json\", "
                                      "\"subject_token_field_name\": \"access_token\"}}",
                                  ", \"client_id\": \"cid\", \"client_secret\": \"csecret\""));
  ScopedEnv env("GOOGLE_APPLICATION_CREDENTIALS", file);
  auto got = Fetch();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->bearer, "ya29.sts-1");
  EXPECT_EQ(fake_.last("/v1/token", "header:authorization"), "Basic Y2lkOmNzZWNyZXQ=");
}

TEST_F(GcsAdcTest, ExternalAccountFromAUrlWithHeaders) {
  std::string file = Write(
      "wif.json",
      ExternalAccount("{\"url\": \"" + fake_.url() +
                      "/subject\", \"headers\": {\"Metadata\": \"True\"}, \"format\": "
                      "{\"type\": \"json\", \"subject_token_field_name\": \"id_token\"}}"));
  ScopedEnv env("GOOGLE_APPLICATION_CREDENTIALS", file);
  auto got = Fetch();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->bearer, "ya29.sts-1");
  EXPECT_EQ(fake_.requests("/subject"), 1);
  EXPECT_EQ(ReadThroughStore(), "Bearer ya29.sts-2");
}

TEST_F(GcsAdcTest, ExternalAccountFromAnExecutableOnlyWhenAllowed) {
  std::string seen = dir_.path() + "/seen-env";
  std::string script = Write(
      "token.sh",
      "#!/bin/sh\necho \"$GOOGLE_EXTERNAL_ACCOUNT_AUDIENCE $GOOGLE_EXTERNAL_ACCOUNT_TOKEN_TYPE "
      "$GOOGLE_EXTERNAL_ACCOUNT_INTERACTIVE $GOOGLE_EXTERNAL_ACCOUNT_IMPERSONATED_EMAIL\" > " +
          seen + "\nprintf '{\"version\": 1, \"success\": true, \"token_type\": "
                 "\"urn:ietf:params:oauth:token-type:jwt\", \"id_token\": \"" +
          fake_.expect().subject_token + "\", \"expiration_time\": %d}' $(( $(date +%s) + 600 ))\n");
  ASSERT_EQ(::chmod(script.c_str(), 0700), 0);
  std::string file = Write(
      "wif.json", ExternalAccount("{\"executable\": {\"command\": \"" + script +
                                  "\", \"timeout_millis\": 5000}}"));
  ScopedEnv env("GOOGLE_APPLICATION_CREDENTIALS", file);
  auto refused = Fetch();
  EXPECT_EQ(refused.status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(refused.status().message(),
            "GOOGLE_APPLICATION_CREDENTIALS: external_account credentials in " + file +
                ": executable sources run only with GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES=1");
  EXPECT_FALSE(FileExists(seen));

  ScopedEnv allow("GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES", "1");
  auto got = Fetch();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->bearer, "ya29.sts-1");
  auto env_seen = ReadFile(seen, 4096);
  ASSERT_TRUE(env_seen.ok());
  EXPECT_EQ(*env_seen, fake_.expect().audience + " " + fake_.expect().subject_token_type + " 0 \n");
  EXPECT_EQ(ReadThroughStore(), "Bearer ya29.sts-2");

  // A program that fails is reported with its own code and message.
  std::string failing = Write("fail.sh",
                              "#!/bin/sh\necho '{\"version\": 1, \"success\": false, \"code\": "
                              "\"401\", \"message\": \"not logged in\"}'\n");
  ASSERT_EQ(::chmod(failing.c_str(), 0700), 0);
  Write("wif.json", ExternalAccount("{\"executable\": {\"command\": \"" + failing + "\"}}"));
  auto failed = Fetch();
  EXPECT_EQ(failed.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(failed.status().message().find("the output of '" + failing +
                                           "' reported failure: code 401, message not logged in"),
            std::string::npos)
      << failed.status().message();
}

// An unexpired answer cached in output_file is used without running the
// program; a program that outlives timeout_millis is killed and reported.
TEST_F(GcsAdcTest, ExecutableOutputFileCacheAndTimeout) {
  ScopedEnv allow("GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES", "1");
  std::string ran = dir_.path() + "/ran";
  std::string slow = Write("slow.sh", "#!/bin/sh\ntouch " + ran + "\nexec sleep 30\n");
  ASSERT_EQ(::chmod(slow.c_str(), 0700), 0);
  std::string cache = Write(
      "cache.json", "{\"version\": 1, \"success\": true, \"token_type\": "
                    "\"urn:ietf:params:oauth:token-type:id_token\", \"id_token\": \"" +
                        fake_.expect().subject_token + "\", \"expiration_time\": " +
                        std::to_string(std::time(nullptr) + 600) + "}");
  std::string file = Write(
      "wif.json", ExternalAccount("{\"executable\": {\"command\": \"" + slow +
                                  "\", \"timeout_millis\": 5000, \"output_file\": \"" + cache +
                                  "\"}}"));
  ScopedEnv env("GOOGLE_APPLICATION_CREDENTIALS", file);
  auto cached = Fetch();
  ASSERT_TRUE(cached.ok()) << cached.status().ToString();
  EXPECT_EQ(cached->bearer, "ya29.sts-1");
  EXPECT_FALSE(FileExists(ran));

  Write("cache.json", "{\"version\": 1, \"success\": true, \"token_type\": "
                      "\"urn:ietf:params:oauth:token-type:id_token\", \"id_token\": \"old\", "
                      "\"expiration_time\": 1}");
  auto started = std::chrono::steady_clock::now();
  auto timed_out = Fetch();
  auto took = std::chrono::steady_clock::now() - started;
  EXPECT_EQ(timed_out.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(timed_out.status().message(),
            "GOOGLE_APPLICATION_CREDENTIALS: external_account credentials in " + file + ": '" +
                slow + "' did not finish within 5000 ms");
  EXPECT_TRUE(FileExists(ran));
  EXPECT_LT(took, std::chrono::seconds(15));
}

TEST_F(GcsAdcTest, ExternalAccountImpersonatesAServiceAccount) {
  std::string token_file = Write("subject.jwt", fake_.expect().subject_token);
  std::string file = Write(
      "wif.json",
      ExternalAccount("{\"file\": \"" + token_file + "\"}",
                      ", \"service_account_impersonation_url\": \"" + ImpersonationUrl() +
                          "\", \"service_account_impersonation\": {\"token_lifetime_seconds\": "
                          "1800}"));
  ScopedEnv env("GOOGLE_APPLICATION_CREDENTIALS", file);
  int64_t before = static_cast<int64_t>(std::time(nullptr));
  auto got = Fetch();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->bearer, "ya29.impersonated-2");
  EXPECT_EQ(got->source, "external account (audience " + fake_.expect().audience +
                             ") impersonating " + kTarget);
  ASSERT_TRUE(got->expires_at.has_value());
  EXPECT_GE(*got->expires_at, before + 1800);
  EXPECT_LE(*got->expires_at, before + 1802);
  // The STS token is scoped to IAM and is what authorizes generateAccessToken.
  EXPECT_EQ(fake_.last("/v1/token", "scope"), kIam);
  EXPECT_EQ(fake_.last("iam", "header:authorization"), "Bearer ya29.sts-1");
  EXPECT_EQ(fake_.last("iam", "body"),
            std::string("{\"delegates\": [], \"scope\": [\"") + kReadWrite +
                "\"], \"lifetime\": \"1800s\"}");
  EXPECT_EQ(ReadThroughStore(), "Bearer ya29.impersonated-4");
}

TEST_F(GcsAdcTest, ImpersonatedServiceAccountFromUserCredentials) {
  std::string user = AuthorizedUser();
  std::string file = Write(
      "imp.json", "{\"type\": \"impersonated_service_account\", "
                  "\"service_account_impersonation_url\": \"" + ImpersonationUrl() +
                      "\", \"delegates\": [\"mid@proj.iam.gserviceaccount.com\"], "
                      "\"source_credentials\": " + user + "}");
  ScopedEnv env("GOOGLE_APPLICATION_CREDENTIALS", file);
  auto got = Fetch();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->bearer, "ya29.impersonated-2");
  EXPECT_EQ(got->source, "authorized user (client " + fake_.expect().client_id +
                             ") impersonating " + kTarget);
  EXPECT_EQ(fake_.last("/token", "scope"), "");
  EXPECT_EQ(fake_.last("iam", "header:authorization"), "Bearer ya29.user-1");
  EXPECT_EQ(fake_.last("iam", "body"),
            std::string("{\"delegates\": [\"mid@proj.iam.gserviceaccount.com\"], \"scope\": [\"") +
                kReadWrite + "\"], \"lifetime\": \"3600s\"}");
  EXPECT_EQ(ReadThroughStore(), "Bearer ya29.impersonated-4");
}

TEST_F(GcsAdcTest, MetadataServerWhenNoFileApplies) {
  ScopedEnv env("GCE_METADATA_HOST", fake_.host());
  auto got = Fetch();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->bearer, "ya29.metadata-1");
  // The storage scope, asked for as google-auth asks (GKE honours it).
  EXPECT_EQ(fake_.last("metadata", "query"),
            "scopes=https%3A%2F%2Fwww.googleapis.com%2Fauth%2Fdevstorage.read_write");
  EXPECT_EQ(chain_->DescribeAttempts(),
            "GOOGLE_APPLICATION_CREDENTIALS (not set), gcloud application default credentials "
            "(no file " + GcloudFile() + "), metadata server (used)");
  EXPECT_EQ(ReadThroughStore(), "Bearer ya29.metadata-2");
  auto described = DescribeGcsAuth("gs://bkt/data");
  ASSERT_TRUE(described.ok()) << described.status().ToString();
  EXPECT_NE(described->find("  credentials: metadata server at " + fake_.host() +
                            " (OAuth2 bearer token)\n"),
            std::string::npos)
      << *described;
  EXPECT_NE(described->find("  sources tried: GOOGLE_APPLICATION_CREDENTIALS (not set), "),
            std::string::npos)
      << *described;
  EXPECT_EQ(described->find("ya29."), std::string::npos) << *described;
}

TEST_F(GcsAdcTest, HmacKeysWinOverApplicationDefaultCredentials) {
  ASSERT_TRUE(WriteFileAtomic(GcloudFile(), AuthorizedUser()).ok());
  ScopedEnv env(std::map<std::string, std::optional<std::string>>{
      {"GCS_KEY", "GOOGKEY1234"}, {"GCS_SECRET", "hmac-secret-never-shown"}});
  auto described = DescribeGcsAuth("gs://bkt/data");
  ASSERT_TRUE(described.ok()) << described.status().ToString();
  EXPECT_EQ(*described, "gs://bkt\n  endpoint: " + fake_.url() +
                            "/\n  credentials: HMAC key from GCS_KEY and GCS_SECRET (access key "
                            "****1234)\n");
  EXPECT_EQ(fake_.requests("/token"), 0);
}

// Errors name every source tried and why, and never a secret: not the
// refresh token, client secret, subject token or any access token.
TEST_F(GcsAdcTest, ErrorsNameTheSourcesAndNoSecret) {
  fake_.reject = true;
  auto expect_clean = [this](const Status& s) {
    for (const std::string& secret :
         {fake_.expect().refresh_token, fake_.expect().client_secret,
          fake_.expect().subject_token, std::string("ya29.")}) {
      EXPECT_EQ(s.message().find(secret), std::string::npos) << s.message();
    }
  };
  ASSERT_TRUE(WriteFileAtomic(GcloudFile(), AuthorizedUser()).ok());
  auto user = Fetch();
  EXPECT_EQ(user.status().code(), StatusCode::kPermissionDenied) << user.status().ToString();
  EXPECT_NE(user.status().message().find(
                "gcloud application default credentials: " + GcloudFile() +
                ": OAuth2 refresh-token grant of "
                "authorized user (client " + fake_.expect().client_id + ") at " + fake_.url() +
                "/token failed: "),
            std::string::npos)
      << user.status().message();
  EXPECT_NE(user.status().message().find("400"), std::string::npos) << user.status().message();
  EXPECT_NE(user.status().message().find("invalid_grant"), std::string::npos);
  EXPECT_NE(user.status().message().find("(tried before: GOOGLE_APPLICATION_CREDENTIALS (not set))"),
            std::string::npos)
      << user.status().message();
  expect_clean(user.status());

  std::string token_file = Write("subject.jwt", fake_.expect().subject_token);
  std::string file = Write("wif.json", ExternalAccount("{\"file\": \"" + token_file + "\"}"));
  ScopedEnv env("GOOGLE_APPLICATION_CREDENTIALS", file);
  auto sts = Fetch();
  EXPECT_EQ(sts.status().code(), StatusCode::kPermissionDenied) << sts.status().ToString();
  EXPECT_NE(sts.status().message().find("GOOGLE_APPLICATION_CREDENTIALS: " + file +
                                        ": STS token exchange of "
                                        "external account (audience " +
                                        fake_.expect().audience + ") at " + fake_.url() +
                                        "/v1/token failed: "),
            std::string::npos)
      << sts.status().message();
  expect_clean(sts.status());

  // The same through a store: the first read fails with the chain's text.
  StoreOptions options;
  options.download_retry = 0;
  auto store = OpenStore("gs://bkt/data", loop_.executor(), options);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto read = loop_.Run((*store)->Get("a.txt"));
  EXPECT_EQ(read.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(read.status().message().find("STS token exchange"), std::string::npos)
      << read.status().message();
  expect_clean(read.status());

  Write("wif.json", "{\"type\": \"-----BEGIN PRIVATE KEY-----\"}");
  auto mangled = Fetch();
  EXPECT_EQ(mangled.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(mangled.status().message(),
            "GOOGLE_APPLICATION_CREDENTIALS: credentials file " + file +
                " has no known type, expected one of service_account, authorized_user, "
                "external_account, impersonated_service_account");
}

// On a fake clock: the token is refreshed ahead of its expiry (a new STS
// exchange, the subject token file read again).
TEST_F(GcsAdcTest, ExternalAccountTokenRefreshedAheadOfExpiry) {
  std::string token_file = Write("subject.jwt", fake_.expect().subject_token);
  std::string file = Write("wif.json", ExternalAccount("{\"file\": \"" + token_file + "\"}"));
  ScopedEnv env("GOOGLE_APPLICATION_CREDENTIALS", file);
  std::atomic<int64_t> now{1700000000};
  SharedCredentialOptions options = GcsTokenOptions();
  options.clock = [&now] { return now.load(); };
  options.background = false;
  SharedCredential credential(MakeGcsAdcChain(options_), options);
  auto first = credential.Get();
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->bearer, "ya29.sts-1");
  EXPECT_EQ(first->expires_at, std::optional<int64_t>(1700003600));
  now = 1700003600 - 301;
  EXPECT_FALSE(credential.RefreshIfDue());
  now = 1700003600 - 300;
  EXPECT_TRUE(credential.RefreshIfDue());
  auto refreshed = credential.Get();
  ASSERT_TRUE(refreshed.ok()) << refreshed.status().ToString();
  EXPECT_EQ(refreshed->bearer, "ya29.sts-2");
  EXPECT_EQ(fake_.requests("/v1/token"), 2);
}

}  // namespace
}  // namespace sluice
