// hf:// against FakeHfHub (tests/stores/common/fake_hf_hub.h), a fake of the
// Hugging Face Hub's API and of its CDN on another loopback origin: no Hub
// can run here.
#include "stores/hf/hf_store.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "base/file.h"
#include "engine/runtime/event_loop.h"
#include "stores/credentials/hf_token.h"
#include "stores/store.h"
#include "tests/common/scoped_env.h"
#include "tests/common/temp_dir.h"
#include "tests/stores/common/fake_hf_hub.h"
#include "tests/stores/common/node_servers.h"
#include "tests/stores/http/test_servers.h"

namespace sluice {
namespace {

using testing::CleanStoreEnv;
using testing::FakeHfHub;
using testing::PatternBytes;
using testing::ScopedEnv;
using testing::TempDir;

constexpr const char* kHfToken = FakeHfHub::kToken;
constexpr const char* kRepo = "datasets/org/name";

class HfStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    shard_ = PatternBytes(10000, 3);
    hub_.Put(kRepo, "main", "index.json", "{\"shards\": []}");
    hub_.Put(kRepo, "main", "train/shard.00000.mds", shard_);
    hub_.Put(kRepo, "main", "train/sub/a.txt", "a");
    hub_.Put(kRepo, "main", "val/b.txt", "bb");
    hub_.Put(kRepo, "refs/convert/parquet", "default/train/0000.parquet", PatternBytes(300, 4));
    hub_.Put(kRepo, "refs/convert/parquet", "default/val/0000.parquet", PatternBytes(200, 5));
    SetEnv({{"HF_TOKEN", kHfToken}});
  }
  void SetEnv(std::map<std::string, std::optional<std::string>> extra) {
    env_.reset();
    auto env = CleanStoreEnv();
    env["HF_ENDPOINT"] = hub_.url();
    for (auto& [k, v] : extra) env[k] = v;
    env_ = std::make_unique<ScopedEnv>(env);
  }
  std::unique_ptr<Store> Open(const std::string& url, StoreOptions options = {}) {
    options.download_retry = 0;
    auto store = OpenStore(url, loop_.executor(), options);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(store).value() : nullptr;
  }
  std::vector<std::string> Keys(Store& store, const std::string& prefix = "") {
    auto all = loop_.Run(store.List(prefix));
    EXPECT_TRUE(all.ok()) << all.status().ToString();
    std::vector<std::string> keys;
    if (all.ok()) {
      for (const auto& info : *all) keys.push_back(info.key);
    }
    return keys;
  }

  FakeHfHub hub_;
  std::string shard_;
  std::unique_ptr<ScopedEnv> env_;
  EventLoop loop_;
  TempDir dir_{"hf_store_test"};
};

TEST_F(HfStoreTest, ListsPageByPageAndReadsThroughTheCdnWhichNeverSeesTheToken) {
  hub_.require_token = true;
  hub_.page_size = 2;
  StoreOptions options;
  options.part_size = 4096;
  auto store = Open("hf://datasets/org/name/", options);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->root(), "hf://datasets/org/name");
  EXPECT_EQ(Keys(*store), (std::vector<std::string>{"index.json", "train/shard.00000.mds",
                                                    "train/sub/a.txt", "val/b.txt"}));
  EXPECT_GE(hub_.tree_pages(), 3);  // 4 files and 3 folders, 2 a page
  auto all = loop_.Run(store->List(""));
  ASSERT_TRUE(all.ok());
  EXPECT_EQ((*all)[1].size, 10000u);
  EXPECT_EQ((*all)[1].etag, FakeHfHub::OidOf(shard_));  // the tree's "oid"
  auto index = loop_.Run(store->Get("index.json"));  // small: from the Hub itself
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  EXPECT_EQ(*index, "{\"shards\": []}");
  auto head = loop_.Run(store->Head("train/shard.00000.mds"));
  ASSERT_TRUE(head.ok()) << head.status().ToString();
  EXPECT_EQ(head->size, 10000u);
  auto range = loop_.Run(store->GetRange("train/shard.00000.mds", 9000, 2000));
  ASSERT_TRUE(range.ok()) << range.status().ToString();
  EXPECT_TRUE(*range == shard_.substr(9000));
  const std::string dst = dir_.path() + "/shard";
  Status got = loop_.Run(store->GetToFile("train/shard.00000.mds", dst, 10000));
  ASSERT_TRUE(got.ok()) << got.ToString();
  EXPECT_TRUE(*ReadFile(dst) == shard_);
  EXPECT_GE(hub_.cdn_gets(), 3);  // the range, then the file's parts
  EXPECT_TRUE(hub_.cdn_authorizations().empty());
  for (const std::string& auth : hub_.hub_authorizations()) {
    EXPECT_EQ(auth, std::string("Bearer ") + kHfToken);
  }
  EXPECT_EQ(loop_.Run(store->Put("x", "y")).code(), StatusCode::kUnimplemented);
}

TEST_F(HfStoreTest, RevisionsSubfoldersAndPrefixes) {
  auto parquet = Open("hf://datasets/org/name@refs%2Fconvert%2Fparquet/default");
  ASSERT_NE(parquet, nullptr);
  EXPECT_EQ(Keys(*parquet), (std::vector<std::string>{"train/0000.parquet", "val/0000.parquet"}));
  EXPECT_EQ(Keys(*parquet, "val/"), (std::vector<std::string>{"val/0000.parquet"}));
  auto bytes = loop_.Run(parquet->Get("train/0000.parquet"));
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  EXPECT_TRUE(*bytes == PatternBytes(300, 4));
  auto slashes = Open("hf://datasets/org/name@refs/convert/parquet/default/val");
  ASSERT_NE(slashes, nullptr);
  EXPECT_EQ(Keys(*slashes), (std::vector<std::string>{"0000.parquet"}));
  auto main = Open("hf://datasets/org/name@main/train");
  ASSERT_NE(main, nullptr);
  EXPECT_EQ(Keys(*main, "sub/"), (std::vector<std::string>{"sub/a.txt"}));
  EXPECT_EQ(Keys(*main, "shard"), (std::vector<std::string>{"shard.00000.mds"}));
  // A folder that does not exist lists as empty, as a local one would.
  auto none = Open("hf://datasets/org/name/nothing/here");
  ASSERT_NE(none, nullptr);
  EXPECT_EQ(Keys(*none), std::vector<std::string>{});
  // A model repository: no type prefix in its resolve URL.
  hub_.Put("org/model", "main", "config.json", "{}");
  auto model = Open("hf://org/model");
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(Keys(*model), (std::vector<std::string>{"config.json"}));
  EXPECT_EQ(*loop_.Run(model->Get("config.json")), "{}");
}

TEST_F(HfStoreTest, MissingRepositoryRevisionAndFileSayWhatTheHubSaid) {
  auto other = Open("hf://datasets/org/other");
  ASSERT_NE(other, nullptr);
  auto list = loop_.Run(other->List(""));
  EXPECT_EQ(list.status().code(), StatusCode::kNotFound);
  EXPECT_NE(list.status().message().find("hf://datasets/org/other: listing /"), std::string::npos)
      << list.status().message();
  EXPECT_NE(list.status().message().find("RepositoryNotFound: Repository not found"),
            std::string::npos)
      << list.status().message();
  auto rev = Open("hf://datasets/org/name@v9");
  auto get = loop_.Run(rev->Get("index.json"));
  EXPECT_EQ(get.status().code(), StatusCode::kNotFound);
  EXPECT_NE(get.status().message().find("hf://datasets/org/name@v9/index.json"), std::string::npos)
      << get.status().message();
  EXPECT_NE(get.status().message().find("RevisionNotFound: Invalid rev id: v9"), std::string::npos)
      << get.status().message();
  for (const Status& s : {list.status(), get.status()}) {
    EXPECT_EQ(s.message().find(kHfToken), std::string::npos);
  }
}

TEST_F(HfStoreTest, PublicRepositoriesReadAnonymouslyAndPrivateOnesSayTheyNeedAToken) {
  SetEnv({});
  auto store = Open("hf://datasets/org/name");
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(*loop_.Run(store->Get("val/b.txt")), "bb");
  EXPECT_TRUE(hub_.hub_authorizations().empty());
  // HF_HUB_DISABLE_IMPLICIT_TOKEN: a token in the environment is not sent.
  SetEnv({{"HF_TOKEN", kHfToken}, {"HF_HUB_DISABLE_IMPLICIT_TOKEN", "1"}});
  auto implicit = Open("hf://datasets/org/name");
  EXPECT_EQ(*loop_.Run(implicit->Get("val/b.txt")), "bb");
  EXPECT_TRUE(hub_.hub_authorizations().empty());
  // A private repository without a token, then with a wrong one.
  hub_.require_token = true;
  SetEnv({});
  auto anonymous = Open("hf://datasets/org/name");
  auto denied = loop_.Run(anonymous->Get("val/b.txt"));
  EXPECT_EQ(denied.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(denied.status().message().find("RepositoryNotFound"), std::string::npos)
      << denied.status().message();
  SetEnv({{"HF_TOKEN", "hf_wrongSecretValue"}});
  auto wrong = Open("hf://datasets/org/name");
  auto refused = loop_.Run(wrong->Get("val/b.txt"));
  EXPECT_EQ(refused.status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(refused.status().message().find("hf_wrongSecretValue"), std::string::npos);
}

TEST_F(HfStoreTest, ATooManyRequestsAnswerIsRetriedAfterRetryAfter) {
  hub_.throttle_tree = 1;
  StoreOptions options;
  auto store = OpenStore("hf://datasets/org/name", loop_.executor(), options);  // 2 retries
  ASSERT_TRUE(store.ok());
  const auto start = std::chrono::steady_clock::now();
  auto all = loop_.Run((*store)->List("val/"));
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_EQ(all->size(), 1u);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(900));
}

// The token sources in huggingface_hub's order, and `sluice whoami`'s text.
TEST_F(HfStoreTest, TokenSourcesInOrderAndWhoamiNamesTheSourceNeverTheToken) {
  const std::string home = dir_.path() + "/home";
  for (const char* d : {"/home/.cache/huggingface", "/hfhome", "/xdg/huggingface"}) {
    std::filesystem::create_directories(dir_.path() + d);
  }
  ASSERT_TRUE(WriteFileAtomic(home + "/.cache/huggingface/token", "hf_fromHomeCache\n").ok());
  ASSERT_TRUE(WriteFileAtomic(dir_.path() + "/hfhome/token", "  hf_fromHfHome\r\n").ok());
  ASSERT_TRUE(WriteFileAtomic(dir_.path() + "/xdg/huggingface/token", "hf_fromXdg").ok());
  ASSERT_TRUE(WriteFileAtomic(dir_.path() + "/path-token", "hf_fromTokenPath").ok());
  struct Case {
    std::map<std::string, std::optional<std::string>> env;
    std::string token, source;
  };
  const std::vector<Case> cases = {
      {{{"HF_TOKEN", "hf_fromEnv"}, {"HUGGING_FACE_HUB_TOKEN", "hf_legacy"},
        {"HF_TOKEN_PATH", dir_.path() + "/path-token"}},
       "hf_fromEnv", "environment (HF_TOKEN)"},
      {{{"HF_TOKEN", " "}, {"HUGGING_FACE_HUB_TOKEN", "hf_legacy"}},
       "hf_legacy", "environment (HUGGING_FACE_HUB_TOKEN)"},
      {{{"HF_TOKEN_PATH", dir_.path() + "/path-token"}, {"HF_HOME", dir_.path() + "/hfhome"}},
       "hf_fromTokenPath", "token file " + dir_.path() + "/path-token"},
      {{{"HF_TOKEN_PATH", std::nullopt}, {"HF_HOME", dir_.path() + "/hfhome"},
        {"XDG_CACHE_HOME", dir_.path() + "/xdg"}},
       "hf_fromHfHome", "token file " + dir_.path() + "/hfhome/token"},
      {{{"HF_TOKEN_PATH", std::nullopt}, {"XDG_CACHE_HOME", dir_.path() + "/xdg"}, {"HOME", home}},
       "hf_fromXdg", "token file " + dir_.path() + "/xdg/huggingface/token"},
      {{{"HF_TOKEN_PATH", std::nullopt}, {"HOME", home}},
       "hf_fromHomeCache", "token file " + home + "/.cache/huggingface/token"},
  };
  for (const Case& c : cases) {
    SetEnv(c.env);
    auto chain = MakeHfTokenChain();
    auto got = chain->Fetch(0);
    ASSERT_TRUE(got.ok()) << c.source << ": " << got.status().ToString();
    EXPECT_EQ(got->bearer, c.token);
    EXPECT_EQ(got->source, c.source);
    auto whoami = DescribeHfAuth("hf://datasets/org/name@refs%2Fconvert%2Fparquet/default");
    ASSERT_TRUE(whoami.ok()) << whoami.status().ToString();
    EXPECT_NE(whoami->find("  token: " + c.source + " (bearer token)\n"), std::string::npos)
        << *whoami;
    EXPECT_EQ(whoami->find(c.token), std::string::npos) << *whoami;
  }
  SetEnv({{"HF_TOKEN", "hf_fromEnv"}});
  EXPECT_EQ(*DescribeHfAuth("hf://datasets/org/name@refs%2Fconvert%2Fparquet/default"),
            "hf://datasets/org/name@refs%2Fconvert%2Fparquet/default\n"
            "  endpoint: " + hub_.url() + "\n"
            "  repository: dataset org/name, revision refs/convert/parquet\n"
            "  token: environment (HF_TOKEN) (bearer token)\n"
            "  sources tried: environment (used)\n");
  SetEnv({});
  EXPECT_EQ(*DescribeHfAuth("hf://org/model"),
            "hf://org/model\n"
            "  endpoint: " + hub_.url() + "\n"
            "  repository: model org/model, revision main\n"
            "  requests: anonymous (no Hugging Face token found; tried: environment (HF_TOKEN not "
            "set), token file (/nonexistent/hf-token does not exist))\n"
            "  sources tried: environment (HF_TOKEN not set), token file (/nonexistent/hf-token "
            "does not exist)\n");
}

}  // namespace
}  // namespace sluice
