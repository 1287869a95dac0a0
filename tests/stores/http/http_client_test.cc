// HttpClient against a real nginx (HTTP and HTTPS with a CA made here).
#include "stores/http/http_client.h"

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "base/file.h"
#include "engine/runtime/event_loop.h"
#include "tests/common/scoped_env.h"
#include "tests/stores/http/fault_proxy.h"
#include "tests/stores/http/test_servers.h"

namespace sluice {
namespace {

using testing::Fault;
using testing::FaultProxy;
using testing::NginxServer;
using testing::PatternBytes;
using testing::TempDir;
using testing::TestCerts;
using namespace std::chrono_literals;

class HttpClientTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    certs_ = new TestCerts();
    wrong_certs_ = new TestCerts();
    ASSERT_TRUE(testing::MakeTestCerts(dir_->path(), "good", "localhost", certs_));
    ASSERT_TRUE(testing::MakeTestCerts(dir_->path(), "other", "localhost", wrong_certs_));
    nginx_ = NginxServer::Start(dir_->path(), certs_).release();
    ASSERT_NE(nginx_, nullptr) << "nginx did not start";
    big_ = new std::string(PatternBytes(3 << 20, 7));
    ASSERT_TRUE(WriteFileAtomic(nginx_->www() + "/big.bin", *big_).ok());
    ASSERT_TRUE(WriteFileAtomic(nginx_->www() + "/small.txt", "hello, sluice\n").ok());
  }
  static void TearDownTestSuite() {
    delete nginx_;
    delete big_;
    delete certs_;
    delete wrong_certs_;
    delete dir_;
  }

  void SetUp() override { loop_ = std::make_unique<EventLoop>(); }
  void TearDown() override {
    client_.reset();  // no requests in flight at this point
    loop_.reset();
  }

  HttpClient& Client(HttpClientOptions options = {}) {
    auto client = HttpClient::Create(loop_->executor(), options);
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    client_ = std::move(client).value();
    return *client_;
  }
  static std::string Http(const std::string& path) {
    return "http://127.0.0.1:" + std::to_string(nginx_->http_port()) + path;
  }
  static std::string Https(const std::string& host, const std::string& path) {
    return "https://" + host + ":" + std::to_string(nginx_->https_port()) + path;
  }
  static HttpRequest Get(const std::string& url, std::optional<ByteRange> range = {}) {
    HttpRequest r;
    r.url = url;
    r.range = range;
    return r;
  }

  static TempDir* dir_;
  static TestCerts* certs_;
  static TestCerts* wrong_certs_;
  static NginxServer* nginx_;
  static std::string* big_;
  std::unique_ptr<EventLoop> loop_;
  std::unique_ptr<HttpClient> client_;
};

TempDir* HttpClientTest::dir_ = nullptr;
TestCerts* HttpClientTest::certs_ = nullptr;
TestCerts* HttpClientTest::wrong_certs_ = nullptr;
NginxServer* HttpClientTest::nginx_ = nullptr;
std::string* HttpClientTest::big_ = nullptr;

TEST_F(HttpClientTest, RangedGetsReturnExactBytes) {
  HttpClient& c = Client();
  const std::string& big = *big_;
  struct Case {
    ByteRange range;
    std::string want;
  } cases[] = {
      {ByteRange::FromTo(100, 199), big.substr(100, 100)},
      {ByteRange::FromTo(0, 0), big.substr(0, 1)},
      {ByteRange::From(big.size() - 10), big.substr(big.size() - 10)},
      {ByteRange::Suffix(1000), big.substr(big.size() - 1000)},
      {ByteRange::FromTo(big.size() - 5, big.size() + 100), big.substr(big.size() - 5)},
  };
  for (const Case& k : cases) {
    Result<HttpResponse> r = loop_->Run(c.Send(Get(Http("/big.bin"), k.range)));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->status, 206);
    EXPECT_TRUE(r->body == k.want) << "range starting " << k.range.first;
    EXPECT_EQ(r->body_bytes, k.want.size());
    EXPECT_EQ(r->object_size, big.size());
  }
  // A suffix longer than the object is the whole object.
  Result<HttpResponse> all = loop_->Run(c.Send(Get(Http("/big.bin"), ByteRange::Suffix(10u << 20))));
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_TRUE(all->body == big);
  // Unranged.
  Result<HttpResponse> plain = loop_->Run(c.Send(Get(Http("/small.txt"))));
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->status, 200);
  EXPECT_EQ(plain->body, "hello, sluice\n");
  EXPECT_EQ(plain->object_size, 14u);
  EXPECT_EQ(plain->Header("Content-Length"), "14");
}

TEST_F(HttpClientTest, HeadReportsSizeWithoutBody) {
  HttpRequest head = Get(Http("/big.bin"));
  head.method = HttpMethod::kHead;
  Result<HttpResponse> r = loop_->Run(Client().Send(head));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->object_size, big_->size());
  EXPECT_EQ(r->body, "");
  EXPECT_EQ(r->body_bytes, 0u);
}

TEST_F(HttpClientTest, ErrorsNameUrlStatusAndExpectation) {
  HttpClient& c = Client();
  Result<HttpResponse> r = loop_->Run(c.Send(Get(Http("/missing.bin"))));
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(r.status().message(),
            "GET " + Http("/missing.bin") + ": HTTP 404 Not Found, expected 2xx");
  r = loop_->Run(c.Send(Get(Http("/missing.bin"), ByteRange::FromTo(0, 9))));
  EXPECT_EQ(r.status().message(),
            "GET " + Http("/missing.bin") + ": HTTP 404 Not Found, expected 206 for Range bytes=0-9");
  r = loop_->Run(c.Send(Get(Http("/small.txt"), ByteRange::From(1000))));
  EXPECT_EQ(r.status().code(), StatusCode::kOutOfRange);
  EXPECT_EQ(r.status().message(),
            "GET " + Http("/small.txt") +
                ": HTTP 416 Requested Range Not Satisfiable, expected 206 for Range bytes=1000-");
  // Secrets in the query or headers never reach the message.
  HttpRequest signed_request = Get(Http("/missing.bin?X-Amz-Signature=deadbeef&partNumber=3"));
  signed_request.headers.emplace_back("Authorization", "AWS4-HMAC-SHA256 Signature=cafef00d");
  r = loop_->Run(c.Send(signed_request));
  EXPECT_EQ(r.status().message(),
            "GET " + Http("/missing.bin?X-Amz-Signature=REDACTED&partNumber=3") +
                ": HTTP 404 Not Found, expected 2xx");
  EXPECT_EQ(r.status().message().find("deadbeef"), std::string::npos);
  EXPECT_EQ(r.status().message().find("cafef00d"), std::string::npos);
  // Connection refused, after the retries.
  HttpClientOptions fast;
  fast.backoff_base = 1ms;
  int dead_port = testing::FreePort();
  r = loop_->Run(Client(fast).Send(Get("http://127.0.0.1:" + std::to_string(dead_port) + "/x")));
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(r.status().message(),
            "GET http://127.0.0.1:" + std::to_string(dead_port) +
                "/x: gave up after 3 attempt(s) (download_retry=2): cannot connect to 127.0.0.1:" +
                std::to_string(dead_port) + ": Connection refused");
}

TEST_F(HttpClientTest, KeepAliveReusesOneConnection) {
  HttpClient& c = Client();
  for (int i = 0; i < 10; ++i) {
    Result<HttpResponse> r = loop_->Run(c.Send(Get(Http("/small.txt?keepalive=" + std::to_string(i)))));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  EXPECT_EQ(c.stats().connections_opened, 1u);
  EXPECT_EQ(c.stats().connections_reused, 9u);
  // nginx agrees: all ten requests came on one connection (each logged
  // after its answer: the tenth's line may come after the loop ended).
  std::istringstream log(nginx_->AccessLogOnce([](const std::string& text) {
    size_t n = 0;
    for (size_t at = text.find("keepalive="); at != std::string::npos;
         at = text.find("keepalive=", at + 1)) {
      ++n;
    }
    return n >= 10;
  }));
  std::set<std::string> connections;
  int lines = 0;
  for (std::string line; std::getline(log, line);) {
    if (line.find("keepalive=") == std::string::npos) continue;
    ++lines;
    connections.insert(line.substr(0, line.find(' ')));
  }
  EXPECT_EQ(lines, 10);
  EXPECT_EQ(connections.size(), 1u);
}

TEST_F(HttpClientTest, ServerClosedIdleConnectionIsReplacedWithoutRetry) {
  HttpClient& c = Client();
  ASSERT_TRUE(loop_->Run(c.Send(Get(Http("/small.txt")))).ok());
  std::this_thread::sleep_for(1300ms);  // nginx keepalive_timeout is 1 s
  Result<HttpResponse> r = loop_->Run(c.Send(Get(Http("/small.txt"))));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->attempts, 1);
  EXPECT_EQ(c.stats().connections_opened, 2u);
  EXPECT_EQ(c.stats().stale_connections, 1u);
  EXPECT_EQ(c.stats().retries, 0u);
}

// LocalLink: false before any response; a request with a body does not
// count (its upload would pass for the server's delay), nor a 404; a GET
// answered 200 does. With a
// limit of zero no server is local.
TEST_F(HttpClientTest, LocalLinkIsLearnedFromAnswersToRequestsWithoutABody) {
  HttpClientOptions options;
  options.local_first_byte = std::chrono::hours(1);
  HttpClient& c = Client(options);
  EXPECT_FALSE(c.LocalLink());
  HttpRequest put;
  put.method = HttpMethod::kPut;
  put.url = Http("/dav/local_link.txt");
  put.body = "put body";
  Result<HttpResponse> r = loop_->Run(c.Send(put));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(c.LocalLink());
  // Nor does an error (a proxy beside the client may answer those).
  r = loop_->Run(c.Send(Get(Http("/dav/no_such_local_link.txt"))));
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound) << r.status().ToString();
  EXPECT_FALSE(c.LocalLink());
  r = loop_->Run(c.Send(Get(Http("/dav/local_link.txt"))));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(c.LocalLink());

  options.local_first_byte = std::chrono::microseconds(0);
  HttpClient& never = Client(options);
  r = loop_->Run(never.Send(Get(Http("/dav/local_link.txt"))));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(never.LocalLink());
}

TEST_F(HttpClientTest, PutPostDeleteWithBodies) {
  HttpClient& c = Client();
  HttpRequest put;
  put.method = HttpMethod::kPut;
  put.url = Http("/dav/a/text.txt");
  put.body = "put body";
  Result<HttpResponse> r = loop_->Run(c.Send(put));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 201);
  EXPECT_EQ(loop_->Run(c.Send(Get(Http("/dav/a/text.txt"))))->body, "put body");

  std::string upload = dir_->path() + "/upload.bin";
  std::string bytes = PatternBytes(1 << 20, 99);
  ASSERT_TRUE(WriteFileAtomic(upload, bytes).ok());
  put.url = Http("/dav/b.bin");
  put.body.clear();
  put.body_file = upload;
  r = loop_->Run(c.Send(put));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(ReadFile(nginx_->www() + "/dav/b.bin").value() == bytes);

  HttpRequest post;
  post.method = HttpMethod::kPost;
  post.url = Http("/post");
  post.body = "12345";
  EXPECT_EQ(loop_->Run(c.Send(post))->body, "posted POST 5");

  HttpRequest del;
  del.method = HttpMethod::kDelete;
  del.url = Http("/dav/b.bin");
  r = loop_->Run(c.Send(del));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 204);
  EXPECT_EQ(loop_->Run(c.Send(Get(Http("/dav/b.bin")))).status().code(), StatusCode::kNotFound);

  put.body_file = dir_->path() + "/no-such-file";
  EXPECT_EQ(loop_->Run(c.Send(put)).status().message(),
            "PUT " + Http("/dav/b.bin") + ": cannot read body file '" + put.body_file +
                "': No such file or directory");
}

TEST_F(HttpClientTest, FollowsRedirectsBounded) {
  HttpClient& c = Client();
  Result<HttpResponse> r = loop_->Run(c.Send(Get(Http("/redirect"))));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->body, "hello, sluice\n");
  EXPECT_EQ(r->final_url, Http("/small.txt"));
  r = loop_->Run(c.Send(Get(Http("/redirect-loop"))));
  EXPECT_EQ(r.status().message(),
            "GET " + Http("/redirect-loop") + ": more than 5 redirects (max_redirects)");
}

TEST_F(HttpClientTest, StreamsIntoASinkAndCapsBufferedBodies) {
  HttpClient& c = Client();
  std::string got;
  int chunks = 0;
  BodySink sink = [&](std::string_view chunk) -> boost::asio::awaitable<Status> {
    got.append(chunk);
    ++chunks;
    co_return Status::Ok();
  };
  Result<HttpResponse> r = loop_->Run(c.Send(Get(Http("/big.bin")), sink));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(got == *big_);
  EXPECT_GT(chunks, 1);
  EXPECT_EQ(r->body, "");
  EXPECT_EQ(r->body_bytes, big_->size());

  // A sink error stops the transfer with that error.
  BodySink refuse = [](std::string_view) -> boost::asio::awaitable<Status> {
    co_return IoError("disk full");
  };
  EXPECT_EQ(loop_->Run(c.Send(Get(Http("/big.bin")), refuse)).status().message(), "disk full");

  HttpClientOptions capped;
  capped.max_buffered_body = 1000;
  r = loop_->Run(Client(capped).Send(Get(Http("/big.bin"))));
  EXPECT_EQ(r.status().message(),
            "GET " + Http("/big.bin") +
                ": body larger than max_buffered_body (1000 bytes); stream it to a sink");
}

TEST_F(HttpClientTest, ChunkedResponsesAndLyingContentLength) {
  FaultProxy proxy(nginx_->http_port());
  std::string url = "http://127.0.0.1:" + std::to_string(proxy.port()) + "/x";
  proxy.Schedule({Fault::Raw("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                             "5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n")});
  HttpClientOptions options;
  options.download_retry = 0;
  HttpClient& c = Client(options);
  Result<HttpResponse> r = loop_->Run(c.Send(Get(url)));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->body, "hello world");
  EXPECT_FALSE(r->object_size.has_value());

  // Content-Length says 100, 10 bytes come, the server closes.
  proxy.Schedule({Fault::Raw("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789")});
  r = loop_->Run(c.Send(Get(url)));
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(r.status().message(),
            "GET " + url + ": gave up after 1 attempt(s) (download_retry=0): GET " + url +
                ": reading the body (10 bytes of 100 received): connection closed before "
                "the end of the body (truncated)");
}

TEST_F(HttpClientTest, HttpsVerifiesWithTheRightCa) {
  HttpClientOptions options;
  options.ca_file = certs_->ca_cert;
  HttpClient& c = Client(options);
  Result<HttpResponse> r = loop_->Run(c.Send(Get(Https("localhost", "/big.bin"), ByteRange::FromTo(5, 1004))));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->body == big_->substr(5, 1000));
  ASSERT_TRUE(loop_->Run(c.Send(Get(Https("localhost", "/small.txt")))).ok());
  EXPECT_EQ(c.stats().connections_opened, 1u);  // TLS keep-alive too

  // SSL_CERT_FILE when no explicit option.
  Result<HttpResponse> env = [&] {
    testing::ScopedEnv ca("SSL_CERT_FILE", certs_->ca_cert);
    return loop_->Run(Client().Send(Get(Https("localhost", "/small.txt"))));
  }();
  ASSERT_TRUE(env.ok()) << env.status().ToString();
  EXPECT_EQ(env->body, "hello, sluice\n");
}

TEST_F(HttpClientTest, HttpsRejectsWrongCaAndWrongHostName) {
  std::string port = std::to_string(nginx_->https_port());
  HttpClientOptions options;
  options.ca_file = wrong_certs_->ca_cert;
  HttpClient& wrong_ca = Client(options);
  Result<HttpResponse> r = loop_->Run(wrong_ca.Send(Get(Https("localhost", "/small.txt"))));
  EXPECT_EQ(r.status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(r.status().message(),
            "GET " + Https("localhost", "/small.txt") +
                ": TLS certificate verification failed for localhost:" + port +
                ": unable to get local issuer certificate");
  EXPECT_EQ(wrong_ca.stats().retries, 0u);  // not worth retrying

  options.ca_file = certs_->ca_cert;
  r = loop_->Run(Client(options).Send(Get(Https("127.0.0.1", "/small.txt"))));
  EXPECT_EQ(r.status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(r.status().message(),
            "GET " + Https("127.0.0.1", "/small.txt") +
                ": TLS certificate verification failed for 127.0.0.1:" + port +
                ": certificate does not match host name '127.0.0.1'");

  // The system bundle does not know the test CA.
  r = loop_->Run(Client().Send(Get(Https("localhost", "/small.txt"))));
  EXPECT_EQ(r.status().code(), StatusCode::kPermissionDenied);

  options.ca_file = dir_->path() + "/missing-ca.pem";
  auto bad = HttpClient::Create(loop_->executor(), options);
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message().rfind("cannot load TLS CA file '" + options.ca_file + "': ", 0),
            0u) << bad.status().message();
}

// The CA bundle is parsed at the first verified TLS connection, not when the
// client is made: a client that reads only http:// never pays for it, and a
// bundle that is not PEM is reported, by name, by the first https request.
TEST_F(HttpClientTest, CaBundleIsParsedAtTheFirstTlsConnection) {
  HttpClientOptions options;
  options.ca_file = dir_->path() + "/not-pem.pem";
  ASSERT_TRUE(WriteFileAtomic(options.ca_file, "this is not a certificate\n").ok());
  HttpClient& c = Client(options);
  Result<HttpResponse> plain = loop_->Run(c.Send(Get(Http("/small.txt"))));
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(plain->body, "hello, sluice\n");

  const std::string url = Https("localhost", "/small.txt");
  for (int attempt = 0; attempt < 2; ++attempt) {  // the outcome is kept
    Result<HttpResponse> tls = loop_->Run(c.Send(Get(url)));
    EXPECT_EQ(tls.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(tls.status().message().rfind(
                  "GET " + url + ": cannot load TLS CA file '" + options.ca_file + "': ", 0),
              0u)
        << tls.status().message();
  }
  EXPECT_EQ(c.stats().retries, 0u);

  // Unverified TLS never needs the bundle.
  options.verify_tls = false;
  Result<HttpResponse> unverified = loop_->Run(Client(options).Send(Get(url)));
  ASSERT_TRUE(unverified.ok()) << unverified.status().ToString();
  EXPECT_EQ(unverified->body, "hello, sluice\n");
}

}  // namespace
}  // namespace sluice
