// What a request carries across a redirect: credentials stay with their
// origin. Two recording servers on 127.0.0.1 (different ports, so different
// origins) see exactly which headers arrive.
#include "stores/http/redirect_policy.h"

#include <memory>
#include <mutex>

#include <gtest/gtest.h>

#include "engine/runtime/event_loop.h"
#include "stores/http/http_client.h"
#include "tests/stores/common/fake_http_server.h"

namespace sluice {
namespace {

using testing::FakeHttpServer;
using testing::FakeRequest;
using testing::FakeResponse;

HttpHeaders SignedHeaders() {
  return {{"Authorization", "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/..."},
          {"x-amz-security-token", "SESSION-TOKEN-SECRET"},
          {"x-amz-date", "20261126T000000Z"},
          {"x-amz-content-sha256", "UNSIGNED-PAYLOAD"},
          {"x-ms-version", "2021-12-02"},
          {"x-goog-user-project", "p"},
          {"Cookie", "session=SECRET"},
          {"X-Trace", "kept"}};
}

// Records the headers of every request it gets and answers "moved".
class Recorder {
 public:
  Recorder()
      : server_([this](const FakeRequest& r) {
          std::lock_guard<std::mutex> lock(mu_);
          seen_.push_back(r);
          return FakeResponse{200, {}, "moved"};
        }) {}
  std::string url() const { return server_.url(); }
  std::vector<FakeRequest> seen() {
    std::lock_guard<std::mutex> lock(mu_);
    return seen_;
  }

 private:
  std::mutex mu_;
  std::vector<FakeRequest> seen_;
  FakeHttpServer server_;
};

class RedirectTest : public ::testing::Test {
 protected:
  Result<HttpResponse> Get(const std::string& url) {
    auto client = HttpClient::Create(loop_.executor());
    EXPECT_TRUE(client.ok());
    HttpRequest req;
    req.url = url;
    req.headers = SignedHeaders();
    Result<HttpResponse> r = loop_.Run((*client)->Send(req));
    loop_.Shutdown();
    return r;
  }
  EventLoop loop_;
};

TEST_F(RedirectTest, ACrossOriginRedirectCarriesNoCredentials) {
  Recorder other;
  FakeHttpServer origin([&](const FakeRequest&) {
    return FakeResponse{302, {{"Location", other.url() + "/elsewhere"}}, ""};
  });
  Result<HttpResponse> r = Get(origin.url() + "/key");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->body, "moved");
  std::vector<FakeRequest> seen = other.seen();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].target, "/elsewhere");
  for (const char* name : {"authorization", "x-amz-security-token", "x-amz-date",
                           "x-amz-content-sha256", "x-ms-version", "x-goog-user-project",
                           "cookie"}) {
    EXPECT_EQ(seen[0].headers.count(name), 0u) << name << " went to another origin";
  }
  EXPECT_EQ(seen[0].Header("x-trace"), "kept");
}

TEST_F(RedirectTest, ASameOriginRedirectKeepsTheCredentials) {
  std::mutex mu;
  std::vector<FakeRequest> seen;
  FakeHttpServer origin([&](const FakeRequest& r) {
    std::lock_guard<std::mutex> lock(mu);
    seen.push_back(r);
    if (r.target == "/key") return FakeResponse{307, {{"Location", "/moved"}}, ""};
    return FakeResponse{200, {}, "here"};
  });
  Result<HttpResponse> r = Get(origin.url() + "/key");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[1].target, "/moved");
  EXPECT_EQ(seen[1].Header("x-amz-security-token"), "SESSION-TOKEN-SECRET");
  EXPECT_EQ(seen[1].Header("authorization"), "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/...");
}

TEST(RedirectPolicyTest, CredentialHeadersAreRecognisedInAnyCase) {
  for (const char* name : {"Authorization", "PROXY-AUTHORIZATION", "cookie", "X-Amz-Security-Token",
                           "x-amz-date", "X-MS-Date", "x-goog-api-client"}) {
    EXPECT_TRUE(IsCredentialHeader(name)) << name;
  }
  for (const char* name : {"Range", "If-Match", "Content-Type", "X-Amzn-Trace-Id", "x-msg"}) {
    EXPECT_FALSE(IsCredentialHeader(name)) << name;
  }
}

TEST(RedirectPolicyTest, AnHttpsToHttpDowngradeWithCredentialsIsRefused) {
  HttpRequest req;
  req.headers = SignedHeaders();
  Url from = *ParseUrl("https://bucket.s3.amazonaws.com/key?X-Amz-Signature=abc");
  Url to = *ParseUrl("http://mirror.example/key?sig=SECRET");
  Status s = PrepareRedirect(req, from, to);
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(s.message(),
            "refusing to follow a redirect of a request with credentials from "
            "https://bucket.s3.amazonaws.com/key?X-Amz-Signature=REDACTED to plain HTTP "
            "http://mirror.example/key?sig=REDACTED");
  EXPECT_EQ(req.headers, SignedHeaders());

  // Without credentials the downgrade is the server's business.
  HttpRequest plain;
  plain.headers = {{"X-Trace", "t"}};
  EXPECT_TRUE(PrepareRedirect(plain, from, to).ok());
  EXPECT_EQ(plain.headers, (HttpHeaders{{"X-Trace", "t"}}));
}

TEST(RedirectPolicyTest, APortChangeIsAnOriginChange) {
  HttpRequest req;
  req.headers = SignedHeaders();
  ASSERT_TRUE(PrepareRedirect(req, *ParseUrl("https://h/a"), *ParseUrl("https://h:8443/b")).ok());
  EXPECT_EQ(req.headers, (HttpHeaders{{"X-Trace", "kept"}}));
}

}  // namespace
}  // namespace sluice
