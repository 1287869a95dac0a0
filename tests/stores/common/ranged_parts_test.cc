// GetRangeInPartsInto against a real nginx (directly, and through a
// FaultProxy that cuts a part short or answers it with a 503): the exact
// bytes in one buffer, the ranged GETs on the wire (nginx's access log),
// and what a shorter or longer object comes to.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/arrived_bytes.h"
#include "base/file.h"
#include "engine/runtime/event_loop.h"
#include "stores/common/ranged_parts.h"
#include "stores/http/http_client.h"
#include "stores/store.h"
#include "tests/stores/common/fake_http_server.h"
#include "tests/stores/common/node_servers.h"
#include "tests/stores/http/fault_proxy.h"
#include "tests/stores/http/test_servers.h"

namespace sluice {
namespace {

using testing::CleanStoreEnv;
using testing::FakeRequest;
using testing::FakeResponse;
using testing::Fault;
using testing::FaultProxy;
using testing::PatternBytes;
using testing::ScopedEnv;
using testing::TempDir;

constexpr uint64_t kSize = 3 << 20;   // the object: 3 MiB
constexpr uint64_t kPart = 1 << 20;   // a part per 1 MiB

// The Range headers of the GETs of `path` in nginx's access log, sorted.
std::vector<std::string> RangesAsked(const std::string& log, const std::string& path) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < log.size()) {
    size_t end = log.find('\n', at);
    if (end == std::string::npos) end = log.size();
    const std::string line = log.substr(at, end - at);
    at = end + 1;
    if (line.find(" GET " + path + " ") == std::string::npos) continue;
    out.push_back(line.substr(line.rfind(' ') + 1));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// RangesAsked once nginx has logged at least `n` GETs of `path`: it writes
// a request's line after its answer, which the client may have read
// first. Waits for that state (up to 10 s, then returns what is logged).
std::vector<std::string> LoggedRanges(const testing::NginxServer& nginx, const std::string& path,
                                      size_t n) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  std::vector<std::string> got = RangesAsked(nginx.AccessLog(), path);
  while (got.size() < n && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    got = RangesAsked(nginx.AccessLog(), path);
  }
  return got;
}

// The rule's exact counts: a part per part_size, at most the parts per
// object and the free connections, at least one.
TEST(RangedPartCountTest, PartsBySizeAtMostThePerObjectAndFreeConnections) {
  constexpr uint64_t kShard = (uint64_t{64} << 20) + 1;  // a 64 MiB shard and the byte past it
  constexpr uint64_t k8MiB = uint64_t{8} << 20;
  EXPECT_EQ(RangedPartCount(kShard, k8MiB, 8, 32), 8);
  EXPECT_EQ(RangedPartCount(kShard, k8MiB, 16, 32), 9);
  EXPECT_EQ(RangedPartCount(kShard, k8MiB, 8, 5), 5);
  EXPECT_EQ(RangedPartCount(kShard, k8MiB, 8, 1), 1);
  EXPECT_EQ(RangedPartCount(kShard, k8MiB, 8, 0), 1);
  EXPECT_EQ(RangedPartCount(kShard, 0, 8, 32), 1);
  EXPECT_EQ(RangedPartCount(k8MiB, k8MiB, 8, 32), 1);
  EXPECT_EQ(RangedPartCount(k8MiB + 1, k8MiB, 8, 32), 2);
  EXPECT_EQ(RangedPartCount(kShard, k8MiB, 0, 32), 1);
}

// The client's count of free connections: its limit less the connections
// promised to claims still held; a claim with none free takes one (it
// waits at the pool); a released claim's connections are free again.
TEST(ClaimConnectionsTest, FreeConnectionsAreTheLimitLessThoseHeld) {
  EventLoop loop;
  HttpClientOptions options;
  options.max_connections_per_host = 10;
  auto client = HttpClient::Create(loop.executor(), options);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  std::vector<int> seen;
  auto take = [&](int want) {
    return (*client)->ClaimConnections([&](int free) {
      seen.push_back(free);
      return std::min(want, free);
    });
  };
  auto a = take(6);
  auto b = take(8);
  auto c = take(3);
  EXPECT_EQ(seen, (std::vector<int>{10, 4, 0}));
  EXPECT_EQ(a.first, 6);
  EXPECT_EQ(b.first, 4);
  EXPECT_EQ(c.first, 1);
  a.second.reset();
  auto d = take(8);
  EXPECT_EQ(seen.back(), 5);
  EXPECT_EQ(d.first, 5);
  b.second.reset();
  c.second.reset();
  d.second.reset();
  EXPECT_EQ(take(8).first, 8);
  EXPECT_EQ(seen.back(), 10);
}

class RangedPartsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    nginx_ = testing::NginxServer::Start(dir_.path());
    if (nginx_ == nullptr) GTEST_SKIP() << "nginx did not start (is it installed?)";
    ASSERT_TRUE(MakeDirs(nginx_->www() + "/ds").ok());
    ASSERT_TRUE(WriteFileAtomic(nginx_->www() + "/ds/shard.mds", data_).ok());
  }

  // The web store at `port` (nginx's, or a proxy's in front of it): four
  // parts in flight per object, never fewer for a local server.
  std::unique_ptr<Store> Open(int port) {
    StoreOptions options;
    options.concurrency = 4;
    options.local_concurrency = 0;
    options.download_retry = 2;
    auto store = OpenStore("http://127.0.0.1:" + std::to_string(port) + "/ds/", loop_.executor(),
                           options);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(*store) : nullptr;
  }

  // The object and one byte past it in parts, as a single pass asks.
  Result<uint64_t> Read(Store& store, std::string& into, uint64_t part_size = kPart) {
    into.assign(kSize + 1, '\0');
    return loop_.Run(GetRangeInPartsInto(store, "shard.mds", 0, kSize + 1, into.data(), part_size));
  }

  TempDir dir_;
  ScopedEnv env_{CleanStoreEnv()};
  EventLoop loop_;
  std::unique_ptr<testing::NginxServer> nginx_;
  const std::string data_ = PatternBytes(kSize, 41);
};

// 3 MiB + 1 in parts of 1 MiB at least, four in flight: four GETs of equal
// ranges (the last one past the end), the bytes exact at their places.
TEST_F(RangedPartsTest, ReadsTheExactBytesAsFourRangedGets) {
  auto store = Open(nginx_->http_port());
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->ClaimRangedParts(kSize + 1, kPart).parts, 4);
  std::string got;
  auto n = Read(*store, got);
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, kSize);
  EXPECT_TRUE(got.substr(0, kSize) == data_);
  EXPECT_EQ(LoggedRanges(*nginx_, "/ds/shard.mds", 4),
            (std::vector<std::string>{"bytes=0-786432", "bytes=1572866-2359298",
                                      "bytes=2359299-3145728", "bytes=786433-1572865"}));
}

// A shard in 8 parts while 3 other shards download in 8 each leaves them
// theirs: the pool's 32 connections are promised, so a fifth shard's read
// takes one (it waits at the pool as any request) until one of them ends.
TEST_F(RangedPartsTest, PartsTakeOnlyTheFreeConnections) {
  StoreOptions options;
  options.concurrency = 8;
  options.local_concurrency = 0;
  auto store = OpenStore("http://127.0.0.1:" + std::to_string(nginx_->http_port()) + "/ds/",
                         loop_.executor(), options);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  constexpr uint64_t kShard = (uint64_t{64} << 20) + 1;
  constexpr uint64_t k8MiB = uint64_t{8} << 20;
  std::vector<RangedPartsClaim> others;
  for (int i = 0; i < 3; ++i) others.push_back((*store)->ClaimRangedParts(kShard, k8MiB));
  RangedPartsClaim fourth = (*store)->ClaimRangedParts(kShard, k8MiB);
  EXPECT_EQ(others[0].parts, 8);
  EXPECT_EQ(others[2].parts, 8);
  EXPECT_EQ(fourth.parts, 8);
  EXPECT_EQ((*store)->ClaimRangedParts(kShard, k8MiB).parts, 1);
  // What a read does then: one GET of the whole range.
  std::string got;
  auto n = Read(**store, got);
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, kSize);
  EXPECT_TRUE(got.substr(0, kSize) == data_);
  EXPECT_EQ(LoggedRanges(*nginx_, "/ds/shard.mds", 1),
            std::vector<std::string>{"bytes=0-3145728"});
  // Three shards in 8 parts each: 8 left for a fourth, 4 for this object.
  fourth.hold.reset();
  EXPECT_EQ((*store)->ClaimRangedParts(kShard, k8MiB).parts, 8);
  EXPECT_EQ((*store)->ClaimRangedParts(kSize + 1, kPart).parts, 4);
}

// part_size 0, or an object within one part: one GET.
TEST_F(RangedPartsTest, OnePartIsOneGet) {
  auto store = Open(nginx_->http_port());
  ASSERT_NE(store, nullptr);
  std::string got;
  auto n = Read(*store, got, 0);
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, kSize);
  EXPECT_TRUE(got.substr(0, kSize) == data_);
  EXPECT_EQ(LoggedRanges(*nginx_, "/ds/shard.mds", 1),
            std::vector<std::string>{"bytes=0-3145728"});
}

// The first connection's answer is cut after 100,000 bytes: that part
// alone is asked again, for the rest of its range, and the bytes are exact.
TEST_F(RangedPartsTest, APartCutShortResumesWithARange) {
  FaultProxy proxy(nginx_->http_port());
  proxy.Schedule({Fault::Truncate(100000)});
  auto store = Open(proxy.port());
  ASSERT_NE(store, nullptr);
  std::string got;
  auto n = Read(*store, got);
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, kSize);
  EXPECT_TRUE(got.substr(0, kSize) == data_);
  const std::vector<std::string> asked = LoggedRanges(*nginx_, "/ds/shard.mds", 5);
  ASSERT_EQ(asked.size(), 5u) << nginx_->AccessLog();
  const std::vector<std::string> parts{"bytes=0-786432", "bytes=1572866-2359298",
                                       "bytes=2359299-3145728", "bytes=786433-1572865"};
  // One range is a part's end from a byte inside it: the resumed rest.
  std::vector<std::string> resumed;
  for (const std::string& r : asked) {
    if (std::find(parts.begin(), parts.end(), r) == parts.end()) resumed.push_back(r);
  }
  ASSERT_EQ(resumed.size(), 1u) << nginx_->AccessLog();
  const std::string end = resumed[0].substr(resumed[0].find('-'));
  EXPECT_TRUE(std::any_of(parts.begin(), parts.end(), [&](const std::string& p) {
    return p.substr(p.find('-')) == end && p != resumed[0];
  })) << resumed[0];
}

// The first connection's answer is a 503 (from the proxy: it never
// reaches nginx): that part is asked again, and nginx serves four GETs.
TEST_F(RangedPartsTest, APartsServerErrorIsRetried) {
  FaultProxy proxy(nginx_->http_port());
  proxy.Schedule({Fault::Status(503)});
  auto store = Open(proxy.port());
  ASSERT_NE(store, nullptr);
  std::string got;
  auto n = Read(*store, got);
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, kSize);
  EXPECT_TRUE(got.substr(0, kSize) == data_);
  EXPECT_EQ(LoggedRanges(*nginx_, "/ds/shard.mds", 4).size(), 4u)
      << nginx_->AccessLog();
}

// A part's error that retries do not mend names the object and the part's
// bytes.
TEST_F(RangedPartsTest, APartsErrorNamesTheObjectAndItsBytes) {
  FaultProxy proxy(nginx_->http_port());
  proxy.Schedule({Fault::Status(404)});
  auto store = Open(proxy.port());
  ASSERT_NE(store, nullptr);
  std::string got;
  auto n = Read(*store, got);
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.status().code(), StatusCode::kNotFound) << n.status().ToString();
  const std::string text = n.status().ToString();
  EXPECT_NE(text.find("/ds/shard.mds"), std::string::npos) << text;
  EXPECT_NE(text.find(" of 4, bytes "), std::string::npos) << text;
}

// An object shorter than the parts: the parts past its end are empty (a
// 416 there is no error), and the count says where it ended; a longer one
// fills the byte past the asked size.
TEST_F(RangedPartsTest, ShorterAndLongerObjectsShowInTheCount) {
  const std::string shorter = data_.substr(0, 1500000);
  ASSERT_TRUE(WriteFileAtomic(nginx_->www() + "/ds/shard.mds", shorter).ok());
  auto store = Open(nginx_->http_port());
  ASSERT_NE(store, nullptr);
  std::string got;
  auto n = Read(*store, got);
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, 1500000u);
  EXPECT_TRUE(got.substr(0, 1500000) == shorter);

  ASSERT_TRUE(WriteFileAtomic(nginx_->www() + "/ds/shard.mds", data_ + "xy").ok());
  n = Read(*store, got);
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, kSize + 1);
  EXPECT_TRUE(got == data_ + "x");
}

// Tiny parts that four connections cannot all take: 5 bytes in parts of 1
// are 4 parts of 2 bytes by the claim, which cover the range in 3 (2 + 2 +
// 1). No fourth part starts past the range's end, so no byte of the longer
// object lands past the 5 bytes asked for.
TEST_F(RangedPartsTest, PartsThatCoverTheRangeInFewerAreFewer) {
  ASSERT_TRUE(WriteFileAtomic(nginx_->www() + "/ds/tiny.mds", "ABCDEFGH").ok());
  auto store = Open(nginx_->http_port());
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->ClaimRangedParts(5, 1).parts, 4);
  std::string room(5 + 8, '.');  // the 5 bytes asked for, then a guard
  auto n = loop_.Run(GetRangeInPartsInto(*store, "tiny.mds", 0, 5, room.data(), 1));
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, 5u);
  EXPECT_EQ(room, "ABCDE........");
  EXPECT_EQ(LoggedRanges(*nginx_, "/ds/tiny.mds", 3),
            (std::vector<std::string>{"bytes=0-1", "bytes=2-3", "bytes=4-4"}));
}

// A 9-byte object answered from two versions of one size: a range from
// byte 0 from `v1` (ETag "v1"), any other from `v2` (ETag "v2").
// `etag2` is the ETag part 2's answer states ("" states none).
FakeResponse TwoVersionsAnswer(const FakeRequest& r, const std::string& v1,
                               const std::string& v2, const std::string& etag2 = "\"v2\"") {
  const std::string range = r.Header("range");  // bytes=<first>-<last>
  const uint64_t first = std::stoull(range.substr(6));
  const uint64_t last = std::min<uint64_t>(std::stoull(range.substr(range.find('-') + 1)), 8);
  const bool old = first == 0;
  FakeResponse answer{
      206,
      {{"Content-Range", "bytes " + std::to_string(first) + "-" + std::to_string(last) + "/9"}},
      (old ? v1 : v2).substr(first, last - first + 1)};
  if (old || !etag2.empty()) answer.headers.emplace_back("ETag", old ? "\"v1\"" : etag2);
  return answer;
}

// Bytes 0..9 of a 9-byte object read in two parts from a fake web server
// (named as such: nginx cannot be told to answer two requests from two
// versions) that holds both GETs until both have come, so neither was sent
// after an answer (no If-Match), then answers the first part from `v1`
// (ETag "v1") and the second from `v2` stating `etag2`. The read's result,
// and the requests the server saw (sorted).
struct TwoHeldParts {
  std::string object;  // the object's URL
  Result<uint64_t> n = uint64_t{0};
  std::vector<std::string> asked;
};
TwoHeldParts ReadInTwoHeldParts(const std::string& v1, const std::string& v2,
                                const std::string& etag2) {
  std::mutex mu;
  std::condition_variable both;
  TwoHeldParts out;
  testing::FakeHttpServer server([&](const FakeRequest& r) -> FakeResponse {
    std::unique_lock<std::mutex> lock(mu);
    out.asked.push_back(r.method + " " + r.target + " " + r.Header("range") +
                        (r.Header("if-match").empty() ? "" : " If-Match " + r.Header("if-match")));
    both.notify_all();
    both.wait_for(lock, std::chrono::seconds(20), [&] { return out.asked.size() >= 2; });
    return TwoVersionsAnswer(r, v1, v2, etag2);
  });
  out.object = server.url() + "/ds/obj";
  ScopedEnv env(CleanStoreEnv());
  EventLoop loop;
  StoreOptions options;
  options.concurrency = 4;
  options.local_concurrency = 0;
  options.download_retry = 2;
  auto store = OpenStore(server.url() + "/ds/", loop.executor(), options);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  if (!store.ok()) return out;
  EXPECT_EQ((*store)->ClaimRangedParts(10, 5).parts, 2);
  std::string room(10, '.');
  out.n = loop.Run(GetRangeInPartsInto(**store, "obj", 0, 10, room.data(), 5,
                                       ObjectVersion("", 9)));
  std::lock_guard<std::mutex> lock(mu);
  std::sort(out.asked.begin(), out.asked.end());
  return out;
}

// An object of 9 bytes replaced at the same size while it is read in two
// parts: the read fails naming both parts and ETags, with no retry.
// Before the parts compared the ETags their answers stated, the two
// versions' bytes were joined as one object.
TEST(RangedPartsVersionTest, PartsOfTwoVersionsOfASameSizeObjectAreNotJoined) {
  TwoHeldParts read = ReadInTwoHeldParts("AAAAABBBB", "CCCCCDDDD", "\"v2\"");
  ASSERT_FALSE(read.n.ok());
  EXPECT_EQ(read.n.status().code(), StatusCode::kCorrupt);
  EXPECT_EQ(read.n.status().message(),
            read.object + ": replaced while it was read in parts (part 1 has ETag \"v1\", "
                          "part 2 has ETag \"v2\"); its parts not joined");
  EXPECT_EQ(read.asked,
            (std::vector<std::string>{"GET /ds/obj bytes=0-4", "GET /ds/obj bytes=5-9"}));
}

// A part whose answer states no ETag beside one stating "v1" cannot be shown
// to be of that version (PartsVersion, the rule the cached download keeps
// too): refused as another version, though its bytes are the same.
// Before the one rule, such an answer was taken as any version and joined.
TEST(RangedPartsVersionTest, APartStatingNoETagBesideOneThatDoesIsNotJoined) {
  TwoHeldParts read = ReadInTwoHeldParts("AAAAABBBB", "AAAAABBBB", "");
  ASSERT_FALSE(read.n.ok()) << *read.n;
  EXPECT_EQ(read.n.status().code(), StatusCode::kCorrupt);
  EXPECT_EQ(read.n.status().message(),
            read.object + ": replaced while it was read in parts (part 1 has ETag \"v1\", "
                          "part 2 has ETag (none)); its parts not joined");
}

// The same two versions, read with an ArrivedBytes as a single pass reads:
// the part whose answer states the other ETag is refused at its head, so
// none of its bytes is written into the buffer nor told as arrived, while
// the first answer's part is told whole (its bytes as they came).
// Before the check moved to the answer's head, the refused part's bytes
// were written into the buffer (only not told).
TEST(RangedPartsVersionTest, APartOfAnotherVersionIsRefusedBeforeAByteOfItIsWritten) {
  const std::string v1 = "AAAAABBBB", v2 = "CCCCCDDDD";
  std::mutex mu;
  std::condition_variable both;
  int asked = 0;
  testing::FakeHttpServer server([&](const FakeRequest& r) -> FakeResponse {
    std::unique_lock<std::mutex> lock(mu);
    ++asked;
    both.notify_all();
    both.wait_for(lock, std::chrono::seconds(20), [&] { return asked >= 2; });
    return TwoVersionsAnswer(r, v1, v2);
  });
  ScopedEnv env(CleanStoreEnv());
  EventLoop loop;
  StoreOptions options;
  options.concurrency = 4;
  options.local_concurrency = 0;
  options.download_retry = 2;
  auto store = OpenStore(server.url() + "/ds/", loop.executor(), options);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ASSERT_EQ((*store)->ClaimRangedParts(9, 5).parts, 2);
  auto room = std::shared_ptr<char[]>(new char[9]);
  std::fill(room.get(), room.get() + 9, '.');
  ArrivedBytes arrived(9, "obj");
  arrived.Attach(std::shared_ptr<const char>(room, room.get()));
  auto n = loop.Run(GetRangeInPartsInto(**store, "obj", 0, 9, room.get(), 5,
                                        ObjectVersion("", 9), &arrived));
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.status().code(), StatusCode::kCorrupt);
  EXPECT_NE(n.status().message().find("replaced while it was read in parts"), std::string::npos)
      << n.status().ToString();
  // Whichever answer came first is the reference: its part alone is in.
  const std::string got(room.get(), 9);
  EXPECT_TRUE(got == "AAAAA...." || got == ".....DDDD") << got;
  const bool first_in = got[0] == 'A';
  EXPECT_EQ(arrived.arrived(), first_in ? 5u : 4u);
  auto told = arrived.Await(first_in ? 0 : 5, first_in ? 5 : 4, false);
  ASSERT_TRUE(told.ok()) << told.status().ToString();
  ASSERT_TRUE(told->has_value());
  EXPECT_EQ(std::string(**told), first_in ? "AAAAA" : "DDDD");
  EXPECT_FALSE(arrived.Await(first_in ? 5 : 0, 1, false)->has_value());
}

}  // namespace
}  // namespace sluice
