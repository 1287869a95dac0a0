// HttpClient::GetToFile's file: one temporary named by base/file.h's scheme
// (none when the destination is already a temporary of this process), and
// the mode of what it creates.
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "base/file.h"
#include "engine/runtime/event_loop.h"
#include "stores/http/http_client.h"
#include "tests/stores/common/fake_http_server.h"
#include "tests/stores/http/test_servers.h"

namespace sluice {
namespace {

using testing::NginxServer;
using testing::PatternBytes;
using testing::TempDir;

class GetToFileTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    nginx_ = NginxServer::Start(dir_->path()).release();
    ASSERT_NE(nginx_, nullptr) << "nginx did not start";
    ASSERT_TRUE(WriteFileAtomic(nginx_->www() + "/data.bin", PatternBytes(300000, 2)).ok());
  }
  static void TearDownTestSuite() {
    delete nginx_;
    delete dir_;
  }
  void SetUp() override {
    auto client = HttpClient::Create(loop_.executor());
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    client_ = std::move(client).value();
    ASSERT_TRUE(MakeDirs(out()).ok());
  }
  void TearDown() override {
    client_.reset();
    std::system(("rm -rf " + out()).c_str());
  }
  std::string Url() const {
    return "http://127.0.0.1:" + std::to_string(nginx_->http_port()) + "/data.bin";
  }
  static std::string out() { return dir_->path() + "/out"; }
  static std::vector<std::string> List(const std::string& dir) {
    std::vector<std::string> names;
    DIR* d = ::opendir(dir.c_str());
    while (dirent* e = ::readdir(d)) {
      std::string n = e->d_name;
      if (n != "." && n != "..") names.push_back(n);
    }
    ::closedir(d);
    return names;
  }

  static TempDir* dir_;
  static NginxServer* nginx_;
  EventLoop loop_;
  std::unique_ptr<HttpClient> client_;
};

TempDir* GetToFileTest::dir_ = nullptr;
NginxServer* GetToFileTest::nginx_ = nullptr;

TEST_F(GetToFileTest, FilesAreCreated0666MaskedByTheUmask) {
  GetToFileOptions small_parts;
  small_parts.part_size = 64 << 10;  // several ranged GETs into one file
  const mode_t old = ::umask(022);
  auto a = loop_.Run(client_->GetToFile(Url(), out() + "/a.bin", small_parts));
  ::umask(027);
  auto b = loop_.Run(client_->GetToFile(Url(), out() + "/b.bin"));
  ::umask(old);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  struct stat st;
  ASSERT_EQ(::stat((out() + "/a.bin").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u);
  ASSERT_EQ(::stat((out() + "/b.bin").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_EQ(*ReadFile(out() + "/a.bin"), PatternBytes(300000, 2));
}

TEST_F(GetToFileTest, TemporaryIsNamedByTheOneScheme) {
  const std::string taken = out() + "/taken";
  ASSERT_TRUE(MakeDirs(taken + "/inside").ok());  // the final rename must fail
  auto r = loop_.Run(client_->GetToFile(Url(), taken));
  ASSERT_FALSE(r.ok());
  const std::string& m = r.status().message();
  const std::string head = "GET " + Url() + ": cannot rename " + out() + "/";
  ASSERT_EQ(m.rfind(head, 0), 0u) << m;
  const std::string temp = m.substr(head.size(), m.find(" onto ") - head.size());
  EXPECT_EQ(temp.rfind(".taken.sluice-tmp.", 0), 0u) << temp;
  ASSERT_TRUE(ParseTempName(temp).has_value()) << temp;
  EXPECT_EQ(ParseTempName(temp)->owner, ThisProcessTempOwner());
  EXPECT_EQ(List(out()), std::vector<std::string>{"taken"}) << "no temporary left";
}

// The shard cache hands its own temporary as the destination: it is written
// in place (same inode), not through a second temporary and a rename.
TEST_F(GetToFileTest, ATemporaryOfThisProcessIsWrittenInPlace) {
  const std::string temp = TempPathFor(out() + "/shard.bin");
  ASSERT_TRUE(WriteFileAtomic(temp, "stale").ok());
  struct stat before, after;
  ASSERT_EQ(::stat(temp.c_str(), &before), 0);
  auto r = loop_.Run(client_->GetToFile(Url(), temp));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(::stat(temp.c_str(), &after), 0);
  EXPECT_EQ(after.st_ino, before.st_ino);
  EXPECT_EQ(*ReadFile(temp), PatternBytes(300000, 2));
  EXPECT_EQ(List(out()).size(), 1u);
}

// A server that states another size than the caller's index: the download
// stops at its first response, writes nothing, and says the remote changed
// (issue 13, defect 4: a server claiming 512 MiB for a 2 MB shard once
// filled a 16 MiB cache to 534 MB). The server is a recorder written here:
// no real server lies about sizes.
TEST_F(GetToFileTest, AStatedSizeOtherThanTheExpectedOneStopsAtTheFirstResponse) {
  constexpr uint64_t kClaimed = uint64_t{512} << 20;
  std::atomic<int> requests{0};
  std::atomic<uint64_t> bytes_served{0};
  testing::FakeHttpServer liar([&](const testing::FakeRequest& r) {
    ++requests;
    // "bytes=A-B": answer the range out of a 512 MiB object.
    std::string range = r.Header("range");
    uint64_t first = std::stoull(range.substr(6));
    uint64_t last = std::stoull(range.substr(range.find('-') + 1));
    bytes_served += last - first + 1;
    return testing::FakeResponse{
        206,
        {{"Content-Range", "bytes " + std::to_string(first) + "-" + std::to_string(last) + "/" +
                               std::to_string(kClaimed)}},
        std::string(last - first + 1, 'x')};
  });
  GetToFileOptions options;
  options.part_size = 1 << 20;
  options.expected_size = 2'000'000;
  Result<HttpResponse> r =
      loop_.Run(client_->GetToFile(liar.url() + "/shard.00000.mds", out() + "/shard.00000.mds",
                                   options));
  EXPECT_EQ(r.status().code(), StatusCode::kCorrupt);
  EXPECT_EQ(r.status().message(),
            "GET " + liar.url() + "/shard.00000.mds: the object is 536870912 bytes, index.json says "
            "2000000 (the remote changed since it was indexed?)");
  // Its two parts go out together (the size is known); neither is retried.
  EXPECT_LE(requests.load(), 2);
  EXPECT_TRUE(List(out()).empty());  // neither the file nor a temporary
}

// An object expected empty (a raw file of 0 bytes) is fetched with one
// plain GET: s3rver answers a range on an empty object with a 206 whose
// Content-Range 'bytes 0-0/0' names no byte.
TEST_F(GetToFileTest, AnObjectExpectedEmptyIsFetchedWithoutARange) {
  std::atomic<int> requests{0};
  std::atomic<bool> ranged{false};
  testing::FakeHttpServer server([&](const testing::FakeRequest& r) {
    ++requests;
    if (!r.Header("range").empty()) {
      ranged = true;
      return testing::FakeResponse{206, {{"Content-Range", "bytes 0-0/0"}}, ""};
    }
    return testing::FakeResponse{200, {}, ""};
  });
  GetToFileOptions options;
  options.expected_size = 0;
  Result<HttpResponse> r =
      loop_.Run(client_->GetToFile(server.url() + "/empty.jpg", out() + "/empty.jpg", options));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(requests.load(), 1);
  EXPECT_FALSE(ranged.load());
  EXPECT_EQ(*ReadFile(out() + "/empty.jpg"), "");
}

TEST_F(GetToFileTest, TheExpectedSizeAcceptsTheRightObject) {
  GetToFileOptions options;
  options.part_size = 64 << 10;
  options.expected_size = 300000;
  Result<HttpResponse> r = loop_.Run(client_->GetToFile(Url(), out() + "/data.bin", options));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*ReadFile(out() + "/data.bin"), PatternBytes(300000, 2));
}

// A fake object server for what no real server does on cue (ignore Range
// for some requests, change the object between parts, hold an answer until
// others have arrived). It records every request's Range and If-Match in
// arrival order; Answer() builds a 206 for a Range or a 200 whole.
class ObjectServer {
 public:
  struct Seen {
    std::string range, if_match;
  };
  using Policy = std::function<testing::FakeResponse(ObjectServer&, const testing::FakeRequest&)>;

  ObjectServer(std::string body, Policy policy)
      : body_(std::move(body)),
        policy_(std::move(policy)),
        server_([this](const testing::FakeRequest& r) {
          {
            std::lock_guard<std::mutex> lock(mu_);
            seen_.push_back({r.Header("range"), r.Header("if-match")});
          }
          cv_.notify_all();
          return policy_(*this, r);
        }) {}
  ~ObjectServer() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    server_.Stop();
  }

  std::string url() const { return server_.url() + "/shard.00000.mds"; }
  std::vector<Seen> seen() {
    std::lock_guard<std::mutex> lock(mu_);
    return seen_;
  }
  // Blocks the answering thread until `n` requests have arrived (or the
  // server stops; 10 s at most).
  void WaitForRequests(size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::seconds(10), [&] { return stopping_ || seen_.size() >= n; });
  }
  // Blocks until the server stops (an answer that never comes).
  void Hang() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::seconds(10), [&] { return stopping_; });
  }
  static uint64_t FirstByte(const testing::FakeRequest& r) {
    std::string range = r.Header("range");
    return range.empty() ? 0 : std::stoull(range.substr(6));
  }
  testing::FakeResponse Answer(const testing::FakeRequest& r, bool honour_range,
                               const std::string& etag = "\"v1\"") const {
    std::string range = r.Header("range");
    // "" states no ETag: the header is left out.
    std::vector<std::pair<std::string, std::string>> headers;
    if (!etag.empty()) headers.emplace_back("ETag", etag);
    if (!honour_range || range.empty()) return {200, headers, body_};
    uint64_t first = FirstByte(r);
    uint64_t last = std::min<uint64_t>(std::stoull(range.substr(range.find('-') + 1)),
                                       body_.size() - 1);
    headers.emplace_back("Content-Range", "bytes " + std::to_string(first) + "-" +
                                              std::to_string(last) + "/" +
                                              std::to_string(body_.size()));
    return {206, headers, body_.substr(first, last - first + 1)};
  }

 private:
  std::string body_;
  Policy policy_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Seen> seen_;
  bool stopping_ = false;
  testing::FakeHttpServer server_;  // last: stopped before the rest goes
};

constexpr uint64_t kObject = 300000;  // 5 parts of 64 KiB
GetToFileOptions FivePartsOf64KiB(std::optional<uint64_t> expected) {
  GetToFileOptions options;
  options.part_size = 64 << 10;
  options.concurrency = 8;
  options.expected_size = expected;
  return options;
}
std::vector<std::string> Ranges(const std::vector<ObjectServer::Seen>& seen) {
  std::vector<std::string> out;
  for (const auto& s : seen) out.push_back(s.range);
  return out;
}
// "bytes=A-B" ranges in the order of A.
void SortRanges(std::vector<std::string>::iterator from, std::vector<std::string>::iterator to) {
  std::sort(from, to, [](const std::string& a, const std::string& b) {
    return std::stoull(a.substr(6)) < std::stoull(b.substr(6));
  });
}
// The Range headers of `path`'s 206 answers in nginx's log lines `log`,
// in the order of their first bytes.
std::vector<std::string> LoggedRanges(const std::string& log, const std::string& path) {
  const std::string line = "GET " + path + " 206 ";
  std::vector<std::string> ranges;
  for (size_t at = log.find(line); at != std::string::npos; at = log.find(line, at + 1)) {
    const size_t from = at + line.size();
    ranges.push_back(log.substr(from, log.find('\n', from) - from));
  }
  SortRanges(ranges.begin(), ranges.end());
  return ranges;
}
// How many of `log`'s lines are requests for `path`.
size_t LoggedRequests(const std::string& log, const std::string& path) {
  const std::string line = "GET " + path + " ";
  size_t n = 0;
  for (size_t at = log.find(line); at != std::string::npos; at = log.find(line, at + 1)) ++n;
  return n;
}
// nginx's access log past its first `from` bytes once it holds at least
// `n` requests for `path` (NginxServer::AccessLogOnce).
std::string LogOnceLogged(const NginxServer& nginx, size_t from, const std::string& path,
                          size_t n) {
  return nginx
      .AccessLogOnce([&](const std::string& log) {
        return log.size() >= from && LoggedRequests(log.substr(from), path) >= n;
      })
      .substr(from);
}
const std::vector<std::string> kFiveRanges = {"bytes=0-65535", "bytes=65536-131071",
                                              "bytes=131072-196607", "bytes=196608-262143",
                                              "bytes=262144-299999"};

// With the size known from the index, the other parts go out with part 0
// instead of after it: all five parts are in flight at once, each on its
// own connection; without it part 0 goes alone and the next part reuses
// its connection. nginx's log counts the requests.
TEST_F(GetToFileTest, WithTheSizeKnownThePartsStartWithPartZero) {
  ASSERT_TRUE(WriteFileAtomic(nginx_->www() + "/parts.bin", PatternBytes(kObject, 4)).ok());
  const std::string url = "http://127.0.0.1:" + std::to_string(nginx_->http_port()) + "/parts.bin";
  for (bool known : {true, false}) {
    SCOPED_TRACE(known ? "size known" : "size unknown");
    auto client = HttpClient::Create(loop_.executor());
    ASSERT_TRUE(client.ok());
    const std::string dst = out() + (known ? "/known.bin" : "/unknown.bin");
    const std::string before = nginx_->AccessLog();
    Result<HttpResponse> r = loop_.Run(
        (*client)->GetToFile(url, dst, FivePartsOf64KiB(known ? std::optional(kObject) : std::nullopt)));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_TRUE(*ReadFile(dst) == PatternBytes(kObject, 4));
    EXPECT_EQ(r->body_bytes, kObject);
    EXPECT_EQ((*client)->stats().connections_opened, known ? 5u : 4u);
    EXPECT_EQ((*client)->stats().connections_reused, known ? 0u : 1u);
    std::string log = LogOnceLogged(*nginx_, before.size(), "/parts.bin", 5);
    EXPECT_EQ(LoggedRanges(log, "/parts.bin"), kFiveRanges);
    EXPECT_EQ(LoggedRequests(log, "/parts.bin"), 5u);
  }
}

// Once the client's servers answer as if local (HttpClient::LocalLink), a
// download keeps local_concurrency parts in flight instead of concurrency,
// and with the size known asks the object in that many parts: two halves
// over two connections (the priming GET's, reused, and one more) instead
// of five 64 KiB parts over five. Without the size, the same five parts as
// from afar, over the two connections.
TEST_F(GetToFileTest, FromALocalServerLocalConcurrencyPartsSplitTheObject) {
  ASSERT_TRUE(WriteFileAtomic(nginx_->www() + "/local.bin", PatternBytes(kObject, 6)).ok());
  const std::string url = "http://127.0.0.1:" + std::to_string(nginx_->http_port()) + "/local.bin";
  struct Case {
    bool local, known;
    std::vector<std::string> ranges;
    uint64_t opened, reused;
  };
  const std::vector<Case> cases = {
      {true, true, {"bytes=0-149999", "bytes=150000-299999"}, 2, 1},
      {true, false, kFiveRanges, 2, 4},
      {false, true, kFiveRanges, 5, 1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.local ? "local" : "not local") +
                 (c.known ? ", size known" : ", size unknown"));
    HttpClientOptions client_options;
    client_options.local_first_byte =
        c.local ? std::chrono::microseconds(std::chrono::hours(1)) : std::chrono::microseconds(0);
    auto client = HttpClient::Create(loop_.executor(), client_options);
    ASSERT_TRUE(client.ok());
    HttpRequest get;
    get.url = Url();
    const size_t primed = nginx_->AccessLog().size();
    ASSERT_TRUE(loop_.Run((*client)->Send(get)).ok());
    EXPECT_EQ((*client)->LocalLink(), c.local);
    const std::string dst = out() + "/local-" + std::to_string(c.local) + std::to_string(c.known);
    // Counted from past the priming GET's line (logged after its answer).
    const size_t before = primed + LogOnceLogged(*nginx_, primed, "/data.bin", 1).size();
    GetToFileOptions options =
        FivePartsOf64KiB(c.known ? std::optional(kObject) : std::nullopt);
    options.local_concurrency = 2;
    Result<HttpResponse> r = loop_.Run((*client)->GetToFile(url, dst, options));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_TRUE(*ReadFile(dst) == PatternBytes(kObject, 6));
    EXPECT_EQ(r->body_bytes, kObject);
    EXPECT_EQ((*client)->stats().connections_opened, c.opened);
    EXPECT_EQ((*client)->stats().connections_reused, c.reused);
    std::string log = LogOnceLogged(*nginx_, before, "/local.bin", c.ranges.size());
    EXPECT_EQ(LoggedRanges(log, "/local.bin"), c.ranges);
    EXPECT_EQ(LoggedRequests(log, "/local.bin"), c.ranges.size());
  }
}

// A server that ignores Range answers all five parts whole: part 0's body
// is the file, the others stop at the response head, and nothing is asked
// again. Part 0 is answered once all five requests are in.
TEST_F(GetToFileTest, AServerIgnoringRangeGivesTheFileInPartZeroAlone) {
  ObjectServer server(PatternBytes(kObject, 5), [](ObjectServer& s, const testing::FakeRequest& r) {
    if (ObjectServer::FirstByte(r) == 0) s.WaitForRequests(5);
    return s.Answer(r, /*honour_range=*/false);
  });
  Result<HttpResponse> r = loop_.Run(
      client_->GetToFile(server.url(), out() + "/whole.mds", FivePartsOf64KiB(kObject)));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(*ReadFile(out() + "/whole.mds") == PatternBytes(kObject, 5));
  EXPECT_EQ(r->status, 200);
  std::vector<std::string> ranges = Ranges(server.seen());
  SortRanges(ranges.begin(), ranges.end());
  EXPECT_EQ(ranges, kFiveRanges);  // once each, all ranged, none again
}

// Without the size, a server ignoring Range gives the whole object in one
// response (part 0's range used to cut it to the part, then fail on size).
TEST_F(GetToFileTest, WithoutTheSizeAServerIgnoringRangeGivesTheWholeObject) {
  ObjectServer server(PatternBytes(kObject, 6), [](ObjectServer& s, const testing::FakeRequest& r) {
    return s.Answer(r, /*honour_range=*/false);
  });
  Result<HttpResponse> r = loop_.Run(
      client_->GetToFile(server.url(), out() + "/whole.mds", FivePartsOf64KiB(std::nullopt)));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(*ReadFile(out() + "/whole.mds") == PatternBytes(kObject, 6));
  EXPECT_EQ(Ranges(server.seen()), std::vector<std::string>{"bytes=0-65535"});
}

// Part 0 honoured, the others answered whole: they stopped at the head, so
// each is asked again once part 0 has told that ranges work (and the whole
// answers are then cut to the part, as for any part).
TEST_F(GetToFileTest, PartsAnsweredWholeBeforePartZeroAreAskedAgain) {
  ObjectServer server(PatternBytes(kObject, 7), [](ObjectServer& s, const testing::FakeRequest& r) {
    const bool zero = ObjectServer::FirstByte(r) == 0;
    if (zero) s.WaitForRequests(5);
    return s.Answer(r, /*honour_range=*/zero);
  });
  Result<HttpResponse> r = loop_.Run(
      client_->GetToFile(server.url(), out() + "/mixed.mds", FivePartsOf64KiB(kObject)));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(*ReadFile(out() + "/mixed.mds") == PatternBytes(kObject, 7));
  std::vector<std::string> ranges = Ranges(server.seen());
  ASSERT_EQ(ranges.size(), 9u);
  std::vector<std::string> again(ranges.begin() + 5, ranges.end());
  SortRanges(again.begin(), again.end());
  EXPECT_EQ(again, std::vector<std::string>(kFiveRanges.begin() + 1, kFiveRanges.end()));
}

// Part 0 answered whole after part 1 came ranged (a server honouring Range
// only sometimes): part 1's bytes may be another version's, so the object
// is fetched once more, whole. Part 2 never gets an answer (cancelled).
TEST_F(GetToFileTest, PartZeroWholeAfterRangedPartsIsFetchedAgainWhole) {
  ObjectServer server(PatternBytes(kObject, 8), [](ObjectServer& s, const testing::FakeRequest& r) {
    const uint64_t first = ObjectServer::FirstByte(r);
    if (first == 0 && !r.Header("range").empty()) s.WaitForRequests(3);  // part 1 was read
    if (first >= 2 * (64 << 10)) s.Hang();
    return s.Answer(r, /*honour_range=*/first != 0);
  });
  GetToFileOptions options = FivePartsOf64KiB(kObject);
  options.concurrency = 2;  // part 1's worker asks part 2 once it has read part 1
  Result<HttpResponse> r = loop_.Run(client_->GetToFile(server.url(), out() + "/again.mds", options));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(*ReadFile(out() + "/again.mds") == PatternBytes(kObject, 8));
  // Parts 0 and 1 are sent together (and part 2 behind part 1): the server
  // may see them in any order; the whole fetch comes last.
  std::vector<std::string> ranges = Ranges(server.seen());
  ASSERT_EQ(ranges.size(), 4u);
  SortRanges(ranges.begin(), ranges.begin() + 3);
  EXPECT_EQ(ranges, (std::vector<std::string>{"bytes=0-65535", "bytes=65536-131071",
                                              "bytes=131072-196607", ""}));
}

// A download in two parts whose part 2 states `etag2` where part 1 states
// "v1": the error it fails with (a test's failure if it does not), after
// checking it left nothing behind; `*url`, the object's.
class GetToFileVersionTest : public GetToFileTest {
 protected:
  Status TwoPartsRefused(const std::string& etag2, std::string* url) {
    auto answer = [etag2](ObjectServer& s, const testing::FakeRequest& r) {
      return s.Answer(r, true, ObjectServer::FirstByte(r) == 0 ? "\"v1\"" : etag2);
    };
    ObjectServer server(PatternBytes(100000, 9), answer);
    *url = server.url();
    GetToFileOptions options = FivePartsOf64KiB(100000);  // two parts
    Result<HttpResponse> r = loop_.Run(client_->GetToFile(server.url(), out() + "/x.mds", options));
    EXPECT_FALSE(r.ok());
    EXPECT_TRUE(List(out()).empty());
    return r.ok() ? Status::Ok() : r.status();
  }
};

// Two parts naming different ETags are two versions of the object: the
// download fails, naming both, and leaves nothing behind.
TEST_F(GetToFileVersionTest, PartsWithDifferentETagsFailTheDownload) {
  std::string url;
  Status s = TwoPartsRefused("\"v2\"", &url);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_EQ(s.message(), "GET " + url + ": the object changed during the download (part 1 has "
                         "ETag \"v1\", part 2 has ETag \"v2\")");
}

// A part that states no ETag beside one that states "v1" cannot be shown to
// be of its version (PartsVersion): the download fails as for two ETags.
// Before the one rule, a single pass's parts took such an answer as any
// version while this download refused it.
TEST_F(GetToFileVersionTest, APartStatingNoETagBesideOneThatDoesFailsTheDownload) {
  std::string url;
  Status s = TwoPartsRefused("", &url);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_EQ(s.message(), "GET " + url + ": the object changed during the download (part 1 has "
                         "ETag \"v1\", part 2 has ETag (none))");
}

// A server that states no ETag at all is read as one version, in parts.
TEST_F(GetToFileTest, PartsOfAServerThatStatesNoETagMakeOneFile) {
  ObjectServer server(PatternBytes(100000, 11), [](ObjectServer& s, const testing::FakeRequest& r) {
    return s.Answer(r, true, "");
  });
  Result<HttpResponse> r = loop_.Run(
      client_->GetToFile(server.url(), out() + "/none.mds", FivePartsOf64KiB(100000)));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(*ReadFile(out() + "/none.mds") == PatternBytes(100000, 11));
}

// Parts asked after an ETag is known carry If-Match: an object replaced
// since fails them with 412 (the server's word: kCorrupt, the object is not
// the version asked for). Part 1 is sent
// beside part 0, so whether it carries If-Match depends on when part 0's
// headers arrived: the first request carries none, every one that does
// carries part 0's ETag, and the 412 ends the download.
TEST_F(GetToFileTest, LaterPartsAskIfMatchTheFirstETag) {
  ObjectServer server(PatternBytes(kObject, 10), [](ObjectServer& s, const testing::FakeRequest& r) {
    std::string match = r.Header("if-match");
    if (!match.empty() && match != "\"v2\"") return testing::FakeResponse{412, {}, ""};
    return s.Answer(r, true, match.empty() ? "\"v1\"" : "\"v2\"");
  });
  GetToFileOptions options = FivePartsOf64KiB(kObject);
  options.concurrency = 2;
  Result<HttpResponse> r = loop_.Run(client_->GetToFile(server.url(), out() + "/x.mds", options));
  EXPECT_EQ(r.status().code(), StatusCode::kCorrupt);
  EXPECT_NE(r.status().message().find("HTTP 412"), std::string::npos) << r.status().ToString();
  std::vector<ObjectServer::Seen> seen = server.seen();
  ASSERT_GE(seen.size(), 2u);
  EXPECT_EQ(seen[0].if_match, "");
  size_t matched = 0;
  for (const ObjectServer::Seen& request : seen) {
    if (request.if_match.empty()) continue;
    EXPECT_EQ(request.if_match, "\"v1\"");
    ++matched;
  }
  EXPECT_GE(matched, 1u);
  EXPECT_TRUE(List(out()).empty());
}

// Retries per the client's policy (two after the first attempt), with
// backoffs of a few milliseconds so that a test spends no time waiting.
std::unique_ptr<HttpClient> QuickRetryClient(EventLoop& loop) {
  HttpClientOptions options;
  options.download_retry = 2;
  options.backoff_base = std::chrono::milliseconds(1);
  options.backoff_max = std::chrono::milliseconds(4);
  auto client = HttpClient::Create(loop.executor(), options);
  return client.ok() ? std::move(client).value() : nullptr;
}
constexpr uint64_t kPartTwo = 2 * (64 << 10);

// A part failing once is asked again by the client's retry policy; the
// other parts, part 0 included, are not asked again.
TEST_F(GetToFileTest, APartFailingOnceIsRetriedAlone) {
  std::atomic<int> part_two_answers{0};
  ObjectServer server(PatternBytes(kObject, 11), [&](ObjectServer& s, const testing::FakeRequest& r) {
    if (ObjectServer::FirstByte(r) == kPartTwo && part_two_answers++ == 0) {
      return testing::FakeResponse{503, {}, ""};
    }
    return s.Answer(r, /*honour_range=*/true);
  });
  std::unique_ptr<HttpClient> client = QuickRetryClient(loop_);
  ASSERT_NE(client, nullptr);
  Result<HttpResponse> r = loop_.Run(
      client->GetToFile(server.url(), out() + "/retried.mds", FivePartsOf64KiB(kObject)));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(*ReadFile(out() + "/retried.mds") == PatternBytes(kObject, 11));
  std::vector<std::string> ranges = Ranges(server.seen());
  SortRanges(ranges.begin(), ranges.end());
  EXPECT_EQ(ranges, (std::vector<std::string>{kFiveRanges[0], kFiveRanges[1], kFiveRanges[2],
                                              kFiveRanges[2], kFiveRanges[3], kFiveRanges[4]}));
}

// A part failing on every attempt the policy allows fails the download
// when part 0 shows ranges work: the object cannot be had whole.
TEST_F(GetToFileTest, APartFailingForGoodFailsARangedDownload) {
  ObjectServer server(PatternBytes(kObject, 12), [](ObjectServer& s, const testing::FakeRequest& r) {
    if (ObjectServer::FirstByte(r) == kPartTwo) return testing::FakeResponse{503, {}, ""};
    return s.Answer(r, /*honour_range=*/true);
  });
  std::unique_ptr<HttpClient> client = QuickRetryClient(loop_);
  ASSERT_NE(client, nullptr);
  Result<HttpResponse> r = loop_.Run(
      client->GetToFile(server.url(), out() + "/failed.mds", FivePartsOf64KiB(kObject)));
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  const std::string get = "GET " + server.url();
  EXPECT_EQ(r.status().message(), get + ": gave up after 3 attempt(s) (download_retry=2): " + get +
                                       ": HTTP 503 Status, expected 206 for Range " +
                                       "bytes=131072-196607");
  std::vector<std::string> ranges = Ranges(server.seen());
  EXPECT_EQ(std::count(ranges.begin(), ranges.end(), kFiveRanges[2]), 3);
  EXPECT_TRUE(List(out()).empty());
}

// A part sent beside part 0 fails for good (503 on every attempt) before
// part 0 has answered; part 0 then comes whole (a server ignoring Range),
// and that is the download: the failed part must not cancel it. Part 0 is
// answered once part 2's last attempt has been (and, most likely, read).
TEST_F(GetToFileTest, APartFailingBeforePartZeroCameWholeDoesNotFailTheDownload) {
  ObjectServer server(PatternBytes(kObject, 13), [](ObjectServer& s, const testing::FakeRequest& r) {
    const uint64_t first = ObjectServer::FirstByte(r);
    if (first == kPartTwo) return testing::FakeResponse{503, {}, ""};
    if (first == 0) {
      s.WaitForRequests(7);  // parts 0 to 4, and part 2's two retries
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return s.Answer(r, /*honour_range=*/false);
  });
  std::unique_ptr<HttpClient> client = QuickRetryClient(loop_);
  ASSERT_NE(client, nullptr);
  Result<HttpResponse> r = loop_.Run(
      client->GetToFile(server.url(), out() + "/whole.mds", FivePartsOf64KiB(kObject)));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200);
  EXPECT_TRUE(*ReadFile(out() + "/whole.mds") == PatternBytes(kObject, 13));
  std::vector<std::string> ranges = Ranges(server.seen());
  SortRanges(ranges.begin(), ranges.end());
  EXPECT_EQ(ranges, (std::vector<std::string>{kFiveRanges[0], kFiveRanges[1], kFiveRanges[2],
                                              kFiveRanges[2], kFiveRanges[2], kFiveRanges[3],
                                              kFiveRanges[4]}));
}

// An index older than the object: it is now 50,000 bytes where the index
// says 300,000, so parts 1 to 4 ask for bytes past its end and get 416.
// They wait for part 0, whose Content-Range states the size: the error
// says the remote changed, as for any other stated size (above). Part 0 is
// answered last, once the 416s have been (and, most likely, read).
TEST_F(GetToFileTest, AStaleExpectedSizeFailsWithTheSizePartZeroStated) {
  constexpr uint64_t kNow = 50000;
  ObjectServer server(PatternBytes(kNow, 14), [](ObjectServer& s, const testing::FakeRequest& r) {
    const uint64_t first = ObjectServer::FirstByte(r);
    if (first >= kNow) {
      return testing::FakeResponse{416, {{"Content-Range", "bytes */" + std::to_string(kNow)}}, ""};
    }
    s.WaitForRequests(5);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    return s.Answer(r, /*honour_range=*/true);
  });
  Result<HttpResponse> r = loop_.Run(
      client_->GetToFile(server.url(), out() + "/stale.mds", FivePartsOf64KiB(kObject)));
  EXPECT_EQ(r.status().code(), StatusCode::kCorrupt);
  EXPECT_EQ(r.status().message(),
            "GET " + server.url() + ": the object is 50000 bytes, index.json says 300000 (the "
            "remote changed since it was indexed?)");
  std::vector<std::string> ranges = Ranges(server.seen());
  SortRanges(ranges.begin(), ranges.end());
  EXPECT_EQ(ranges, kFiveRanges);  // a 416 is not retried
  EXPECT_TRUE(List(out()).empty());
}

}  // namespace
}  // namespace sluice
