// Retries, timeouts, resumption and parallel downloads through a fault proxy
// in front of a real nginx.
#include <dirent.h>

#include <cerrno>

#include <gtest/gtest.h>

#include "base/file.h"
#include "engine/runtime/event_loop.h"
#include "stores/common/object_http.h"
#include "stores/http/http_client.h"
#include "tests/stores/http/fault_proxy.h"
#include "tests/stores/http/test_servers.h"

namespace sluice {
namespace {

using testing::Fault;
using testing::FaultProxy;
using testing::NginxServer;
using testing::PatternBytes;
using testing::TempDir;
using namespace std::chrono_literals;

class FaultsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    nginx_ = NginxServer::Start(dir_->path()).release();
    ASSERT_NE(nginx_, nullptr) << "nginx did not start";
    data_ = new std::string(PatternBytes(1 << 20, 3));
    huge_ = new std::string(PatternBytes(64 << 20, 5));
    ASSERT_TRUE(WriteFileAtomic(nginx_->www() + "/data.bin", *data_).ok());
    ASSERT_TRUE(WriteFileAtomic(nginx_->www() + "/huge.bin", *huge_).ok());
    ASSERT_TRUE(WriteFileAtomic(nginx_->www() + "/empty.bin", "").ok());
  }
  static void TearDownTestSuite() {
    delete nginx_;
    delete data_;
    delete huge_;
    delete dir_;
  }
  void SetUp() override {
    loop_ = std::make_unique<EventLoop>();
    proxy_ = std::make_unique<FaultProxy>(nginx_->http_port());
  }
  void TearDown() override {
    client_.reset();
    loop_.reset();
    proxy_.reset();
  }
  HttpClient& Client(HttpClientOptions options = {}) {
    options.backoff_base = 10ms;
    auto client = HttpClient::Create(loop_->executor(), options);
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    client_ = std::move(client).value();
    return *client_;
  }
  std::string Url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(proxy_->port()) + path;
  }
  static HttpRequest Get(const std::string& url) {
    HttpRequest r;
    r.url = url;
    return r;
  }
  // Files in the download folder (to prove temporary files are gone).
  static std::vector<std::string> List(const std::string& dir) {
    std::vector<std::string> out;
    DIR* d = opendir(dir.c_str());
    while (dirent* e = readdir(d)) {
      std::string name = e->d_name;
      if (name != "." && name != "..") out.push_back(name);
    }
    closedir(d);
    std::sort(out.begin(), out.end());
    return out;
  }

  static TempDir* dir_;
  static NginxServer* nginx_;
  static std::string* data_;
  static std::string* huge_;
  std::unique_ptr<EventLoop> loop_;
  std::unique_ptr<FaultProxy> proxy_;
  std::unique_ptr<HttpClient> client_;
};

TempDir* FaultsTest::dir_ = nullptr;
NginxServer* FaultsTest::nginx_ = nullptr;
std::string* FaultsTest::data_ = nullptr;
std::string* FaultsTest::huge_ = nullptr;

TEST_F(FaultsTest, ResetBeforeTheResponseIsRetried) {
  proxy_->Schedule({Fault::Reset(0), Fault::Reset(0)});
  HttpClient& c = Client();
  Result<HttpResponse> r = loop_->Run(c.Send(Get(Url("/data.bin"))));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->body == *data_);
  EXPECT_EQ(r->attempts, 3);
  EXPECT_EQ(c.stats().retries, 2u);
}

TEST_F(FaultsTest, DroppedTransferResumesWithARange) {
  proxy_->Schedule({Fault::Truncate(300000), Fault::Reset(200000)});
  HttpClient& c = Client();
  Result<HttpResponse> r = loop_->Run(c.Send(Get(Url("/data.bin"))));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->body == *data_);
  EXPECT_EQ(r->attempts, 3);
  // nginx saw the resumed requests start where the drops happened.
  std::string log = nginx_->AccessLog();
  EXPECT_NE(log.find("GET /data.bin 206 bytes="), std::string::npos) << log;
}

TEST_F(FaultsTest, RetriesOnServerErrorsAndHonoursRetryAfter) {
  proxy_->Schedule({Fault::Status(429, "", ""), Fault::Status(500),
                    Fault::Status(503, "1", "<Error><Code>SlowDown</Code>"
                                            "<Message>Please reduce your request rate.</Message>"
                                            "<SignatureProvided>secret</SignatureProvided></Error>")});
  HttpClientOptions options;
  options.download_retry = 3;
  HttpClient& c = Client(options);
  auto start = std::chrono::steady_clock::now();
  Result<HttpResponse> r = loop_->Run(c.Send(Get(Url("/data.bin"))));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_GE(std::chrono::steady_clock::now() - start, 950ms);  // Retry-After: 1
  EXPECT_TRUE(r->body == *data_);
  EXPECT_EQ(r->attempts, 4);
}

TEST_F(FaultsTest, GivesUpWithAClearErrorOnceRetriesAreSpent) {
  proxy_->Schedule({Fault::Status(500), Fault::Status(502),
                    Fault::Status(503, "0", "<Error><Code>SlowDown</Code>"
                                            "<Message>Please reduce your request rate.</Message>"
                                            "<SignatureProvided>s3cr3t</SignatureProvided></Error>")});
  // The client quotes what the store's reader makes of an error body.
  HttpClientOptions options;
  options.error_detail = XmlErrorDetail;
  Result<HttpResponse> r = loop_->Run(Client(options).Send(Get(Url("/data.bin"))));
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(r.status().message(),
            "GET " + Url("/data.bin") + ": gave up after 3 attempt(s) (download_retry=2): GET " +
                Url("/data.bin") +
                ": HTTP 503 Fault (SlowDown: Please reduce your request rate.), expected 2xx");
}

TEST_F(FaultsTest, RetryAfterBeyondTheTimeoutFailsAtOnce) {
  proxy_->Schedule({Fault::Status(503, "120")});
  HttpClientOptions options;
  options.download_timeout = 5000ms;
  auto start = std::chrono::steady_clock::now();
  Result<HttpResponse> r = loop_->Run(Client(options).Send(Get(Url("/data.bin"))));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(r.status().message(),
            "GET " + Url("/data.bin") +
                ": next retry in 120000 ms would pass download_timeout of 5000 ms (after 1 "
                "attempt(s)): GET " + Url("/data.bin") + ": HTTP 503 Fault, expected 2xx");
}

TEST_F(FaultsTest, StalledServerTripsTheTimeout) {
  proxy_->Schedule({Fault::Stall(), Fault::Stall()});
  HttpClientOptions options;
  options.first_byte_timeout = 200ms;
  options.download_retry = 1;
  auto start = std::chrono::steady_clock::now();
  Result<HttpResponse> r = loop_->Run(Client(options).Send(Get(Url("/data.bin"))));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(r.status().message(),
            "GET " + Url("/data.bin") + ": gave up after 2 attempt(s) (download_retry=1): GET " +
                Url("/data.bin") + ": waiting for the response: no data for 200 ms "
                "(first_byte_timeout)");

  // A body that stops mid-way trips the idle timeout, and the overall
  // download_timeout bounds everything.
  Fault stall_body = Fault::Raw("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc");
  stall_body.kind = Fault::kRawThenDrop;  // keeps the connection open, silent
  proxy_->Schedule({stall_body});
  options.download_timeout = 300ms;
  options.idle_timeout = 10s;
  options.download_retry = 0;
  start = std::chrono::steady_clock::now();
  r = loop_->Run(Client(options).Send(Get(Url("/data.bin"))));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(r.status().message(),
            "GET " + Url("/data.bin") + ": gave up after 1 attempt(s) (download_retry=0): GET " +
                Url("/data.bin") + ": reading the body (3 bytes of 100 received): no data for "
                "300 ms (download_timeout)");
}

TEST_F(FaultsTest, StalledBodyTripsTheIdleTimeout) {
  // Content-Length 100, 3 bytes, then silence on an open connection: the
  // idle timeout (not the overall one) ends it, the 3 bytes count.
  Fault stall_body = Fault::Raw("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc");
  stall_body.kind = Fault::kRawThenDrop;
  proxy_->Schedule({stall_body});
  HttpClientOptions options;
  options.idle_timeout = 200ms;
  options.download_retry = 0;
  auto start = std::chrono::steady_clock::now();
  Result<HttpResponse> r = loop_->Run(Client(options).Send(Get(Url("/data.bin"))));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(r.status().message(),
            "GET " + Url("/data.bin") + ": gave up after 1 attempt(s) (download_retry=0): GET " +
                Url("/data.bin") + ": reading the body (3 bytes of 100 received): no data for "
                "200 ms (idle_timeout)");
}

TEST_F(FaultsTest, ManyDownloadsReuseOneConnection) {
  std::string dl = dir_->path() + "/dl5";
  ASSERT_TRUE(MakeDirs(dl).ok());
  HttpClient& c = Client();
  for (int i = 0; i < 20; ++i) {
    std::string out = dl + "/d" + std::to_string(i);
    Result<HttpResponse> r = loop_->Run(c.GetToFile(Url("/data.bin"), out));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_TRUE(ReadFile(out).value() == *data_);
  }
  EXPECT_EQ(c.stats().connections_opened, 1u);
  EXPECT_EQ(c.stats().connections_reused, 19u);
  EXPECT_EQ(proxy_->connections(), 1);
}

TEST_F(FaultsTest, PooledConnectionClosedAsWeReuseItIsNotAFailure) {
  // The first connection answers, stays open, then drops our next request
  // without a word: the classic keep-alive race.
  proxy_->Schedule({Fault::RawThenDrop("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")});
  HttpClientOptions options;
  options.download_retry = 0;
  HttpClient& c = Client(options);
  ASSERT_EQ(loop_->Run(c.Send(Get(Url("/x"))))->body, "ok");
  Result<HttpResponse> r = loop_->Run(c.Send(Get(Url("/data.bin"))));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->body == *data_);
  EXPECT_EQ(r->attempts, 1);
  EXPECT_EQ(c.stats().stale_connections, 1u);
  EXPECT_EQ(c.stats().connections_opened, 2u);
}

TEST_F(FaultsTest, ParallelDownloadIsByteIdentical) {
  std::string out = dir_->path() + "/dl/huge.bin";
  ASSERT_TRUE(MakeDirs(dir_->path() + "/dl").ok());
  HttpClient& c = Client();
  GetToFileOptions options;
  options.concurrency = 4;
  Result<HttpResponse> r = loop_->Run(c.GetToFile(
      "http://127.0.0.1:" + std::to_string(nginx_->http_port()) + "/huge.bin", out, options));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->body_bytes, huge_->size());
  EXPECT_TRUE(ReadFile(out).value() == *huge_);
  EXPECT_EQ(List(dir_->path() + "/dl"), std::vector<std::string>{"huge.bin"});
  // Part 0 first, then 4 parts at once: one reuses part 0's connection,
  // three more are opened (run one after another they would all reuse it).
  EXPECT_EQ(c.stats().connections_opened, 4u);
  EXPECT_EQ(c.stats().connections_reused, 4u);
  // 8 parts of 8 MiB.
  std::string log = nginx_->AccessLog();
  EXPECT_NE(log.find("GET /huge.bin 206 bytes=58720256-67108863"), std::string::npos);
}

TEST_F(FaultsTest, ParallelDownloadSurvivesFaults) {
  std::string dl = dir_->path() + "/dl2";
  ASSERT_TRUE(MakeDirs(dl).ok());
  proxy_->Schedule({Fault::Pass(), Fault::Truncate(3 << 20), Fault::Reset(100000),
                    Fault::Status(503, "0"), Fault::Truncate(5 << 20)});
  HttpClient& c = Client();
  GetToFileOptions options;
  options.concurrency = 3;
  options.part_size = 4 << 20;
  Result<HttpResponse> r = loop_->Run(c.GetToFile(Url("/huge.bin"), dl + "/huge.bin", options));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(ReadFile(dl + "/huge.bin").value() == *huge_);
  EXPECT_GE(c.stats().retries, 3u);
  EXPECT_EQ(List(dl), std::vector<std::string>{"huge.bin"});

  // Small and empty objects; a missing one leaves nothing behind.
  ASSERT_TRUE(loop_->Run(c.GetToFile(Url("/data.bin"), dl + "/data.bin")).ok());
  EXPECT_TRUE(ReadFile(dl + "/data.bin").value() == *data_);
  ASSERT_TRUE(loop_->Run(c.GetToFile(Url("/empty.bin"), dl + "/empty.bin")).ok());
  EXPECT_EQ(ReadFile(dl + "/empty.bin").value(), "");
  r = loop_->Run(c.GetToFile(Url("/missing.bin"), dl + "/missing.bin"));
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(List(dl), (std::vector<std::string>{"data.bin", "empty.bin", "huge.bin"}));
}

// Bodies are written in aligned blocks of kPageCacheWriteBlock (16 KiB):
// parts whose bounds fall inside blocks, and transfers cut mid-block and
// resumed, still give the exact bytes.
TEST_F(FaultsTest, PartsOffTheWriteBlocksAreByteIdentical) {
  std::string dl = dir_->path() + "/dl6";
  ASSERT_TRUE(MakeDirs(dl).ok());
  GetToFileOptions options;
  options.concurrency = 3;
  options.part_size = (3 << 20) + 12345;
  // Through io_uring, then with the writes on the loop's CPU pool; a new
  // client each time, so that the faults meet new connections.
  for (bool pool : {false, true}) {
    SCOPED_TRACE(pool ? "write_pool" : "io_uring");
    HttpClient& c = Client();
    options.write_pool = pool ? &loop_->cpu_pool() : nullptr;
    proxy_->Schedule(
        {Fault::Truncate((1 << 20) + 7), Fault::Pass(), Fault::Truncate((5 << 20) + 3)});
    uint64_t retries = c.stats().retries;
    Result<HttpResponse> r = loop_->Run(c.GetToFile(Url("/huge.bin"), dl + "/huge.bin", options));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_TRUE(ReadFile(dl + "/huge.bin").value() == *huge_);
    EXPECT_GE(c.stats().retries, retries + 1);
    // Whole 8 MiB parts from block-aligned offsets: the direct path.
    options.part_size = 8 << 20;
    r = loop_->Run(c.GetToFile(Url("/huge.bin"), dl + "/huge8.bin", options));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_TRUE(ReadFile(dl + "/huge8.bin").value() == *huge_);
    options.part_size = (3 << 20) + 12345;
  }
}

TEST_F(FaultsTest, FailedPartLeavesNoFileBehind) {
  std::string dl = dir_->path() + "/dl3";
  ASSERT_TRUE(MakeDirs(dl).ok());
  // Part 0 passes, then every connection answers 500.
  std::vector<Fault> faults = {Fault::Truncate(4 << 20)};
  for (int i = 0; i < 40; ++i) faults.push_back(Fault::Status(500));
  proxy_->Schedule(faults);
  HttpClientOptions options;
  options.download_retry = 1;
  GetToFileOptions get;
  get.part_size = 1 << 20;
  get.concurrency = 4;
  Result<HttpResponse> r = loop_->Run(Client(options).GetToFile(Url("/huge.bin"), dl + "/huge.bin", get));
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(r.status().message().find("HTTP 500 Fault"), std::string::npos) << r.status().ToString();
  EXPECT_TRUE(List(dl).empty());
}

// Part 0 arrives, the other parts stall waiting for their response headers:
// Shutdown() must end them at once (well inside its 5 s grace), report
// kCancelled and leave no temporary file.
TEST_F(FaultsTest, ShutdownCancelsAStalledDownload) {
  std::string dl = dir_->path() + "/dl4";
  ASSERT_TRUE(MakeDirs(dl).ok());
  proxy_->Schedule({Fault::Pass(), Fault::Stall(), Fault::Stall(), Fault::Stall()});
  HttpClient& c = Client();
  GetToFileOptions get;
  get.part_size = 16 << 20;
  std::promise<Status> done;
  loop_->Spawn<Result<HttpResponse>>(c.GetToFile(Url("/huge.bin"), dl + "/huge.bin", get),
                                     [&](Result<HttpResponse> r) { done.set_value(r.status()); });
  std::this_thread::sleep_for(300ms);
  auto start = std::chrono::steady_clock::now();
  loop_->Shutdown();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  auto future = done.get_future();
  ASSERT_EQ(future.wait_for(0s), std::future_status::ready);
  Status status = future.get();
  EXPECT_EQ(status.code(), StatusCode::kCancelled) << status.ToString();
  EXPECT_TRUE(List(dl).empty());
}

// A store's error names the object and keeps what the cause was: its code
// and, for a failed system call (writing the download's file), its errno.
TEST(ObjectErrorTest, NamesTheObjectAndKeepsTheCodeAndErrno) {
  Status e = ObjectError(Status(StatusCode::kIoError, "writing /c/x.part: No space left on device", ENOSPC),
                         "s3://b/ds", "shard.00001.mds");
  EXPECT_EQ(e.code(), StatusCode::kIoError);
  EXPECT_EQ(e.os_error(), ENOSPC);
  EXPECT_EQ(e.message(), "s3://b/ds/shard.00001.mds: writing /c/x.part: No space left on device");
}

}  // namespace
}  // namespace sluice
