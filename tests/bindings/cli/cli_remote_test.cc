// The sluice CLI on remote datasets: inspect, verify, cat and convert against
// a real, signature-verifying s3rver, a real azurite and a real nginx
// (started by the fixtures of tests/stores) give exactly what they give on the local folder;
// wrong credentials and missing or corrupt shards fail naming the URL; the
// secret passed in the environment never shows in the output.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "base/file.h"
#include "engine/runtime/event_loop.h"
#include "stores/store.h"
#include "tests/bindings/cli/cli_runner.h"
#include "tests/stores/common/azurite_suite.h"
#include "tests/stores/common/fake_hf_hub.h"
#include "tests/stores/common/fake_http_server.h"
#include "tests/stores/common/node_server_suite.h"
#include "tests/stores/common/node_servers.h"
#include "tests/stores/http/test_servers.h"

namespace sluice {
namespace {

using testing::CleanStoreEnv;
using testing::CliRun;
using testing::NodeServer;
using testing::ScopedEnv;
using testing::Sluice;
using testing::TempDir;

const std::string kMds = std::string(SLUICE_TEST_DATA_DIR) + "/mosaic/mds/";
constexpr char kKeyId[] = "SLUICECLIKEY";
constexpr char kSecret[] = "s3cr3t-cli-Zq7-never-printed";

// The output of `command` on the local folder, with its "dataset:" line
// naming `url` instead: what the same command must print for the URL.
std::string AsIfRemote(std::string local_out, const std::string& folder, const std::string& url) {
  size_t at = local_out.find("dataset:     " + folder + "\n");
  if (at != std::string::npos) local_out.replace(at + 13, folder.size(), url);
  return local_out;
}

class CliRemoteTest : public testing::NodeServerSuite<CliRemoteTest> {
 public:
  static std::unique_ptr<NodeServer> StartServer(const std::string& dir) {
    return testing::StartS3rver(dir, kKeyId, kSecret, {"bkt"});
  }
  static std::map<std::string, std::optional<std::string>> StoreEnv() {
    return testing::S3rverEnv(server_->port(), kKeyId, kSecret);
  }

 protected:
  // Uploads every file of local `folder` (sub-folders too) under `url`,
  // except those named in `skip`; `corrupt` gets one byte flipped.
  void Upload(const std::string& folder, const std::string& url,
              const std::vector<std::string>& skip = {}, const std::string& corrupt = "") {
    auto local = OpenStore(folder, loop_.executor());
    auto remote = OpenStore(url, loop_.executor());
    ASSERT_TRUE(local.ok() && remote.ok());
    auto files = loop_.Run((*local)->List(""));
    ASSERT_TRUE(files.ok()) << files.status().ToString();
    for (const ObjectInfo& f : *files) {
      if (std::find(skip.begin(), skip.end(), f.key) != skip.end()) continue;
      auto bytes = ReadFile(JoinPath(folder, f.key));
      ASSERT_TRUE(bytes.ok());
      if (f.key == corrupt) (*bytes)[bytes->size() / 2] ^= 0x20;
      Status put = loop_.Run((*remote)->Put(f.key, std::move(*bytes)));
      ASSERT_TRUE(put.ok()) << put.ToString();
    }
  }

  // Runs the CLI and checks that the secret does not show.
  CliRun Run(const std::string& args) {
    CliRun r = Sluice(args);
    EXPECT_EQ(r.out.find(kSecret), std::string::npos) << args << ":\n" << r.out;
    return r;
  }
};

TEST_F(CliRemoteTest, InspectVerifyCatMatchTheLocalFolder) {
  for (const std::string name : {"compressed_zstd_hashed", "merged", "json_zstd_hashed"}) {
    std::string folder = kMds + name;
    std::string url = "s3://bkt/same/" + name;
    Upload(folder, url);
    CliRun local = Run("inspect --shards " + folder);
    ASSERT_EQ(local.exit_code, 0) << local.out;
    CliRun remote = Run("inspect --shards " + url);
    EXPECT_EQ(remote.exit_code, 0);
    EXPECT_EQ(remote.out, AsIfRemote(local.out, folder, url)) << name;

    local = Run("verify " + folder);
    ASSERT_EQ(local.exit_code, 0) << local.out;
    remote = Run("verify " + url + "/");
    EXPECT_EQ(remote.exit_code, 0);
    EXPECT_EQ(remote.out, local.out) << name;

    for (const std::string index : {"0", "7", "31", "105"}) {
      local = Run("cat " + folder + " " + index);
      remote = Run("cat " + url + " " + index);
      EXPECT_EQ(remote.exit_code, local.exit_code) << name << " " << index;
      if (local.exit_code == 0) {
        EXPECT_EQ(remote.out, local.out) << name << " " << index;
      } else {  // past the end: the same message, naming the URL
        EXPECT_NE(remote.out.find(url + ": sample " + index + " is past the end"),
                  std::string::npos) << remote.out;
      }
    }
  }
}

TEST_F(CliRemoteTest, WrongSecretFailsNamingTheUrlAndStatus) {
  Upload(kMds + "compressed_zstd", "s3://bkt/auth");
  const std::string wrong = "wr0ng-s3cret-Pq4";
  ScopedEnv bad("AWS_SECRET_ACCESS_KEY", wrong);
  for (const std::string cmd : {"inspect", "verify", "cat"}) {
    CliRun r = Run(cmd + " s3://bkt/auth" + (cmd == "cat" ? " 0" : ""));
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_EQ(r.out.rfind("sluice " + cmd + ": permission denied: s3://bkt/auth/index.json: ", 0),
              0u) << r.out;
    EXPECT_NE(r.out.find("403"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find(wrong), std::string::npos) << r.out;
  }
  ScopedEnv half("AWS_ACCESS_KEY_ID", std::nullopt);
  CliRun r = Run("inspect s3://bkt/auth");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("s3://bkt/auth: environment: only one of AWS_ACCESS_KEY_ID and "
                       "AWS_SECRET_ACCESS_KEY"),
            std::string::npos) << r.out;
  // No credential source applies: unsigned, as Mosaic does for public data
  // (s3rver serves anonymous reads). EC2 metadata off: no probe leaves 127.0.0.1.
  ScopedEnv none(std::map<std::string, std::optional<std::string>>{
      {"AWS_SECRET_ACCESS_KEY", std::nullopt}, {"AWS_EC2_METADATA_DISABLED", "true"}});
  r = Run("inspect s3://bkt/auth");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("dataset:     s3://bkt/auth"), std::string::npos) << r.out;
  r = Run("inspect 's3://bkt/auth?X-Amz-Signature=f00dfeed'");  // a query is never echoed
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out.find("f00dfeed"), std::string::npos) << r.out;
}

TEST_F(CliRemoteTest, MissingAndCorruptShardsFailNamingTheObject) {
  Upload(kMds + "compressed_zstd_hashed", "s3://bkt/broken", {"shard.00001.mds.zstd"},
         "shard.00003.mds.zstd");
  CliRun r = Run("verify s3://bkt/broken");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("FAIL shard 1 (shard.00001.mds): not found: "
                       "s3://bkt/broken/shard.00001.mds.zstd"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("FAIL shard 3 (shard.00003.mds): "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("s3://bkt/broken/shard.00003.mds.zstd"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("FAILED: 2 of 5 shards have problems"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("/tmp/"), std::string::npos) << r.out;  // no temporary paths
  // cat needs only the shard of its sample.
  EXPECT_EQ(Run("cat s3://bkt/broken 0").exit_code, 0);
  r = Run("inspect s3://bkt/nothing-here");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("not found: s3://bkt/nothing-here/index.json"), std::string::npos) << r.out;
}

TEST_F(CliRemoteTest, ConvertReadsAndWritesUrls) {
  TempDir tmp;
  std::string local_out = tmp.path() + "/out";
  std::string opts = " --compression zstd:3 --size-limit 16kb --hashes xxh64";
  CliRun r = Run("convert " + kMds + "all_encodings " + local_out + opts);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  Upload(kMds + "all_encodings", "s3://bkt/conv/in");
  r = Run("convert s3://bkt/conv/in s3://bkt/conv/out" + opts);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find(" to s3://bkt/conv/out\n"), std::string::npos) << r.out;
  // Every file the local conversion wrote is in the bucket, byte for byte.
  auto local = OpenStore(local_out, loop_.executor());
  auto remote = OpenStore("s3://bkt/conv/out", loop_.executor());
  ASSERT_TRUE(local.ok() && remote.ok());
  auto want = loop_.Run((*local)->List(""));
  auto got = loop_.Run((*remote)->List(""));
  ASSERT_TRUE(want.ok() && got.ok());
  ASSERT_EQ(got->size(), want->size());
  for (size_t i = 0; i < want->size(); ++i) {
    EXPECT_EQ((*got)[i].key, (*want)[i].key);
    auto a = ReadFile(JoinPath(local_out, (*want)[i].key));
    auto b = loop_.Run((*remote)->Get((*want)[i].key));
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_TRUE(*a == *b) << (*want)[i].key;
  }
  EXPECT_EQ(Run("verify s3://bkt/conv/out").exit_code, 0);
  // A plain file named by URL.
  ASSERT_TRUE(loop_.Run((*remote)->Put("plain.jsonl", "{\"a\": 5}\n{\"a\": 6}\n")).ok());
  r = Run("convert s3://bkt/conv/out/plain.jsonl " + tmp.path() + "/plain --columns a:int8");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(Run("cat " + tmp.path() + "/plain 1").out.find("\"value\": 6"), std::string::npos);
  r = Run("convert s3://bkt/conv/none.jsonl " + tmp.path() + "/none --columns a:int8");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("s3://bkt/conv/none.jsonl/index.json"), std::string::npos) << r.out;
}

class CliAzureTest : public testing::NodeServerSuite<CliAzureTest> {
 public:
  static std::unique_ptr<NodeServer> StartServer(const std::string& dir) {
    return testing::StartAzurite(dir);
  }
  static std::map<std::string, std::optional<std::string>> StoreEnv() {
    return testing::AzuriteEnv(server_->port());
  }
};

TEST_F(CliAzureTest, ConvertToAzureThenReadItBackAsLocally) {
  Status made = testing::CreateAzuriteContainer(loop_, server_->port(), "data");
  ASSERT_TRUE(made.ok()) << made.ToString();
  TempDir tmp;
  std::string folder = tmp.path() + "/local";
  std::string url = "azure://data/ds";
  std::string opts = " --compression zstd:3 --size-limit 16kb --hashes xxh64,sha1";
  CliRun r = Sluice("convert " + kMds + "all_encodings " + folder + opts);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  r = Sluice("convert " + kMds + "all_encodings " + url + opts);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  CliRun local = Sluice("inspect --shards " + folder);
  EXPECT_EQ(Sluice("inspect --shards " + url).out, AsIfRemote(local.out, folder, url));
  CliRun verified = Sluice("verify azure-dl://data/ds");
  EXPECT_EQ(verified.exit_code, 0) << verified.out;
  EXPECT_EQ(verified.out, Sluice("verify " + folder).out);
  for (const std::string index : {"0", "100", "239"}) {
    EXPECT_EQ(Sluice("cat " + url + " " + index).out, Sluice("cat " + folder + " " + index).out);
  }
  // A wrong account key: 403 naming the blob, the key never printed.
  const std::string wrong_key = "d3Jvbmcta2V5LW5ldmVyLXByaW50ZWQ=";
  ScopedEnv bad("AZURE_STORAGE_CONNECTION_STRING",
                "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" +
                    wrong_key + ";BlobEndpoint=" + testing::AzuriteEndpoint(server_->port()) + ";");
  r = Sluice("cat " + url + " 0");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("azure://data/ds/index.json: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("403"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(wrong_key), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(kAzuriteAccountKey), std::string::npos) << r.out;
}

TEST(CliRemoteHttpTest, NginxServesWhatTheFolderHolds) {
  TempDir dir;
  auto nginx = testing::NginxServer::Start(dir.path());
  if (nginx == nullptr) GTEST_SKIP() << "nginx did not start (is it installed?)";
  ScopedEnv env(CleanStoreEnv());
  std::string folder = kMds + "merged";
  ASSERT_EQ(testing::Shell("cp -r '" + folder + "' '" + nginx->www() + "/ds'"), 0);
  std::string url = "http://127.0.0.1:" + std::to_string(nginx->http_port()) + "/ds";
  CliRun local = Sluice("inspect --shards " + folder);
  CliRun remote = Sluice("inspect --shards " + url);
  EXPECT_EQ(remote.out, AsIfRemote(local.out, folder, url));
  EXPECT_EQ(Sluice("verify " + url).out, Sluice("verify " + folder).out);
  EXPECT_EQ(Sluice("cat " + url + " 77").out, Sluice("cat " + folder + " 77").out);
  CliRun write = Sluice("convert " + folder + " " + url + "/copy");
  EXPECT_EQ(write.exit_code, 1);
  EXPECT_NE(write.out.find(url + "/copy"), std::string::npos) << write.out;
}

// Entries of a folder other than "." and "..".
std::vector<std::string> FolderEntries(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d)) {
      std::string name = e->d_name;
      if (name != "." && name != "..") out.push_back(name);
    }
    ::closedir(d);
  }
  return out;
}

TEST(CliTempFolderTest, RemovedWhenTheCommandIsKilled) {
  // A server that stalls on index.json (a stand-in for a slow store), so
  // that the CLI is killed while its temporary folder exists.
  testing::FakeHttpServer slow([](const testing::FakeRequest&) {
    std::this_thread::sleep_for(std::chrono::seconds(3));
    return testing::FakeResponse{404, {}, ""};
  });
  TempDir tmp;
  // Everything the child needs is made before the fork: between fork and
  // exec the child may only make async-signal-safe calls (the server's
  // thread may hold the allocator's lock at the fork, and then a malloc in
  // the child, by setenv or a string, waits for ever; seen under ASan).
  const std::string url = slow.url() + "/ds";
  const std::string tmpdir = "TMPDIR=" + tmp.path();
  std::vector<char*> envp;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "TMPDIR=", 7) != 0) envp.push_back(*e);
  }
  envp.push_back(const_cast<char*>(tmpdir.c_str()));
  envp.push_back(nullptr);
  char* const argv[] = {const_cast<char*>("sluice"), const_cast<char*>("verify"),
                        const_cast<char*>(url.c_str()), nullptr};
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int devnull = ::open("/dev/null", O_WRONLY);
    ::dup2(devnull, 1);
    ::dup2(devnull, 2);
    ::execve(SLUICE_CLI_PATH, argv, envp.data());
    ::_exit(127);
  }
  // Wait until the CLI has made its folder, then interrupt it.
  for (int i = 0; i < 2000 && FolderEntries(tmp.path()).empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(FolderEntries(tmp.path()).size(), 1u);
  ::kill(pid, SIGINT);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT) << status;
  EXPECT_TRUE(FolderEntries(tmp.path()).empty());
}

}  // namespace
}  // namespace sluice

namespace sluice {
namespace {

// A Mosaic dataset on a (fake) Hugging Face Hub repository, its shards behind
// the CDN redirect: inspect and verify give what they give on the folder;
// whoami names the token's source, never the token.
TEST(CliHfTest, InspectVerifyAndWhoamiThroughTheHub) {
  testing::FakeHfHub hub;
  hub.require_token = true;
  hub.page_size = 3;
  const std::string folder = kMds + "compressed_zstd_hashed";
  DIR* dir = opendir(folder.c_str());
  ASSERT_NE(dir, nullptr);
  while (dirent* e = readdir(dir)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    auto bytes = ReadFile(folder + "/" + name);
    ASSERT_TRUE(bytes.ok()) << name;
    hub.Put("datasets/org/mds", "main", "data/" + name, std::move(*bytes));
  }
  closedir(dir);
  auto env = CleanStoreEnv();
  env["HF_ENDPOINT"] = hub.url();
  env["HF_TOKEN"] = testing::FakeHfHub::kToken;
  ScopedEnv scoped(env);
  const std::string url = "hf://datasets/org/mds/data";
  CliRun local = Sluice("inspect --shards " + folder);
  ASSERT_EQ(local.exit_code, 0) << local.out;
  CliRun remote = Sluice("inspect --shards " + url);
  EXPECT_EQ(remote.exit_code, 0) << remote.out;
  EXPECT_EQ(remote.out, AsIfRemote(local.out, folder, url));
  local = Sluice("verify " + folder);
  remote = Sluice("verify " + url);
  EXPECT_EQ(remote.exit_code, 0) << remote.out;
  EXPECT_EQ(remote.out, local.out);
  EXPECT_GE(hub.cdn_gets(), 1);
  EXPECT_TRUE(hub.cdn_authorizations().empty());
  CliRun whoami = Sluice("whoami " + url);
  EXPECT_EQ(whoami.exit_code, 0);
  EXPECT_EQ(whoami.out, "hf://datasets/org/mds/data\n  endpoint: " + hub.url() +
                            "\n  repository: dataset org/mds, revision main\n"
                            "  token: environment (HF_TOKEN) (bearer token)\n"
                            "  sources tried: environment (used)\n");
  for (const CliRun& r : {remote, whoami}) {
    EXPECT_EQ(r.out.find(testing::FakeHfHub::kToken), std::string::npos) << r.out;
  }
}

TEST(CliWhoamiTest, DatabricksNamesTheTokensSourceNeverTheToken) {
  auto env = CleanStoreEnv();
  env["DATABRICKS_HOST"] = "adb-1.2.azuredatabricks.net";
  env["DATABRICKS_TOKEN"] = kSecret;
  ScopedEnv scoped(env);
  CliRun r = Sluice("whoami dbfs:/Volumes/main/default/vol");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out, "dbfs:/Volumes/main/default/vol\n"
                   "  host: https://adb-1.2.azuredatabricks.net (from DATABRICKS_HOST)\n"
                   "  credentials: personal access token from DATABRICKS_TOKEN (bearer token)\n"
                   "  sources tried: pat (used)\n");
}

}  // namespace
}  // namespace sluice
