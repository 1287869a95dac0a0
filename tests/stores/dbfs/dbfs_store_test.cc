// dbfs:/Volumes/... against FakeDatabricksFiles (tests/stores/common), a fake
// of the Databricks Files API: no real workspace can run here.
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "base/file.h"
#include "engine/runtime/event_loop.h"
#include "stores/store.h"
#include "tests/stores/common/fake_databricks_files.h"
#include "tests/stores/common/node_servers.h"
#include "tests/stores/http/test_servers.h"

namespace sluice {
namespace {

using testing::CleanStoreEnv;
using testing::FakeDatabricksFiles;
using testing::PatternBytes;
using testing::ScopedEnv;
using testing::TempDir;

constexpr const char* kToken = FakeDatabricksFiles::kToken;

class DbfsStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto env = CleanStoreEnv();
    env["DATABRICKS_HOST"] = fake_.url();
    env["DATABRICKS_TOKEN"] = kToken;
    env_ = std::make_unique<ScopedEnv>(env);
  }
  std::unique_ptr<Store> Open(const std::string& url, StoreOptions options = {}) {
    options.download_retry = 0;
    auto store = OpenStore(url, loop_.executor(), options);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(store).value() : nullptr;
  }
  FakeDatabricksFiles fake_;
  std::unique_ptr<ScopedEnv> env_;
  EventLoop loop_;
  TempDir dir_;
};

TEST_F(DbfsStoreTest, PutGetRangeHeadListThroughTheFilesApi) {
  StoreOptions options;
  options.list_page_size = 2;
  options.part_size = 4096;
  auto store = Open("dbfs:/Volumes/main/default/vol/ds/", options);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->root(), "dbfs:/Volumes/main/default/vol/ds");
  std::string data = PatternBytes(10000, 8);
  ASSERT_TRUE(loop_.Run(store->Put("index.json", "{}")).ok());
  std::string src = dir_.path() + "/shard";
  ASSERT_TRUE(WriteFileAtomic(src, data).ok());
  Status put = loop_.Run(store->PutFile("p/q/shard.00000.mds", src));
  ASSERT_TRUE(put.ok()) << put.ToString();
  for (const char* k : {"p/a", "p/b", "p/c", "z"}) ASSERT_TRUE(loop_.Run(store->Put(k, k)).ok());
  auto got = loop_.Run(store->Get("p/q/shard.00000.mds"));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(*got == data);
  EXPECT_EQ(loop_.Run(store->Head("p/q/shard.00000.mds"))->size, 10000u);
  auto range = loop_.Run(store->GetRange("p/q/shard.00000.mds", 9000, 2000));
  ASSERT_TRUE(range.ok()) << range.status().ToString();
  EXPECT_TRUE(*range == data.substr(9000));
  std::string dst = dir_.path() + "/out";
  ASSERT_TRUE(loop_.Run(store->GetToFile("p/q/shard.00000.mds", dst, std::nullopt)).ok());
  EXPECT_TRUE(*ReadFile(dst) == data);
  auto all = loop_.Run(store->List(""));
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  std::vector<std::string> keys;
  for (const auto& info : *all) keys.push_back(info.key);
  EXPECT_EQ(keys, (std::vector<std::string>{"index.json", "p/a", "p/b", "p/c",
                                            "p/q/shard.00000.mds", "z"}));
  EXPECT_EQ((*all)[4].size, 10000u);
  // Each file's version is its last_modified; a file written again at the
  // same size gets another, the others keep theirs.
  std::vector<std::string> versions;
  for (const auto& info : *all) versions.push_back(info.etag);
  for (const std::string& v : versions) EXPECT_EQ(v.rfind("mtime-ms 17", 0), 0u) << v;
  EXPECT_EQ(std::set<std::string>(versions.begin(), versions.end()).size(), versions.size());
  ASSERT_TRUE(loop_.Run(store->Put("p/b", "B")).ok());
  auto again = loop_.Run(store->List(""));
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  ASSERT_EQ(again->size(), versions.size());
  for (size_t k = 0; k < versions.size(); ++k) {
    if ((*again)[k].key == "p/b") {
      EXPECT_NE((*again)[k].etag, versions[k]);
      EXPECT_EQ((*again)[k].size, 1u);
    } else {
      EXPECT_EQ((*again)[k].etag, versions[k]) << (*again)[k].key;
    }
  }
  EXPECT_GE(fake_.list_pages(), 4);  // pages of two entries were followed
  auto p = loop_.Run(store->List("p/q"));
  ASSERT_TRUE(p.ok());
  ASSERT_EQ(p->size(), 1u);
  auto empty = loop_.Run(Open("dbfs:/Volumes/main/default/vol/none")->List(""));
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_TRUE(empty->empty());
  auto missing = loop_.Run(store->Get("nope"));
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("dbfs:/Volumes/main/default/vol/ds/nope"),
            std::string::npos);
}

TEST_F(DbfsStoreTest, FoldersOfALevelAreListedConcurrently) {
  auto store = Open("dbfs:/Volumes/main/default/vol/imgs");
  ASSERT_NE(store, nullptr);
  std::vector<std::string> want;
  for (int i = 0; i < 24; ++i) {
    std::string folder = "class" + std::to_string(100 + i);
    for (const std::string& key : {folder + "/a.jpg", folder + "/deeper/b.jpg"}) {
      ASSERT_TRUE(loop_.Run(store->Put(key, key)).ok());
      want.push_back(key);
    }
  }
  ASSERT_TRUE(loop_.Run(store->Put("other/c.jpg", "c")).ok());
  std::sort(want.begin(), want.end());
  fake_.list_delay_ms = 40;
  auto all = loop_.Run(store->List("class1"));
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  std::vector<std::string> keys;
  for (const auto& info : *all) keys.push_back(info.key);
  EXPECT_EQ(keys, want);  // sorted, `other/` left out by the prefix
  // 1 root + 24 folders + 24 deeper ones: one at a time would be 1.
  EXPECT_GE(fake_.max_lists_in_flight.load(), 8);
  EXPECT_LE(fake_.max_lists_in_flight.load(), 16);
}

TEST_F(DbfsStoreTest, SettingsAndAuthErrors) {
  {
    ScopedEnv wrong("DATABRICKS_TOKEN", "dapi-wrong-token");
    auto store = Open("dbfs:/Volumes/c/s/v");
    auto got = loop_.Run(store->Get("x"));
    EXPECT_EQ(got.status().code(), StatusCode::kPermissionDenied);
    EXPECT_EQ(got.status().message().find("dapi-wrong-token"), std::string::npos);
  }
  {
    ScopedEnv no_token("DATABRICKS_TOKEN", std::nullopt);
    auto s = OpenStore("dbfs:/Volumes/c/s/v", loop_.executor());
    EXPECT_EQ(s.status().code(), StatusCode::kPermissionDenied);
    EXPECT_NE(s.status().message().find("DATABRICKS_TOKEN"), std::string::npos);
    EXPECT_EQ(s.status().message().find("DATABRICKS_HOST"), std::string::npos);
  }
  EXPECT_EQ(OpenStore("dbfs:/FileStore/x", loop_.executor()).status().code(),
            StatusCode::kUnimplemented);
  EXPECT_EQ(OpenStore("dbfs:/Volumes/c/../x", loop_.executor()).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace sluice
