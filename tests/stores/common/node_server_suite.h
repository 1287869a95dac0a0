// A GoogleTest fixture for suites that share one npm server (s3rver,
// azurite) across their tests. The suite class derives from
// NodeServerSuite<itself> and provides
//   static std::unique_ptr<NodeServer> StartServer(const std::string& dir);
//   static std::map<std::string, std::optional<std::string>> StoreEnv();
// The server starts once per suite (data under a TempDir) and stops after
// its last test. Every test skips, naming why, when node or the npm packages
// are missing, fails when the server did not start, and runs with
// StoreEnv() set (restored afterwards). Header-only; test thread only.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "engine/runtime/event_loop.h"
#include "stores/store.h"
#include "tests/stores/common/node_servers.h"
#include "tests/stores/http/test_servers.h"

namespace sluice::testing {

template <typename Suite>
class NodeServerSuite : public ::testing::Test {
 public:
  static void SetUpTestSuite() {
    reason_ = new std::string(NodeServersUnavailableReason());
    if (!reason_->empty()) return;
    dir_ = new TempDir();
    server_ = Suite::StartServer(dir_->path()).release();
  }
  static void TearDownTestSuite() {
    delete server_;
    delete dir_;
    delete reason_;
    server_ = nullptr;
    dir_ = nullptr;
    reason_ = nullptr;
  }

 protected:
  // Subclasses that do more call this first and return when
  // IsSkipped() || HasFatalFailure().
  void SetUp() override {
    if (!reason_->empty()) GTEST_SKIP() << *reason_;
    ASSERT_NE(server_, nullptr) << "the server of " << ::testing::UnitTest::GetInstance()
                                       ->current_test_suite()->name() << " did not start";
    env_ = std::make_unique<ScopedEnv>(Suite::StoreEnv());
  }

  // The store at `url` on loop_, failing fast (no retries, 10 s timeout);
  // null (and a test failure) when it cannot be opened.
  std::unique_ptr<Store> Open(const std::string& url, StoreOptions options = {}) {
    options.download_retry = 0;
    options.download_timeout_s = 10;
    auto store = OpenStore(url, loop_.executor(), options);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(store).value() : nullptr;
  }

  static inline std::string* reason_ = nullptr;
  static inline TempDir* dir_ = nullptr;
  static inline NodeServer* server_ = nullptr;
  std::unique_ptr<ScopedEnv> env_;
  EventLoop loop_;
};

}  // namespace sluice::testing
