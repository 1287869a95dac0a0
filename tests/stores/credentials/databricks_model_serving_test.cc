// Databricks Model Serving's mounted token (model-serving, the last of the
// SDK's strategies; stores/credentials/databricks_model_serving.h) read
// through dbfs:/Volumes against FakeDatabricksFiles, with the host of the
// serving environment.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>

#include "base/file.h"
#include "engine/runtime/event_loop.h"
#include "stores/credentials/databricks_config.h"
#include "stores/credentials/databricks_credential.h"
#include "stores/dbfs/dbfs_store.h"
#include "stores/store.h"
#include "tests/common/scoped_env.h"
#include "tests/common/temp_dir.h"
#include "tests/stores/common/fake_databricks_files.h"
#include "tests/stores/common/node_servers.h"

namespace sluice {
namespace {

using testing::CleanStoreEnv;
using testing::FakeDatabricksFiles;
using testing::ScopedEnv;
using testing::TempDir;

class DatabricksModelServingTest : public ::testing::Test {
 protected:
  void SetUp() override { files_.Put("/Volumes/main/default/vol/ds/index.json", "{\"shards\": []}"); }
  void SetEnv(std::map<std::string, std::optional<std::string>> extra) {
    env_.reset();
    auto env = CleanStoreEnv();
    for (auto& [k, v] : extra) env[k] = v;
    env_ = std::make_unique<ScopedEnv>(env);
  }
  std::string TokenFile() const { return dir_.path() + "/model-dependencies-oauth-token"; }
  void WriteToken(const std::string& token) {
    ASSERT_TRUE(WriteFileAtomic(TokenFile(), "{\"OAUTH_TOKEN\": [{\"oauthTokenValue\": \"" + token +
                                                 "\", \"expirationTime\": 1}]}").ok());
  }
  std::string Whoami() {
    auto whoami = DescribeDbfsAuth("dbfs:/Volumes/main/default/vol/ds");
    return whoami.ok() ? *whoami : whoami.status().message();
  }

  TempDir dir_{"databricks_model_serving_test"};
  FakeDatabricksFiles files_;
  EventLoop loop_;
  std::unique_ptr<ScopedEnv> env_;
};

// In a serving endpoint: the mounted token, for the serving environment's
// host, read at the end of the chain; each credential lasts 300 s (the SDK
// reads the file again after that).
TEST_F(DatabricksModelServingTest, TheMountedTokenReadsWithTheServingHost) {
  WriteToken("serving-token-1");
  files_.AcceptToken("serving-token-1");
  SetEnv({{"IS_IN_DB_MODEL_SERVING_ENV", "true"}, {"SERVING_CREDENTIALS_DIR", dir_.path() + " "},
          {"DATABRICKS_MODEL_SERVING_HOST_URL", files_.url() + "/"}});
  auto store = OpenStore("dbfs:/Volumes/main/default/vol/ds", loop_.executor());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto got = loop_.Run((*store)->Get("index.json"));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, "{\"shards\": []}");
  EXPECT_EQ(files_.bearers(), std::vector<std::string>{"serving-token-1"});
  const std::string whoami = Whoami();
  EXPECT_NE(whoami.find("  host: " + files_.url() + " (from DATABRICKS_MODEL_SERVING_HOST_URL)\n"), std::string::npos)
      << whoami;
  EXPECT_NE(whoami.find("  credentials: Databricks Model Serving's token (" + TokenFile() + ") (bearer token)\n"),
            std::string::npos)
      << whoami;
  EXPECT_NE(whoami.find("google-id (no service account to impersonate (DATABRICKS_GOOGLE_SERVICE_ACCOUNT)), "
                        "model-serving (used)\n"),
            std::string::npos)
      << whoami;
  EXPECT_EQ(whoami.find("serving-token-1"), std::string::npos) << whoami;

  auto config = LoadDatabricksConfig();
  ASSERT_TRUE(config.ok());
  config->host = files_.url();
  auto credential = MakeDatabricksCredentialChain(*config)->Fetch(1000);
  ASSERT_TRUE(credential.ok()) << credential.status().ToString();
  EXPECT_EQ(credential->expires_at, std::optional<int64_t>(1300));
}

// Outside a serving endpoint, or with a file that holds no token, the
// strategy is left out saying why; never the file's text.
TEST_F(DatabricksModelServingTest, NoServingEnvironmentOrABrokenFileIsSaid) {
  auto chosen = [&](std::map<std::string, std::optional<std::string>> extra) {
    extra["DATABRICKS_HOST"] = files_.url();
    extra["DATABRICKS_AUTH_TYPE"] = "model-serving";
    SetEnv(extra);
    auto config = LoadDatabricksConfig();
    if (!config.ok()) return config.status().message();
    auto got = MakeDatabricksCredentialChain(*config)->Fetch(1000);
    return got.ok() ? got->bearer : got.status().message();
  };
  WriteToken("serving-token-2");
  EXPECT_EQ(chosen({{"SERVING_CREDENTIALS_DIR", dir_.path()}}),
            "no Databricks credentials found; tried: model-serving (not in Databricks Model Serving "
            "(IS_IN_DB_MODEL_SERVING_ENV is not \"true\"))");
  EXPECT_EQ(chosen({{"IS_IN_DATABRICKS_MODEL_SERVING_ENV", "true"}, {"SERVING_CREDENTIALS_DIR", dir_.path()}}),
            "serving-token-2");
  EXPECT_EQ(chosen({{"IS_IN_DB_MODEL_SERVING_ENV", "true"}, {"SERVING_CREDENTIALS_DIR", dir_.path() + "/none"}}),
            "no Databricks credentials found; tried: model-serving (in Model Serving, but there is no token file " +
                dir_.path() + "/none/model-dependencies-oauth-token)");
  ASSERT_TRUE(WriteFileAtomic(TokenFile(), "{\"OAUTH_TOKEN\": [], \"secret\": \"serving-secret-text\"}").ok());
  const std::string broken =
      chosen({{"IS_IN_DB_MODEL_SERVING_ENV", "true"}, {"SERVING_CREDENTIALS_DIR", dir_.path()}});
  EXPECT_EQ(broken, "no Databricks credentials found; tried: model-serving (Model Serving's token file " +
                        TokenFile() + " holds no OAUTH_TOKEN[0].oauthTokenValue)");
}

}  // namespace
}  // namespace sluice
