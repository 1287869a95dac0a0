// The SSO token cache goes through the Env its settings name
// (SsoTokenSettings::env): a refreshed token whose write-back fails is
// still used, and the cache is left whole, with no temporary beside it.
#include "stores/credentials/aws_sso_token.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <map>
#include <optional>
#include <string>

#include "base/file.h"
#include "tests/base/fault_env.h"
#include "tests/common/scoped_env.h"
#include "tests/common/temp_dir.h"
#include "tests/stores/credentials/aws_fakes.h"

namespace sluice {
namespace {

using testing::FaultEnv;
using testing::FsFault;
using testing::FsOp;

TEST(AwsSsoToken, AFailedWriteBackKeepsTheRefreshedTokenAndTheCacheWhole) {
  const int64_t now = 1700000000;
  testing::TempDir dir("sluice_sso_token");
  testing::FakeSsoOidc oidc("client-7", "client-secret-Zq8", "refresh-0", "fresh-token", 28800);
  testing::ScopedEnv vars(std::map<std::string, std::optional<std::string>>{
      {"AWS_ENDPOINT_URL_SSO_OIDC", oidc.url()}});
  const std::string cache = dir.path() + "/token.json";
  const std::string stale = testing::CachedSsoToken("stale-token", now - 60, "refresh-0", now + 86400);
  ASSERT_TRUE(WriteFileAtomic(cache, stale).ok());

  FaultEnv fault;
  fault.Add(FsFault{.op = FsOp::kRename, .path_pattern = cache, .err = EIO});
  SsoTokenSettings settings;
  settings.profile = "dev";
  settings.session_name = "corp";
  settings.start_url = "https://corp.awsapps.com/start";
  settings.sso_region = "eu-west-1";
  settings.cache_path = cache;
  settings.env = &fault;
  auto token = AwsSsoAccessToken(settings, now);
  ASSERT_TRUE(token.ok()) << token.status().message();
  EXPECT_EQ(*token, "fresh-token");
  EXPECT_EQ(oidc.answers(), 1);
  EXPECT_EQ(fault.fired(), 1);  // the rename onto the cache, through the settings' Env
  EXPECT_EQ(*ReadFile(cache), stale);
  auto names = Env::Default()->ListFolder(dir.path());
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(*names, std::vector<std::string>{"token.json"});

  // Without the fault the same refresh is written back (the fake has
  // rotated its refresh token, so the cache is given the one it expects).
  fault.Clear();
  ASSERT_TRUE(
      WriteFileAtomic(cache, testing::CachedSsoToken("stale-token", now - 60, "refresh-1", now + 86400))
          .ok());
  ASSERT_TRUE(AwsSsoAccessToken(settings, now).ok());
  EXPECT_EQ(*ReadFile(cache), testing::CachedSsoToken("fresh-token", now + 28800, "refresh-2", now + 86400));

  // A cache the Env cannot open is no token, naming the file and the fix.
  fault.Add(FsFault{.op = FsOp::kOpen, .path_pattern = cache, .err = EIO});
  auto unread = AwsSsoAccessToken(settings, now);
  ASSERT_FALSE(unread.ok());
  EXPECT_EQ(unread.status().message(),
            "no SSO token in " + cache + ": run 'aws sso login --profile dev'");
}

}  // namespace
}  // namespace sluice
