// The Databricks SDK's databricks-cli strategy
// (stores/credentials/databricks_cli.h) with a fake `databricks` (a script
// written here: it logs its arguments, prints the version it is told and a
// numbered token, or fails as told) and FakeDatabricksFiles.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "base/file.h"
#include "engine/runtime/event_loop.h"
#include "stores/credentials/databricks_config.h"
#include "stores/credentials/databricks_credential.h"
#include "stores/credentials/shared_credential.h"
#include "stores/dbfs/dbfs_store.h"
#include "stores/store.h"
#include "tests/common/scoped_env.h"
#include "tests/common/temp_dir.h"
#include "tests/stores/common/fake_databricks_files.h"
#include "tests/stores/credentials/databricks_volume_read.h"
#include "tests/stores/common/node_servers.h"

namespace sluice {
namespace {

using testing::ReadsEmptyIndex;
using testing::CleanStoreEnv;
using testing::FakeDatabricksFiles;
using testing::ScopedEnv;
using testing::TempDir;

constexpr char kDbcliVolume[] = "dbfs:/Volumes/main/default/vol/ds";

// `databricks version --output json` prints version.json; `auth token`
// writes the file `fail` to stderr and exits 1 when it exists, else prints
// dbcli-token-N (N counting its calls) with the expiry in the file `expiry`.
constexpr char kFakeDatabricksCli[] = R"SH(#!/bin/sh
here=$(dirname "$0")
echo "$*" >> "$here/calls"
if [ "$1" = version ]; then cat "$here/version.json"; exit 0; fi
if [ -f "$here/fail" ]; then cat "$here/fail" >&2; echo '{"access_token": "dbcli-secret-stdout"}'; exit 1; fi
n=$(grep -c '^auth token' "$here/calls")
printf '{"access_token": "%s", "token_type": "Bearer", "expiry": "%s"}\n' "$(cat "$here/token" 2>/dev/null || echo dbcli-token-$n)" "$(cat "$here/expiry")"
)SH";

class DatabricksCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    files_.Put("/Volumes/main/default/vol/ds/index.json", "{\"shards\": []}");
    files_.AcceptToken("dbcli-token-1");
    files_.AcceptToken("dbcli-token-2");
    Write("databricks", kFakeDatabricksCli);
    ASSERT_EQ(chmod(Path("databricks").c_str(), 0755), 0);
    Version(0, 300, 0);
    Write("expiry", "2001-09-09T01:46:40Z");  // unix time 1000000000
    Write("databrickscfg", "[work]\nhost = " + files_.url() + "\nauth_type = databricks-cli\n");
  }
  std::string Path(const std::string& name) const { return dir_.path() + "/" + name; }
  void Write(const std::string& name, const std::string& text) {
    ASSERT_TRUE(WriteFileAtomic(Path(name), text).ok());
  }
  void Version(int major, int minor, int patch) {
    Write("version.json", "{\"Version\": \"x\", \"Major\": " + std::to_string(major) + ", \"Minor\": " +
                              std::to_string(minor) + ", \"Patch\": " + std::to_string(patch) + "}\n");
  }
  std::string Calls() {
    auto text = ReadFile(Path("calls"), 1 << 20);
    return text.ok() ? *text : "";
  }
  void SetEnv(std::map<std::string, std::optional<std::string>> extra) {
    env_.reset();
    auto env = CleanStoreEnv();
    env["DATABRICKS_CONFIG_FILE"] = Path("databrickscfg");
    env["DATABRICKS_CLI_PATH"] = Path("databricks");
    for (auto& [k, v] : extra) env[k] = v;
    env_ = std::make_unique<ScopedEnv>(env);
  }
  Result<Credential> Fetch(int64_t now = 999'999'000) {
    auto config = LoadDatabricksConfig();
    if (!config.ok()) return config.status();
    return MakeDatabricksCredentialChain(*config)->Fetch(now);
  }

  TempDir dir_{"databricks_cli_test"};
  FakeDatabricksFiles files_;
  EventLoop loop_;
  std::unique_ptr<ScopedEnv> env_;
};

// The profile `databricks auth login` writes: the CLI is asked for that
// profile's token (with --force-refresh, as 0.296.0 and later take it);
// a real read; whoami names the command, never the token.
TEST_F(DatabricksCliTest, TheCliLoginOfAProfileReadsAndWhoamiNamesTheCommand) {
  Write("expiry", "2099-01-01T00:00:00Z");  // held for a year at most
  SetEnv({{"DATABRICKS_CONFIG_PROFILE", "work"}});
  std::unique_ptr<Store> store;  // held to the end, as the store was
  ASSERT_TRUE(ReadsEmptyIndex(kDbcliVolume, loop_, &store));
  EXPECT_EQ(files_.bearers().back(), "dbcli-token-1");
  EXPECT_EQ(Calls(), "version --output json\nauth token --profile work --force-refresh\n");
  auto whoami = DescribeDbfsAuth(kDbcliVolume);
  ASSERT_TRUE(whoami.ok()) << whoami.status().ToString();
  EXPECT_NE(whoami->find("  credentials: Databricks CLI login (" + Path("databricks") +
                         " auth token --profile work --force-refresh) (bearer token)\n"),
            std::string::npos)
      << *whoami;
  EXPECT_NE(whoami->find("  sources tried: databricks-cli (used)\n"), std::string::npos) << *whoami;
  EXPECT_EQ(whoami->find("dbcli-token"), std::string::npos);
}

TEST_F(DatabricksCliTest, TheCliIsRunAgainAheadOfItsTokensExpiry) {
  SetEnv({{"DATABRICKS_HOST", files_.url()}});
  auto config = LoadDatabricksConfig();
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  int64_t now = 999'999'000;
  SharedCredentialOptions options;
  options.clock = [&now] { return now; };
  options.background = false;
  SharedCredential credential(MakeDatabricksCredentialChain(*config), options);
  auto first = credential.Get();
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->bearer, "dbcli-token-1");
  EXPECT_EQ(first->expires_at, 1'000'000'000);
  now += 600;  // 400 s left
  EXPECT_FALSE(credential.RefreshIfDue());
  now += 200;  // 200 s left
  Write("expiry", "2001-09-09T02:46:40+01:00");  // the same instant, another zone
  EXPECT_TRUE(credential.RefreshIfDue());
  auto second = credential.Get();
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->bearer, "dbcli-token-2");
  EXPECT_EQ(second->expires_at, 1'000'000'000);
  // No profile was read: --host; the version is probed once.
  EXPECT_EQ(Calls(), "version --output json\nauth token --host " + files_.url() + " --force-refresh\n"
                     "auth token --host " + files_.url() + " --force-refresh\n");
}

// The SDK's version gates: --profile from 0.207.1, --force-refresh from
// 0.296.0; a version that cannot be read turns both off.
TEST_F(DatabricksCliTest, TheCliVersionPicksTheFlags) {
  const std::string host = files_.url();
  const std::map<std::string, std::string> cases = {
      {"{\"Major\": 0, \"Minor\": 250, \"Patch\": 0}", "auth token --profile work\n"},
      {"{\"Major\": 0, \"Minor\": 207, \"Patch\": 0}", "auth token --host " + host + "\n"},
      {"Databricks CLI v0.300.0", "auth token --host " + host + "\n"},
  };
  for (const auto& [version, want] : cases) {
    Write("version.json", version);
    Write("calls", "");
    SetEnv({{"DATABRICKS_CONFIG_PROFILE", "work"}});
    auto got = Fetch();
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(Calls(), "version --output json\n" + want) << version;
  }
}

TEST_F(DatabricksCliTest, ExpiriesAreReadAsTheCliPrintsThem) {
  SetEnv({{"DATABRICKS_CONFIG_PROFILE", "work"}});
  const std::map<std::string, int64_t> cases = {
      {"2001-09-09T01:46:40.123456789Z", 1'000'000'000},
      {"2001-09-08T20:46:40.5-05:00", 1'000'000'000},
      {"2001-09-09T03:16:40+01:30", 1'000'000'000},
  };
  for (const auto& [expiry, want] : cases) {
    Write("expiry", expiry);
    auto got = Fetch();
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(got->expires_at, want) << expiry;
  }
  // Without a zone: local time, as the SDK reads it.
  ScopedEnv tz("TZ", "UTC");
  Write("expiry", "2001-09-09 01:46:40");
  auto local = Fetch();
  ASSERT_TRUE(local.ok()) << local.status().ToString();
  EXPECT_EQ(local->expires_at, 1'000'000'000);
}

// A host the CLI has no OAuth login for, an unreadable answer and a token of
// other scopes pass the strategy over (errors when DATABRICKS_AUTH_TYPE
// chose it); another failure is an error quoting the CLI's stderr, never
// its stdout; a missing or legacy CLI does not apply.
TEST_F(DatabricksCliTest, FailuresSayWhyAndNeverQuoteTheToken) {
  const std::string host = files_.url();
  const std::string cli = Path("databricks");
  SetEnv({{"DATABRICKS_HOST", host}, {"DATABRICKS_AUTH_TYPE", "databricks-cli"}});
  Write("fail", "Error: databricks OAuth is not supported for this host\n");
  auto skipped = Fetch();
  EXPECT_EQ(skipped.status().message(),
            "no Databricks credentials found; tried: databricks-cli ('" + cli + " auth token --host " + host +
                " --force-refresh': '" + cli + "' exited with status 1: Error: databricks OAuth is not supported "
                "for this host)");
  Write("fail", "\nError: refresh token is invalid. Please run `databricks auth login`\n");
  auto refused = Fetch();
  EXPECT_EQ(refused.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(refused.status().message().find(
                "databricks-cli: cannot get access token: '" + cli + " auth token --host " + host +
                " --force-refresh': '" + cli + "' exited with status 1: Error: refresh token is invalid. "
                "Please run `databricks auth login`"),
            std::string::npos)
      << refused.status().message();
  EXPECT_EQ(refused.status().message().find("dbcli-secret"), std::string::npos);
  ASSERT_EQ(std::remove(Path("fail").c_str()), 0);
  Write("expiry", "next tuesday");
  auto unreadable = Fetch();
  EXPECT_EQ(unreadable.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(unreadable.status().message().find("cannot unmarshal CLI result of '" + cli + " auth token --host " +
                                               host + " --force-refresh': no readable expiry"),
            std::string::npos)
      << unreadable.status().message();
  // A token of other scopes than the profile's.
  Write("expiry", "2001-09-09T01:46:40Z");
  Write("token", "eyJhbGciOiJub25lIn0.eyJzY29wZSI6InNxbCBvZmZsaW5lX2FjY2VzcyJ9.c2ln");  // {"scope":"sql offline_access"}
  Write("databrickscfg", "[work]\nhost = " + host + "\nscopes = all-apis\n");
  SetEnv({{"DATABRICKS_CONFIG_PROFILE", "work"}});
  auto scopes = Fetch();
  EXPECT_NE(scopes.status().message().find(
                "databricks-cli (Token issued by Databricks CLI has scopes [sql] which do not match the configured "
                "scopes [all-apis]; run `databricks auth login` with the --scopes flag)"),
            std::string::npos)
      << scopes.status().message();
  Write("databrickscfg", "[work]\nhost = " + host + "\nscopes = sql\n");
  auto same = Fetch();
  ASSERT_TRUE(same.ok()) << same.status().ToString();
  // The legacy Python CLI, and none.
  Write("databricks", "#!/usr/bin/python3\nfrom databricks_cli.cli import main\nmain()\n");
  ASSERT_EQ(chmod(Path("databricks").c_str(), 0755), 0);
  SetEnv({{"DATABRICKS_HOST", host}, {"DATABRICKS_AUTH_TYPE", "databricks-cli"}});
  EXPECT_EQ(Fetch().status().message(),
            "no Databricks credentials found; tried: databricks-cli (Databricks CLI version <0.100.0 detected ('" +
                cli + "' (from DATABRICKS_CLI_PATH)))");
  SetEnv({{"DATABRICKS_HOST", host}, {"DATABRICKS_AUTH_TYPE", "databricks-cli"}, {"DATABRICKS_CLI_PATH", std::nullopt},
          {"PATH", dir_.path() + "/none"}});
  EXPECT_EQ(Fetch().status().message(),
            "no Databricks credentials found; tried: databricks-cli ('databricks' not found on PATH (the Databricks "
            "CLI is not installed))");
}

}  // namespace
}  // namespace sluice
