// s3:// against a real, signature-verifying s3rver (tests/servers), plus the
// environment and profile handling that picks credentials and region.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <string>

#include <gtest/gtest.h>

#include "base/file.h"
#include "engine/runtime/event_loop.h"
#include "stores/credentials/aws_credential_chain.h"
#include "stores/credentials/aws_settings.h"
#include "base/ascii.h"
#include "stores/s3/bucket_region.h"
#include "stores/s3/s3_store.h"
#include "stores/common/xml_lite.h"
#include "stores/common/ranged_parts.h"
#include "stores/store.h"
#include "tests/stores/common/node_server_suite.h"
#include "tests/stores/common/fake_http_server.h"
#include "tests/stores/common/node_servers.h"
#include "tests/stores/common/range_only_checks.h"
#include "tests/stores/http/test_servers.h"

namespace sluice {
namespace {

using testing::CleanStoreEnv;
using testing::NodeServer;
using testing::PatternBytes;
using testing::ScopedEnv;
using testing::TempDir;

constexpr char kKeyId[] = "SLUICETESTKEY";
constexpr char kSecret[] = "s3cr3t-Xq9-never-printed";

class S3StoreTest : public testing::NodeServerSuite<S3StoreTest> {
 public:
  static std::unique_ptr<NodeServer> StartServer(const std::string& dir) {
    return testing::StartS3rver(dir, kKeyId, kSecret, {"bkt", "other"});
  }
  static std::map<std::string, std::optional<std::string>> StoreEnv() {
    auto env = testing::S3rverEnv(server_->port(), kKeyId, kSecret);
    // No credential source may reach beyond 127.0.0.1 (EC2 metadata, STS,
    // container endpoints) if a test leaves the keys out.
    for (const char* var : {"AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN",
                            "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
                            "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_DEFAULT_PROFILE",
                            "AWS_EC2_METADATA_SERVICE_ENDPOINT", "AWS_ENDPOINT_URL_STS",
                            "AWS_CREDENTIAL_EXPIRATION"}) {
      env[var] = std::nullopt;
    }
    env["AWS_EC2_METADATA_DISABLED"] = "true";
    return env;
  }
};

TEST_F(S3StoreTest, PutGetRangeHead) {
  auto store = Open("s3://bkt/root/");
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->root(), "s3://bkt/root");
  std::string data = PatternBytes(70000, 11);
  Status put = loop_.Run(store->Put("dir/a b+c.bin", data));
  ASSERT_TRUE(put.ok()) << put.ToString() << "\n" << server_->Log();
  auto got = loop_.Run(store->Get("dir/a b+c.bin"));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(*got == data);
  auto head = loop_.Run(store->Head("dir/a b+c.bin"));
  ASSERT_TRUE(head.ok()) << head.status().ToString();
  EXPECT_EQ(head->size, 70000u);
  auto range = loop_.Run(store->GetRange("dir/a b+c.bin", 1000, 17));
  ASSERT_TRUE(range.ok()) << range.status().ToString();
  EXPECT_TRUE(*range == data.substr(1000, 17)) << range->size();
  auto first = loop_.Run(store->GetRange("dir/a b+c.bin", 0, 1));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_TRUE(*first == data.substr(0, 1)) << first->size();
  auto tail = loop_.Run(store->GetRange("dir/a b+c.bin", 69990, 100));
  ASSERT_TRUE(tail.ok()) << tail.status().ToString();
  EXPECT_TRUE(*tail == data.substr(69990)) << tail->size();
  auto at_end = loop_.Run(store->GetRange("dir/a b+c.bin", 70000, 5));
  ASSERT_TRUE(at_end.ok()) << at_end.status().ToString();
  EXPECT_EQ(*at_end, "");
  // The object sits at root/dir/... in the bucket.
  auto whole = Open("s3://bkt");
  auto via_bucket = loop_.Run(whole->Head("root/dir/a b+c.bin"));
  ASSERT_TRUE(via_bucket.ok()) << via_bucket.status().ToString();
}

// A large object read in ranged parts (GetRangeInPartsInto), each signed
// on its own: s3rver's exact bytes, each at its place in the one buffer.
TEST_F(S3StoreTest, ReadsAnObjectInSignedRangedParts) {
  const std::string data = PatternBytes(3 << 20, 13);
  StoreOptions options;
  options.concurrency = 3;
  options.local_concurrency = 0;
  auto store = Open("s3://bkt/parts", options);
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(loop_.Run(store->Put("shard.mds", data)).ok());
  EXPECT_EQ(store->ClaimRangedParts(data.size() + 1, 1 << 20).parts, 3);
  std::string got(data.size() + 1, '\0');
  auto n = loop_.Run(
      GetRangeInPartsInto(*store, "shard.mds", 0, data.size() + 1, got.data(), 1 << 20));
  ASSERT_TRUE(n.ok()) << n.status().ToString() << "\n" << server_->Log();
  EXPECT_EQ(*n, data.size());
  EXPECT_TRUE(got.substr(0, data.size()) == data);
}

// GetRangeOnly gets s3rver's exact bytes, and stops at the head of a 200
// (see range_only_checks.h).
TEST_F(S3StoreTest, GetRangeOnlyStopsAtTheHeadOfA200) {
  const std::string data = PatternBytes(70000, 12);
  auto bucket = Open("s3://bkt");
  ASSERT_NE(bucket, nullptr);
  ASSERT_TRUE(loop_.Run(bucket->Put("peek/shard.mds", data)).ok());
  testing::FaultProxy proxy(server_->port());
  ScopedEnv via("S3_ENDPOINT_URL", "http://127.0.0.1:" + std::to_string(proxy.port()));
  StoreOptions options;
  options.read_timeout_s = 30;
  auto store = Open("s3://bkt/peek", options);
  ASSERT_NE(store, nullptr);
  testing::ExpectGetRangeOnlyStopsAtTheHeadOfA200(loop_, *store, proxy, "shard.mds", data);
}

// s3rver's ListObjectsV2 gives each object's ETag (its MD5, quoted): a
// replacement of the same size lists with another.
TEST_F(S3StoreTest, ListGivesEachObjectsEtag) {
  auto store = Open("s3://bkt/etags");
  ASSERT_TRUE(loop_.Run(store->Put("a.parquet", "0123456789")).ok());
  auto first = loop_.Run(store->List(""));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_EQ(first->size(), 1u);
  // MD5("0123456789"), as S3 quotes it.
  EXPECT_EQ((*first)[0].etag, "\"781e5e245d69b566979b86e28d23f2c7\"");
  ASSERT_TRUE(loop_.Run(store->Put("a.parquet", "9876543210")).ok());
  auto second = loop_.Run(store->List(""));
  ASSERT_TRUE(second.ok());
  ASSERT_EQ(second->size(), 1u);
  EXPECT_EQ((*second)[0].size, 10u);
  EXPECT_EQ((*second)[0].etag, "\"e388c1c5df4933fa01f6da9f92595589\"");
}

TEST_F(S3StoreTest, ListPagesThroughContinuationTokens) {
  StoreOptions options;
  options.list_page_size = 2;
  auto store = Open("s3://other/ds", options);
  ASSERT_NE(store, nullptr);
  // No '&' or '<' in keys: s3rver escapes them twice in listings.
  std::vector<std::string> keys = {"s/3", "s/1", "a b+c=d", "s/2", "t", "s/10", "u/v/w",
                                   "x/1/a", "x/2/b/c", "x/2/d"};
  for (const auto& k : keys) ASSERT_TRUE(loop_.Run(store->Put(k, k + k)).ok()) << k;
  ASSERT_TRUE(loop_.Run(Open("s3://other")->Put("outside", "x")).ok());
  auto all = loop_.Run(store->List(""));
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  std::vector<std::string> got;
  for (const auto& info : *all) got.push_back(info.key);
  EXPECT_EQ(got, (std::vector<std::string>{"a b+c=d", "s/1", "s/10", "s/2", "s/3", "t", "u/v/w",
                                            "x/1/a", "x/2/b/c", "x/2/d"}));
  EXPECT_EQ((*all)[0].size, 14u);
  // Through the folder listings (delimited) of x/ and then x/1/, x/2/.
  auto x = loop_.Run(store->List("x/"));
  ASSERT_TRUE(x.ok()) << x.status().ToString();
  ASSERT_EQ(x->size(), 3u);
  EXPECT_EQ((*x)[1].key, "x/2/b/c");
  EXPECT_EQ((*x)[1].size, 14u);
  auto s = loop_.Run(store->List("s/"));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->size(), 4u);
  auto none = loop_.Run(store->List("zz"));
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST_F(S3StoreTest, MultipartUploadAndParallelGetToFile) {
  StoreOptions options;
  options.part_size = 5 << 20;  // S3's smallest part
  options.concurrency = 3;
  options.upload_concurrency = 2;  // 4 parts, 2 at a time: they finish out of order
  options.local_concurrency = 0;   // all 3 parts in flight even from a local server
  auto store = Open("s3://bkt/mp", options);
  ASSERT_NE(store, nullptr);
  std::string data = PatternBytes((16 << 20) + 12345, 5);
  std::string src = dir_->path() + "/mp-src.bin";
  ASSERT_TRUE(WriteFileAtomic(src, data).ok());
  Status put = loop_.Run(store->PutFile("big.bin", src));
  ASSERT_TRUE(put.ok()) << put.ToString();
  auto head = loop_.Run(store->Head("big.bin"));
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(head->size, data.size());
  std::string dst = dir_->path() + "/mp-dst.bin";
  Status get = loop_.Run(store->GetToFile("big.bin", dst, std::nullopt));
  ASSERT_TRUE(get.ok()) << get.ToString();
  auto back = ReadFile(dst);
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(*back == data);
  // With the size known (as from index.json) the parts start together with
  // part 0 and later ones ask If-Match its multipart ETag: same bytes.
  std::string known = dir_->path() + "/mp-known.bin";
  get = loop_.Run(store->GetToFile("big.bin", known, data.size()));
  ASSERT_TRUE(get.ok()) << get.ToString();
  EXPECT_TRUE(*ReadFile(known) == data);
  // A small file goes up in one PUT.
  ASSERT_TRUE(WriteFileAtomic(src, "small").ok());
  ASSERT_TRUE(loop_.Run(store->PutFile("small.bin", src)).ok());
  EXPECT_EQ(*loop_.Run(store->Get("small.bin")), "small");
}

TEST_F(S3StoreTest, MissingObjectIsNotFoundNamingTheUrl) {
  auto store = Open("s3://bkt/root");
  auto head = loop_.Run(store->Head("no/such.bin"));
  EXPECT_EQ(head.status().code(), StatusCode::kNotFound);
  EXPECT_NE(head.status().message().find("s3://bkt/root/no/such.bin"), std::string::npos)
      << head.status().message();
  auto get = loop_.Run(store->Get("no/such.bin"));
  EXPECT_EQ(get.status().code(), StatusCode::kNotFound);
  EXPECT_NE(get.status().message().find("404"), std::string::npos) << get.status().message();
  std::string dst = dir_->path() + "/never.bin";
  EXPECT_EQ(loop_.Run(store->GetToFile("no/such.bin", dst, std::nullopt)).code(), StatusCode::kNotFound);
  EXPECT_FALSE(FileExists(dst));
  auto bucket = Open("s3://no-such-bucket");
  EXPECT_EQ(loop_.Run(bucket->List("")).status().code(), StatusCode::kNotFound);
}

TEST_F(S3StoreTest, WrongSecretIsPermissionDeniedWithoutLeakingIt) {
  ASSERT_TRUE(loop_.Run(Open("s3://bkt")->Put("secret-test", "x")).ok());
  const std::string wrong = "WRONG-secret-value-4242";
  ScopedEnv env("AWS_SECRET_ACCESS_KEY", wrong);
  auto store = Open("s3://bkt");
  ::testing::internal::CaptureStderr();
  auto get = loop_.Run(store->Get("secret-test"));
  Status put = loop_.Run(store->Put("secret-test2", "y"));
  auto list = loop_.Run(store->List(""));
  std::string captured = ::testing::internal::GetCapturedStderr();
  for (const Status& s : {get.status(), put, list.status()}) {
    EXPECT_EQ(s.code(), StatusCode::kPermissionDenied) << s.ToString();
    EXPECT_NE(s.message().find("403"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("s3://bkt"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("SignatureDoesNotMatch"), std::string::npos) << s.message();
    EXPECT_EQ(s.message().find(wrong), std::string::npos);
    EXPECT_EQ(s.message().find(kSecret), std::string::npos);
  }
  EXPECT_EQ(captured.find(wrong), std::string::npos);
  EXPECT_EQ(captured.find(kSecret), std::string::npos);
}

TEST_F(S3StoreTest, UnsignedWhenAskedOrWhenNoCredentialSourceApplies) {
  ASSERT_TRUE(loop_.Run(Open("s3://bkt")->Put("public.txt", "hello")).ok());
  {
    // Asked: keys exist but are not used (a wrong secret would be refused).
    ScopedEnv env(std::map<std::string, std::optional<std::string>>{
        {"AWS_SECRET_ACCESS_KEY", "wrong"}, {"AWS_NO_SIGN_REQUEST", "true"}});
    auto store = Open("s3://bkt");
    auto got = loop_.Run(store->Get("public.txt"));
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(*got, "hello");
  }
  {
    // No source applies: unsigned, as Mosaic with boto3 (s3rver serves
    // anonymous reads of its buckets, standing in for a public bucket).
    ScopedEnv env(std::map<std::string, std::optional<std::string>>{
        {"AWS_ACCESS_KEY_ID", std::nullopt}, {"AWS_SECRET_ACCESS_KEY", std::nullopt}});
    auto store = Open("s3://bkt");
    auto got = loop_.Run(store->Get("public.txt"));
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(*got, "hello");
  }
  {
    // A source that applies but is broken is an error, not a reason to go unsigned.
    ScopedEnv env("AWS_SECRET_ACCESS_KEY", std::nullopt);
    auto half = OpenStore("s3://bkt", loop_.executor());
    EXPECT_EQ(half.status().code(), StatusCode::kPermissionDenied);
    EXPECT_EQ(half.status().message(),
              "s3://bkt: environment: only one of AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY is "
              "set; set both");
  }
}

TEST_F(S3StoreTest, RefusedSignatureNamesTheCredentialSource) {
  ScopedEnv env("AWS_SECRET_ACCESS_KEY", "WRONG-secret-value-4242");
  auto store = Open("s3://bkt");
  auto got = loop_.Run(store->Get("anything"));
  EXPECT_EQ(got.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(got.status().message().find(
                "; signed with AWS credentials from environment (AWS_ACCESS_KEY_ID)"),
            std::string::npos)
      << got.status().message();
}

TEST_F(S3StoreTest, WhoamiNamesTheSourceOrWhyUnsigned) {
  const std::string endpoint = "http://127.0.0.1:" + std::to_string(server_->port()) + "/";
  auto signed_by_env = DescribeS3Auth("s3://bkt/some/prefix");
  ASSERT_TRUE(signed_by_env.ok()) << signed_by_env.status().ToString();
  EXPECT_EQ(*signed_by_env,
            "s3://bkt\n  region: us-east-1\n  endpoint: " + endpoint +
                "\n  credentials: environment (AWS_ACCESS_KEY_ID) (access key ****TKEY)\n"
                "  sources tried: environment (used)\n");
  EXPECT_EQ(signed_by_env->find(kSecret), std::string::npos);
  ScopedEnv env(std::map<std::string, std::optional<std::string>>{
      {"AWS_ACCESS_KEY_ID", std::nullopt}, {"AWS_SECRET_ACCESS_KEY", std::nullopt},
      {"AWS_REGION", "eu-north-1"}});
  auto anonymous = DescribeS3Auth("s3://bkt");
  ASSERT_TRUE(anonymous.ok()) << anonymous.status().ToString();
  EXPECT_EQ(anonymous->rfind("s3://bkt\n  region: eu-north-1\n  endpoint: " + endpoint +
                             "\n  requests: unsigned (no AWS credentials found; tried: "
                             "environment (AWS_ACCESS_KEY_ID not set), ",
                             0),
            0u)
      << *anonymous;
  ScopedEnv forced("S3_UNSIGNED", "1");
  EXPECT_NE(DescribeS3Auth("s3://bkt")->find("  requests: unsigned (S3_UNSIGNED is set)\n"),
            std::string::npos);
}

// A fake of S3's region check in front of s3rver (s3rver itself accepts
// any signing region): a request signed for another region than the
// bucket's is refused as S3 refuses it (400 AuthorizationHeaderMalformed
// naming the region); the others are passed to s3rver unchanged, Host
// included, so s3rver verifies their signatures.
class FakeRegionGate {
 public:
  // `redirect_reads`: a GET or HEAD signed for the wrong region gets what S3
  // answers one sent to the wrong regional endpoint: 301 without Location.
  // A GET's names the region only in the body's <Endpoint> (S3 also sends the
  // header below; left out so that the body alone is tested), a HEAD's only
  // in x-amz-bucket-region (a HEAD's answer has no body).
  FakeRegionGate(int s3rver_port, std::string bucket_region, bool redirect_reads = false)
      : s3rver_port_(s3rver_port),
        region_(std::move(bucket_region)),
        redirect_reads_(redirect_reads),
        server_([this](const testing::FakeRequest& r) { return Handle(r); }) {}
  std::string url() const { return server_.url(); }
  int refused() const { return refused_; }

 private:
  testing::FakeResponse Handle(const testing::FakeRequest& req) {
    const std::string auth = req.Header("authorization");
    size_t scope = auth.find("/s3/aws4_request");
    size_t start = auth.rfind('/', scope - 1);
    std::string signed_for = scope == std::string::npos || start == std::string::npos
                                 ? "" : auth.substr(start + 1, scope - start - 1);
    if (signed_for != region_ && redirect_reads_ && req.method == "HEAD") {
      ++refused_;
      return {301, {{"x-amz-bucket-region", region_}}, ""};
    }
    if (signed_for != region_ && redirect_reads_ && req.method == "GET") {
      ++refused_;
      return {301, {{"content-type", "application/xml"}},
              "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>PermanentRedirect</Code>"
              "<Message>The bucket you are attempting to access must be addressed using the "
              "specified endpoint.</Message><Endpoint>other.s3." + region_ +
              ".amazonaws.com</Endpoint><Bucket>other</Bucket></Error>"};
    }
    if (signed_for != region_) {
      ++refused_;
      return {400, {{"content-type", "application/xml"}},
              "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>AuthorizationHeaderMalformed"
              "</Code><Message>The authorization header is malformed; the region '" + signed_for +
              "' is wrong; expecting '" + region_ + "'</Message><Region>" + region_ +
              "</Region><RequestId>fake</RequestId></Error>"};
    }
    return Forward(req);
  }

  // Sends `req` byte for byte (its Host included) to s3rver over a fresh
  // connection and reads the answer (Content-Length framed, as s3rver sends).
  testing::FakeResponse Forward(const testing::FakeRequest& req) {
    std::string raw = req.method + " " + req.target + " HTTP/1.1\r\n";
    for (const auto& [name, value] : req.headers) {
      if (name != "connection") raw += name + ": " + value + "\r\n";
    }
    raw += "connection: close\r\n\r\n" + req.body;
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(s3rver_port_));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    std::string answer;
    if (fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
        ::send(fd, raw.data(), raw.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(raw.size())) {
      char buf[65536];
      for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) answer.append(buf, static_cast<size_t>(n));
    }
    if (fd >= 0) ::close(fd);
    size_t head_end = answer.find("\r\n\r\n");
    if (answer.size() < 12 || head_end == std::string::npos) return {502, {}, ""};
    testing::FakeResponse out{std::atoi(answer.c_str() + 9), {}, answer.substr(head_end + 4)};
    std::string head = answer.substr(0, head_end);
    for (size_t pos = head.find("\r\n"); pos != std::string::npos;) {
      size_t next = head.find("\r\n", pos + 2);
      std::string line = head.substr(pos + 2, next == std::string::npos ? std::string::npos : next - pos - 2);
      size_t colon = line.find(':');
      std::string name = AsciiToLower(line.substr(0, colon));
      // A HEAD's answer states the object's size only in Content-Length.
      if (colon != std::string::npos && (name == "etag" || name == "content-type" ||
                                         (name == "content-length" && req.method == "HEAD"))) {
        out.headers.emplace_back(name == "content-length" ? "Content-Length" : name,
                                 line.substr(colon + 2));
      }
      pos = next;
    }
    return out;
  }

  int s3rver_port_;
  std::string region_;
  bool redirect_reads_;
  std::atomic<int> refused_{0};
  testing::FakeHttpServer server_;
};

TEST_F(S3StoreTest, BucketInAnotherRegionIsFollowedAndRemembered) {
  FakeRegionGate gate(server_->port(), "eu-west-1");
  ScopedEnv env("S3_ENDPOINT_URL", gate.url());
  auto store = Open("s3://other");
  ASSERT_NE(store, nullptr);
  // Signed for us-east-1 (no region configured), refused once, re-signed.
  Status put = loop_.Run(store->Put("far.txt", "far away"));
  ASSERT_TRUE(put.ok()) << put.ToString() << "\n" << server_->Log();
  EXPECT_EQ(gate.refused(), 1);
  auto got = loop_.Run(store->Get("far.txt"));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, "far away");
  auto list = loop_.Run(store->List(""));
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  EXPECT_EQ(gate.refused(), 1);  // the store signs for eu-west-1 from then on
  // So does every later store of the bucket in this process.
  auto again = Open("s3://other");
  ASSERT_TRUE(loop_.Run(again->Get("far.txt")).ok());
  EXPECT_EQ(gate.refused(), 1);
}

TEST_F(S3StoreTest, ReadFromAnotherRegionFollowsA301WithoutLocation) {
  auto direct = Open("s3://other");  // s3rver itself takes any region
  ASSERT_NE(direct, nullptr);
  ASSERT_TRUE(loop_.Run(direct->Put("moved.txt", "in eu-central-1")).ok());
  FakeRegionGate gate(server_->port(), "eu-central-1", /*redirect_reads=*/true);
  ScopedEnv env("S3_ENDPOINT_URL", gate.url());
  auto store = Open("s3://other");
  ASSERT_NE(store, nullptr);
  auto got = loop_.Run(store->Get("moved.txt"));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, "in eu-central-1");
  EXPECT_EQ(gate.refused(), 1);  // one 301, then signed for eu-central-1
}

TEST_F(S3StoreTest, HeadFromAnotherRegionFollowsA301ByItsRegionHeader) {
  auto direct = Open("s3://other");  // s3rver itself takes any region
  ASSERT_NE(direct, nullptr);
  ASSERT_TRUE(loop_.Run(direct->Put("headed.txt", "in ap-northeast-2")).ok());
  FakeRegionGate gate(server_->port(), "ap-northeast-2", /*redirect_reads=*/true);
  ScopedEnv env("S3_ENDPOINT_URL", gate.url());
  auto store = Open("s3://other");
  ASSERT_NE(store, nullptr);
  auto head = loop_.Run(store->Head("headed.txt"));
  ASSERT_TRUE(head.ok()) << head.status().ToString();
  EXPECT_EQ(head->size, 17u);
  EXPECT_EQ(gate.refused(), 1);  // one 301, then signed for ap-northeast-2
  auto got = loop_.Run(store->Get("headed.txt"));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, "in ap-northeast-2");
  // Remembered for the bucket: a later store of it signs right at once.
  auto again = Open("s3://other");
  auto head_again = loop_.Run(again->Head("headed.txt"));
  ASSERT_TRUE(head_again.ok()) << head_again.status().ToString();
  EXPECT_EQ(gate.refused(), 1);
}

TEST(S3UrlQueryTest, AQueryIsRefusedWithoutEchoingIt) {
  EventLoop loop;
  ScopedEnv env(std::map<std::string, std::optional<std::string>>{{"S3_UNSIGNED", "1"}});
  auto store = OpenStore("s3://bkt/auth?X-Amz-Signature=f00dfeed", loop.executor());
  EXPECT_EQ(store.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store.status().message(), "s3://bkt/auth: a s3:// URL takes no query");
}

TEST(BucketRegionTest, RegionsS3NamesInItsErrors) {
  EXPECT_EQ(RegionNamedByS3Error("<Error><Code>AuthorizationHeaderMalformed</Code>"
                                 "<Region>ap-southeast-2</Region></Error>"),
            "ap-southeast-2");
  EXPECT_EQ(RegionNamedByS3Error("<Error><Code>PermanentRedirect</Code><Endpoint>"
                                 "bkt.s3.eu-central-1.amazonaws.com</Endpoint></Error>"),
            "eu-central-1");
  EXPECT_EQ(RegionNamedByS3Error("<Error><Code>PermanentRedirect</Code><Endpoint>"
                                 "bkt.s3-us-west-2.amazonaws.com</Endpoint></Error>"),
            "us-west-2");
  EXPECT_EQ(RegionNamedByS3Error("<Error><Code>PermanentRedirect</Code><Endpoint>"
                                 "bkt.s3.amazonaws.com</Endpoint></Error>"),
            "us-east-1");
  EXPECT_EQ(RegionNamedByS3Error("<Error><Code>AccessDenied</Code><Region>x</Region></Error>"),
            std::nullopt);
  EXPECT_EQ(RegionNamedByS3Error("<Error><Code>PermanentRedirect</Code><Region>Not A Region"
                                 "</Region><Endpoint>evil.example.com</Endpoint></Error>"),
            std::nullopt);
}

TEST_F(S3StoreTest, ProfileFromSharedFilesSignsToo) {
  std::string creds = dir_->path() + "/credentials";
  std::string config = dir_->path() + "/config";
  ASSERT_TRUE(WriteFileAtomic(creds, std::string("[default]\naws_access_key_id = nope\n"
                                                 "aws_secret_access_key = nope\n\n[test]\n"
                                                 "aws_access_key_id = ") +
                                         kKeyId + "\naws_secret_access_key=" + kSecret + "\n")
                  .ok());
  ASSERT_TRUE(WriteFileAtomic(config, "[profile test]\nregion = eu-west-3\ns3 =\n  addressing_style = path\n").ok());
  ScopedEnv env(std::map<std::string, std::optional<std::string>>{{"AWS_ACCESS_KEY_ID", std::nullopt},
                 {"AWS_SECRET_ACCESS_KEY", std::nullopt},
                 {"AWS_PROFILE", "test"},
                 {"AWS_SHARED_CREDENTIALS_FILE", creds},
                 {"AWS_CONFIG_FILE", config}});
  auto settings = LoadAwsSettings();
  ASSERT_TRUE(settings.ok()) << settings.status().ToString();
  auto chain = MakeAwsCredentialChain(*settings);
  auto credential = chain->Fetch(0);
  ASSERT_TRUE(credential.ok()) << credential.status().ToString();
  EXPECT_EQ(credential->keys.access_key_id, kKeyId);
  EXPECT_EQ(credential->source, "shared credentials file (profile 'test')");
  EXPECT_EQ(settings->region, "eu-west-3");
  auto store = Open("s3://bkt");
  ASSERT_TRUE(loop_.Run(store->Put("profile.txt", "p")).ok());
  {
    ScopedEnv region("AWS_REGION", "ap-south-1");
    EXPECT_EQ(LoadAwsSettings()->region, "ap-south-1");
  }
  ScopedEnv bad("AWS_PROFILE", "absent");
  auto absent = LoadAwsSettings();
  EXPECT_EQ(absent.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(absent.status().message().find("'absent'"), std::string::npos);
}

TEST(S3UrlTest, MalformedUrlsAndOciSettings) {
  EventLoop loop;
  auto env = CleanStoreEnv();
  env["AWS_ACCESS_KEY_ID"] = "k";
  env["AWS_SECRET_ACCESS_KEY"] = "s";
  ScopedEnv scoped(env);
  EXPECT_EQ(OpenStore("s3://", loop.executor()).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(OpenStore("s3:///key", loop.executor()).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(OpenStore("s3://b k/x", loop.executor()).status().code(), StatusCode::kInvalidArgument);
  auto oci = OpenStore("oci://bucket/x", loop.executor());
  EXPECT_EQ(oci.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(oci.status().message().find("OCI_REGION"), std::string::npos);
  ScopedEnv region("OCI_REGION", "us-ashburn-1");
  auto no_ns = OpenStore("oci://bucket/x", loop.executor());
  EXPECT_NE(no_ns.status().message().find("OCI_NAMESPACE"), std::string::npos);
  ScopedEnv ns("OCI_NAMESPACE", "tenancy");
  auto ok = OpenStore("oci://bucket/x", loop.executor());
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ((*ok)->root(), "oci://bucket/x");
  ScopedEnv bad_endpoint("S3_ENDPOINT_URL", "ftp://x");
  auto bad = OpenStore("s3://bucket", loop.executor());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("S3_ENDPOINT_URL"), std::string::npos);
}

TEST(XmlLiteTest, ElementsAndEntities) {
  std::string xml =
      "<R><KeyCount>2</KeyCount><Contents><Key>a&amp;b&#x20;&#65;</Key></Contents>"
      "<Contents ><Key>z</Key></Contents><Empty/></R>";
  auto contents = XmlElements(xml, "Contents");
  ASSERT_EQ(contents.size(), 2u);
  EXPECT_EQ(XmlFirst(contents[0], "Key"), "a&amp;b&#x20;&#65;");
  EXPECT_EQ(*XmlUnescape(XmlFirst(contents[0], "Key")), "a&b A");
  EXPECT_EQ(XmlFirst(xml, "Key"), "a&amp;b&#x20;&#65;");  // not <KeyCount>
  EXPECT_EQ(XmlElements(xml, "Empty").size(), 1u);
  EXPECT_EQ(XmlUnescape("&bogus;").status().code(), StatusCode::kCorrupt);
  EXPECT_EQ(XmlUnescape("&#0;").status().code(), StatusCode::kCorrupt);
  EXPECT_EQ(XmlEscape("<a&'\">"), "&lt;a&amp;&apos;&quot;&gt;");
}

}  // namespace
}  // namespace sluice
