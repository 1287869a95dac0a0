// http(s):// read-only stores against a real nginx (started by the
// fixture), and the bearer token against a fake that checks it.
#include <chrono>
#include <sstream>
#include <thread>
#include <string>
#include <vector>

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

TEST(WebStoreTest, ReadsFromNginx) {
  TempDir dir;
  auto nginx = testing::NginxServer::Start(dir.path());
  if (nginx == nullptr) GTEST_SKIP() << "nginx did not start (is it installed?)";
  ScopedEnv env(CleanStoreEnv());
  std::string data = PatternBytes(200000, 4);
  ASSERT_TRUE(MakeDirs(nginx->www() + "/ds/part").ok());
  ASSERT_TRUE(WriteFileAtomic(nginx->www() + "/ds/part/shard.mds", data).ok());
  EventLoop loop;
  StoreOptions options;
  options.part_size = 64 << 10;
  options.download_retry = 0;
  auto store = OpenStore("http://127.0.0.1:" + std::to_string(nginx->http_port()) + "/ds/",
                         loop.executor(), options);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto got = loop.Run((*store)->Get("part/shard.mds"));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(*got == data);
  auto head = loop.Run((*store)->Head("part/shard.mds"));
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(head->size, 200000u);
  auto range = loop.Run((*store)->GetRange("part/shard.mds", 199990, 50));
  ASSERT_TRUE(range.ok()) << range.status().ToString();
  EXPECT_TRUE(*range == data.substr(199990));
  auto at_end = loop.Run((*store)->GetRange("part/shard.mds", 200000, 5));
  ASSERT_TRUE(at_end.ok()) << at_end.status().ToString();
  EXPECT_EQ(*at_end, "");
  std::string dst = dir.path() + "/out.mds";
  ASSERT_TRUE(loop.Run((*store)->GetToFile("part/shard.mds", dst, std::nullopt)).ok());
  EXPECT_TRUE(*ReadFile(dst) == data);
  auto missing = loop.Run((*store)->Get("nope"));
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("/ds/nope"), std::string::npos);
  EXPECT_EQ(loop.Run((*store)->Put("x", "y")).code(), StatusCode::kUnimplemented);
  EXPECT_EQ(loop.Run((*store)->List("")).status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(OpenStore("http://", loop.executor()).status().code(), StatusCode::kInvalidArgument);
}

// GetRangeOnly: the range from a server that serves ranges; from one that
// ignores Range (nginx's max_ranges 0 answers 200 with the whole object),
// kUnimplemented without reading the body, where GetRange cuts the range out
// of the whole object.
TEST(WebStoreTest, GetRangeOnlyRefusesAServerThatIgnoresRange) {
  TempDir dir;
  auto nginx = testing::NginxServer::Start(dir.path(), nullptr,
                                           "location /whole/ { max_ranges 0; }");
  if (nginx == nullptr) GTEST_SKIP() << "nginx did not start (is it installed?)";
  ScopedEnv env(CleanStoreEnv());
  std::string data = PatternBytes(4 << 20, 5);
  for (const char* folder : {"/ranged", "/whole"}) {
    ASSERT_TRUE(MakeDirs(nginx->www() + folder).ok());
    ASSERT_TRUE(WriteFileAtomic(nginx->www() + folder + "/shard.mds", data).ok());
  }
  EventLoop loop;
  StoreOptions options;
  options.download_retry = 0;
  auto store = OpenStore("http://127.0.0.1:" + std::to_string(nginx->http_port()), loop.executor(),
                         options);
  ASSERT_TRUE(store.ok()) << store.status().ToString();

  auto ranged = loop.Run((*store)->GetRangeOnly("ranged/shard.mds", 1000, 8));
  ASSERT_TRUE(ranged.ok()) << ranged.status().ToString();
  EXPECT_TRUE(*ranged == data.substr(1000, 8));
  auto whole = loop.Run((*store)->GetRangeOnly("whole/shard.mds", 1000, 8));
  ASSERT_FALSE(whole.ok());
  EXPECT_EQ(whole.status().code(), StatusCode::kUnimplemented) << whole.status().ToString();
  EXPECT_NE(whole.status().message().find("/whole/shard.mds: the server ignored Range"),
            std::string::npos)
      << whole.status().ToString();
  auto cut = loop.Run((*store)->GetRange("whole/shard.mds", 1000, 8));
  ASSERT_TRUE(cut.ok()) << cut.status().ToString();
  EXPECT_TRUE(*cut == data.substr(1000, 8));

  // GetRangeOnly dropped its connection after the head (GetRange, which
  // reads the body, would have kept it): the next request needed another.
  // nginx logs a request after answering it: wait up to a second for both.
  std::vector<std::string> connections;
  for (int tries = 0; tries < 200 && connections.size() < 2; ++tries) {
    if (tries > 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    connections.clear();
    std::istringstream log(nginx->AccessLog());
    for (std::string line; std::getline(log, line);) {
      if (line.find(" /whole/shard.mds 200 bytes=1000-1007") == std::string::npos) continue;
      connections.push_back(line.substr(0, line.find(' ')));
    }
  }
  ASSERT_EQ(connections.size(), 2u) << nginx->AccessLog();
  EXPECT_NE(connections[0], connections[1]) << nginx->AccessLog();
}

// A ranged read that names the object's size (a dataset's index gives it):
// the 206's total confirms it, and the exact bytes come, both read as a
// string and into a buffer; another size is the one "the remote changed"
// error, naming the URL, the size nginx states and the expected one, and
// nothing is returned or written.
TEST(WebStoreTest, RangeOfAnExpectedSizeFailsWhenTheServerStatesAnother) {
  TempDir dir;
  auto nginx = testing::NginxServer::Start(dir.path());
  if (nginx == nullptr) GTEST_SKIP() << "nginx did not start (is it installed?)";
  ScopedEnv env(CleanStoreEnv());
  std::string data = PatternBytes(100000, 6);
  ASSERT_TRUE(MakeDirs(nginx->www() + "/ds").ok());
  ASSERT_TRUE(WriteFileAtomic(nginx->www() + "/ds/shard.mds", data).ok());
  EventLoop loop;
  StoreOptions options;
  options.download_retry = 0;
  const std::string root = "http://127.0.0.1:" + std::to_string(nginx->http_port()) + "/ds";
  auto store = OpenStore(root, loop.executor(), options);
  ASSERT_TRUE(store.ok()) << store.status().ToString();

  auto right = loop.Run((*store)->GetRangeOnlyOfVersion("shard.mds", 500, 20,
                                                        ObjectVersion("", 100000)));
  ASSERT_TRUE(right.ok()) << right.status().ToString();
  EXPECT_EQ(*right, data.substr(500, 20));
  std::string into(20, '\0');
  auto right_into = loop.Run((*store)->GetRangeOnlyInto("shard.mds", 500, 20,
                                                        ObjectVersion("", 100000), into.data()));
  ASSERT_TRUE(right_into.ok()) << right_into.status().ToString();
  EXPECT_EQ(*right_into, 20u);
  EXPECT_EQ(into, data.substr(500, 20));

  const std::string error = "GET " + root + "/shard.mds: the object is 100000 bytes, index.json "
                            "says 99984 (the remote changed since it was indexed?)";
  auto wrong = loop.Run((*store)->GetRangeOnlyOfVersion("shard.mds", 500, 20,
                                                        ObjectVersion("", 99984)));
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), StatusCode::kCorrupt);
  EXPECT_NE(wrong.status().message().find(error), std::string::npos) << wrong.status().ToString();
  std::string untouched(20, '.');
  auto wrong_into = loop.Run((*store)->GetRangeOnlyInto("shard.mds", 500, 20,
                                                        ObjectVersion("", 99984),
                                                        untouched.data()));
  ASSERT_FALSE(wrong_into.ok());
  EXPECT_EQ(wrong_into.status().code(), StatusCode::kCorrupt);
  EXPECT_NE(wrong_into.status().message().find(error), std::string::npos)
      << wrong_into.status().ToString();
  EXPECT_EQ(untouched, std::string(20, '.'));
}

TEST(WebStoreTest, BearerTokenAndRootQueryAreSentButNeverShown) {
  const std::string token = "hf_secret_token_123";
  FakeHttpServer fake([&](const FakeRequest& r) -> FakeResponse {
    if (r.Header("authorization") != "Bearer " + token) return {403, {}, "denied"};
    if (r.target == "/repo/a.json?sig=s3cr3tsig") return {200, {}, "{}"};
    return {404, {}, ""};
  });
  EventLoop loop;
  auto env = CleanStoreEnv();
  env["SLUICE_HTTP_BEARER_TOKEN"] = token;
  ScopedEnv scoped(env);
  StoreOptions options;
  options.download_retry = 0;
  auto store = OpenStore(fake.url() + "/repo?sig=s3cr3tsig", loop.executor(), options);
  ASSERT_TRUE(store.ok());
  EXPECT_EQ((*store)->root().find("s3cr3tsig"), std::string::npos) << (*store)->root();
  auto got = loop.Run((*store)->Get("a.json"));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, "{}");
  ScopedEnv wrong("SLUICE_HTTP_BEARER_TOKEN", "wrong-token-xyz");
  auto denied_store = OpenStore(fake.url() + "/repo?sig=s3cr3tsig", loop.executor(), options);
  auto denied = loop.Run((*denied_store)->Get("a.json"));
  EXPECT_EQ(denied.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(denied.status().message().find("403"), std::string::npos);
  EXPECT_EQ(denied.status().message().find("wrong-token-xyz"), std::string::npos);
  EXPECT_EQ(denied.status().message().find("s3cr3tsig"), std::string::npos)
      << denied.status().message();
}

}  // namespace
}  // namespace sluice
