// dbfs:/Volumes/... against FakeDatabricksFiles: a fake of the Databricks
// Files API (no real workspace can run here) that keeps files in memory,
// serves ranges, pages directory listings and demands the bearer token.
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "base/file.h"
#include "engine/runtime/event_loop.h"
#include "stores/store.h"
#include "tests/stores/common/fake_http_server.h"
#include "tests/stores/common/node_servers.h"
#include "tests/stores/http/test_servers.h"

namespace sluice {
namespace {

using testing::CleanStoreEnv;
using testing::FakeHttpServer;
using testing::FakeRequest;
using testing::FakeResponse;
using testing::PatternBytes;
using testing::ScopedEnv;
using testing::TempDir;

constexpr char kToken[] = "dapi-secret-token-0001";

class FakeDatabricksFiles {
 public:
  FakeDatabricksFiles() : server_([this](const FakeRequest& r) { return Handle(r); }) {}
  std::string url() const { return server_.url(); }

  // Each directory listing waits this long (outside the lock, so that
  // listings in flight together overlap); the most seen at once.
  std::atomic<int> list_delay_ms{0};
  std::atomic<int> max_lists_in_flight{0};

 private:
  FakeResponse Handle(const FakeRequest& r) {
    if (r.target.rfind("/api/2.0/fs/directories", 0) != 0) return HandleLocked(r);
    int now = ++lists_in_flight_;
    for (int seen = max_lists_in_flight; now > seen &&
         !max_lists_in_flight.compare_exchange_weak(seen, now);) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(list_delay_ms.load()));
    FakeResponse response = HandleLocked(r);
    --lists_in_flight_;
    return response;
  }

  FakeResponse HandleLocked(const FakeRequest& r) {
    std::lock_guard<std::mutex> lock(mu_);
    if (r.Header("authorization") != std::string("Bearer ") + kToken) {
      return {401, {}, "{\"error_code\":\"UNAUTHENTICATED\"}"};
    }
    std::string target = r.target;
    std::string query;
    if (size_t q = target.find('?'); q != std::string::npos) {
      query = target.substr(q + 1);
      target.resize(q);
    }
    const std::string files = "/api/2.0/fs/files";
    const std::string dirs = "/api/2.0/fs/directories";
    if (target.rfind(files, 0) == 0) {
      std::string path = target.substr(files.size());
      if (r.method == "PUT") {
        if (query != "overwrite=true") return {400, {}, "overwrite"};
        files_[path] = r.body;
        return {204, {}, ""};
      }
      auto it = files_.find(path);
      if (it == files_.end()) return {404, {}, "{\"error_code\":\"NOT_FOUND\"}"};
      std::string range = r.Header("range");
      if (!range.empty()) {
        size_t dash = range.find('-');
        uint64_t first = std::stoull(range.substr(6, dash - 6));
        uint64_t last = std::min<uint64_t>(std::stoull(range.substr(dash + 1)),
                                           it->second.size() - 1);
        if (first >= it->second.size()) return {416, {}, ""};
        return {206,
                {{"Content-Range", "bytes " + std::to_string(first) + "-" +
                                       std::to_string(last) + "/" +
                                       std::to_string(it->second.size())}},
                it->second.substr(first, last - first + 1)};
      }
      return {200, {}, it->second};
    }
    if (target.rfind(dirs, 0) == 0) {
      std::string dir = target.substr(dirs.size()) + "/";
      // Immediate children, sorted; pages of page_size, token = index.
      std::vector<std::string> entries;
      std::map<std::string, bool> seen_dirs;
      for (const auto& [path, body] : files_) {
        if (path.rfind(dir, 0) != 0) continue;
        std::string rest = path.substr(dir.size());
        size_t slash = rest.find('/');
        if (slash == std::string::npos) {
          entries.push_back("{\"path\": \"" + path + "\", \"is_directory\": false, \"file_size\": " +
                            std::to_string(body.size()) + ", \"name\": \"" + rest + "\"}");
        } else if (!seen_dirs[rest.substr(0, slash)]) {
          seen_dirs[rest.substr(0, slash)] = true;
          entries.push_back("{\"path\": \"" + dir + rest.substr(0, slash) +
                            "/\", \"is_directory\": true, \"name\": \"" + rest.substr(0, slash) +
                            "\"}");
        }
      }
      if (entries.empty()) return {404, {}, "{\"error_code\":\"NOT_FOUND\"}"};
      size_t start = 0, size = 1000;
      for (const std::string& kv : {std::string("page_size="), std::string("page_token=")}) {
        size_t p = query.find(kv);
        if (p == std::string::npos) continue;
        size_t v = std::stoull(query.substr(p + kv.size()));
        if (kv == "page_size=") size = v; else start = v;
      }
      std::string body = "{\"contents\": [";
      size_t end = std::min(entries.size(), start + size);
      for (size_t i = start; i < end; ++i) body += (i > start ? ", " : "") + entries[i];
      body += "]";
      if (end < entries.size()) body += ", \"next_page_token\": \"" + std::to_string(end) + "\"";
      ++list_pages;
      return {200, {{"Content-Type", "application/json"}}, body + "}"};
    }
    return {404, {}, ""};
  }

 public:
  int list_pages = 0;

 private:
  std::atomic<int> lists_in_flight_{0};
  std::mutex mu_;
  std::map<std::string, std::string> files_;
  FakeHttpServer server_;  // last: stops first
};

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
  EXPECT_GE(fake_.list_pages, 4);  // pages of two entries were followed
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
