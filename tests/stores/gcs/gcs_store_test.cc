// gs:// with OAuth2 service-account tokens, metadata-server tokens and HMAC
// keys. No real server checks any of them here, so all run against FakeGcs:
// a fake token endpoint that verifies the RS256 JWT with the key's public
// half, a fake metadata server that demands Metadata-Flavor, and a fake
// XML-API object server that demands the bearer token (or a GOOG4
// Authorization header).
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <gtest/gtest.h>

#include "base/file.h"
#include "engine/runtime/event_loop.h"
#include "formats/json/py_json.h"
#include "stores/credentials/gcs_credential.h"
#include "stores/credentials/gcs_metadata_server.h"
#include "stores/credentials/gcs_service_account.h"
#include "stores/signing/digest.h"
#include "stores/store.h"
#include "tests/stores/common/fake_http_server.h"
#include "tests/stores/common/node_servers.h"
#include "tests/stores/common/range_only_checks.h"
#include "tests/stores/http/test_servers.h"

namespace sluice {
namespace {

using testing::CleanStoreEnv;
using testing::FakeHttpServer;
using testing::FakeRequest;
using testing::FakeResponse;
using testing::ScopedEnv;
using testing::TempDir;

struct RsaKey {
  std::string private_pem, public_pem;
};

RsaKey MakeRsaKey() {
  EVP_PKEY* pkey = EVP_RSA_gen(2048);
  RsaKey out;
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(bio, pkey, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  out.private_pem.assign(data, static_cast<size_t>(n));
  BIO_free(bio);
  bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PUBKEY(bio, pkey);
  n = BIO_get_mem_data(bio, &data);
  out.public_pem.assign(data, static_cast<size_t>(n));
  BIO_free(bio);
  EVP_PKEY_free(pkey);
  return out;
}

std::string FromBase64Url(std::string s) {
  for (char& c : s) {
    if (c == '-') c = '+';
    if (c == '_') c = '/';
  }
  while (s.size() % 4 != 0) s += '=';
  std::string out;
  Base64Decode(s, &out);
  return out;
}

bool VerifyRs256(const std::string& public_pem, const std::string& input, const std::string& sig) {
  BIO* bio = BIO_new_mem_buf(public_pem.data(), static_cast<int>(public_pem.size()));
  EVP_PKEY* pkey = PEM_read_bio_PUBKEY(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  bool ok = EVP_DigestVerifyInit(ctx, nullptr, EVP_sha256(), nullptr, pkey) == 1 &&
            EVP_DigestVerify(ctx, reinterpret_cast<const unsigned char*>(sig.data()), sig.size(),
                             reinterpret_cast<const unsigned char*>(input.data()),
                             input.size()) == 1;
  EVP_MD_CTX_free(ctx);
  EVP_PKEY_free(pkey);
  return ok;
}

// The fake GCS: POST /token (OAuth2 JWT-bearer grant), GET
// /computeMetadata/v1/... (metadata server) and GET/HEAD /bucket/key (XML
// API objects).
class FakeGcs {
 public:
  explicit FakeGcs(std::string public_pem)
      : public_pem_(std::move(public_pem)),
        server_([this](const FakeRequest& r) { return Handle(r); }) {}

  std::string url() const { return server_.url(); }
  int port() const { return server_.port(); }
  int token_requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return token_requests_;
  }
  std::string last_authorization() {
    std::lock_guard<std::mutex> lock(mu_);
    return last_authorization_;
  }
  int metadata_requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return metadata_requests_;
  }
  // The claims of the last JWT the token endpoint accepted.
  std::string last_jwt_claims() {
    std::lock_guard<std::mutex> lock(mu_);
    return last_jwt_claims_;
  }
  // The object data/peek.bin, which serves Range.
  const std::string peek_bytes = testing::PatternBytes(20000, 31);
  // Atomic: tests change them while the server thread reads them.
  std::atomic<int> expires_in{3600};
  std::atomic<bool> reject_tokens{false};
  // How long the token endpoint takes to answer.
  std::atomic<int> token_delay_ms{0};

 private:
  FakeResponse Handle(const FakeRequest& r) {
    if (r.target == "/token" && token_delay_ms > 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(token_delay_ms.load()));
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (r.target == "/token") {
      ++token_requests_;
      if (reject_tokens) return {401, {}, "{\"error\":\"invalid_grant\"}"};
      const std::string prefix =
          "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=";
      if (r.method != "POST" || r.body.compare(0, prefix.size(), prefix) != 0) {
        return {400, {}, "bad grant"};
      }
      std::string jwt = r.body.substr(prefix.size());
      size_t dot2 = jwt.rfind('.');
      if (dot2 == std::string::npos ||
          !VerifyRs256(public_pem_, jwt.substr(0, dot2), FromBase64Url(jwt.substr(dot2 + 1)))) {
        return {401, {}, "bad signature"};
      }
      size_t dot1 = jwt.find('.');
      last_jwt_claims_ = FromBase64Url(jwt.substr(dot1 + 1, dot2 - dot1 - 1));
      token_ = "ya29.fake-token-" + std::to_string(token_requests_);
      return {200,
              {{"Content-Type", "application/json"}},
              "{\"access_token\": \"" + token_ + "\", \"expires_in\": " +
                  std::to_string(expires_in) + ", \"token_type\": \"Bearer\"}"};
    }
    if (r.target ==
        "/computeMetadata/v1/instance/service-accounts/default/token?scopes="
        "https%3A%2F%2Fwww.googleapis.com%2Fauth%2Fdevstorage.read_write") {
      ++metadata_requests_;
      if (r.method != "GET" || r.Header("metadata-flavor") != "Google") {
        return {403, {}, "Missing Metadata-Flavor:Google header."};
      }
      if (reject_tokens) return {404, {}, "no service account"};
      token_ = "ya29.metadata-token-" + std::to_string(metadata_requests_);
      return {200,
              {{"Content-Type", "application/json"}, {"Metadata-Flavor", "Google"}},
              "{\"access_token\":\"" + token_ + "\",\"expires_in\":" +
                  std::to_string(expires_in) + ",\"token_type\":\"Bearer\"}"};
    }
    last_authorization_ = r.Header("authorization");
    bool bearer_ok = !token_.empty() && last_authorization_ == "Bearer " + token_;
    bool hmac_ok = last_authorization_.rfind("GOOG4-HMAC-SHA256 Credential=GOOGKEY/", 0) == 0 &&
                   !r.Header("x-goog-date").empty() &&
                   !r.Header("x-goog-content-sha256").empty();
    if (!bearer_ok && !hmac_ok) return {401, {}, "<Error><Code>AuthenticationRequired</Code></Error>"};
    // a.txt ignores Range (200, the whole object); peek.bin serves it.
    if (r.target == "/bkt/data/a.txt") return {200, {}, "hello gcs"};
    if (r.target == "/bkt/data/peek.bin") return Ranged(peek_bytes, r.Header("range"));
    return {404, {}, "<Error><Code>NoSuchKey</Code></Error>"};
  }

  // A 206 with bytes=<first>-<last> of `bytes` (a 200 without Range).
  static FakeResponse Ranged(const std::string& bytes, const std::string& range) {
    unsigned long long first = 0, last = 0;
    if (range.empty()) return {200, {}, bytes};
    if (std::sscanf(range.c_str(), "bytes=%llu-%llu", &first, &last) != 2 || last < first ||
        first >= bytes.size()) {
      return {416, {}, ""};
    }
    last = std::min<unsigned long long>(last, bytes.size() - 1);
    return {206,
            {{"Content-Range", "bytes " + std::to_string(first) + "-" + std::to_string(last) +
                                   "/" + std::to_string(bytes.size())}},
            bytes.substr(first, last - first + 1)};
  }

  std::string public_pem_;
  std::mutex mu_;
  int token_requests_ = 0;
  int metadata_requests_ = 0;
  std::string token_;
  std::string last_authorization_;
  std::string last_jwt_claims_;
  FakeHttpServer server_;  // last: stops before the members it uses go
};

class GcsStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    key_ = MakeRsaKey();
    fake_ = std::make_unique<FakeGcs>(key_.public_pem);
    key_file_ = dir_.path() + "/sa.json";
    std::string json = "{\"type\": \"service_account\", \"client_email\": \"loader@proj.iam.gserviceaccount.com\", "
                       "\"private_key_id\": \"kid1\", \"private_key\": ";
    std::string pem_json;
    ASSERT_TRUE(AppendPyJsonString(pem_json, key_.private_pem).ok());
    json += pem_json + ", \"token_uri\": \"" + fake_->url() + "/token\"}";
    ASSERT_TRUE(WriteFileAtomic(key_file_, json).ok());
    auto env = CleanStoreEnv();
    env["GOOGLE_APPLICATION_CREDENTIALS"] = key_file_;
    env["GCS_ENDPOINT_URL"] = fake_->url();
    env_ = std::make_unique<ScopedEnv>(env);
  }
  std::unique_ptr<Store> Open(const std::string& url) {
    StoreOptions options;
    options.download_retry = 0;
    auto store = OpenStore(url, loop_.executor(), options);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(store).value() : nullptr;
  }
  TempDir dir_;
  RsaKey key_;
  std::unique_ptr<FakeGcs> fake_;
  std::string key_file_;
  std::unique_ptr<ScopedEnv> env_;
  EventLoop loop_;
};

TEST_F(GcsStoreTest, ServiceAccountTokenIsFetchedOnceAndCached) {
  auto store = Open("gs://bkt/data");
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->root(), "gs://bkt/data");
  auto got = loop_.Run(store->Get("a.txt"));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, "hello gcs");
  auto head = loop_.Run(store->Head("a.txt"));
  ASSERT_TRUE(head.ok()) << head.status().ToString();
  EXPECT_EQ(head->size, 9u);
  EXPECT_EQ(fake_->token_requests(), 1);
  EXPECT_EQ(fake_->last_authorization(), "Bearer ya29.fake-token-1");
  auto claims = ParsePyJson(fake_->last_jwt_claims());
  ASSERT_TRUE(claims.ok()) << fake_->last_jwt_claims();
  EXPECT_NE(fake_->last_jwt_claims().find("\"iss\":\"loader@proj.iam.gserviceaccount.com\""),
            std::string::npos);
  // Google's endpoint, not token_uri: google-auth's audience.
  EXPECT_NE(fake_->last_jwt_claims().find("\"aud\":\"https://oauth2.googleapis.com/token\""),
            std::string::npos);
  EXPECT_NE(fake_->last_jwt_claims().find("devstorage.read_write"), std::string::npos);
  auto missing = loop_.Run(store->Get("nope"));
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("gs://bkt/data/nope"), std::string::npos);
}

// The first token is fetched while the store's event loop keeps running
// (the refresher thread fetches it; the request's coroutine waits on a
// timer): a ticker on the same loop ticks through the 400 ms the token
// endpoint takes. Were the loop thread blocked, it could tick at most once.
TEST_F(GcsStoreTest, FirstTokenIsFetchedOffTheEventLoop) {
  fake_->token_delay_ms = 400;
  auto store = Open("gs://bkt/data");
  ASSERT_NE(store, nullptr);
  struct Ticks {
    bool done = false;
    int during_get = 0;
  };
  auto ticks = std::make_shared<Ticks>();
  auto got = loop_.Run([&]() -> boost::asio::awaitable<Result<std::string>> {
    auto executor = co_await boost::asio::this_coro::executor;
    boost::asio::co_spawn(
        executor,
        [ticks]() -> boost::asio::awaitable<void> {
          boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor);
          while (!ticks->done) {
            timer.expires_after(std::chrono::milliseconds(10));
            co_await timer.async_wait(boost::asio::use_awaitable);
            if (!ticks->done) ++ticks->during_get;
          }
        },
        boost::asio::detached);
    auto result = co_await store->Get("a.txt");
    ticks->done = true;
    co_return result;
  }());
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, "hello gcs");
  EXPECT_EQ(fake_->token_requests(), 1);
  EXPECT_GE(ticks->during_get, 5);  // ~40 on an idle machine
}

// A token living less than the one-minute margin still serves the first
// half of its life (MinValidityIsAtMostHalfTheLifetime has the exact times).
TEST_F(GcsStoreTest, ShortLivedTokenServesTwoRequests) {
  fake_->expires_in = 30;
  auto store = Open("gs://bkt/data");
  ASSERT_TRUE(loop_.Run(store->Get("a.txt")).ok());
  ASSERT_TRUE(loop_.Run(store->Get("a.txt")).ok());
  EXPECT_EQ(fake_->token_requests(), 1);
  EXPECT_EQ(fake_->last_authorization(), "Bearer ya29.fake-token-1");
}

TEST_F(GcsStoreTest, RejectedGrantIsPermissionDeniedWithoutSecrets) {
  fake_->reject_tokens = true;
  auto store = Open("gs://bkt/data");
  auto got = loop_.Run(store->Get("a.txt"));
  EXPECT_EQ(got.status().code(), StatusCode::kPermissionDenied) << got.status().ToString();
  EXPECT_NE(got.status().message().find("gs://bkt/data: GOOGLE_APPLICATION_CREDENTIALS: " +
                                        key_file_ + ": OAuth2 token exchange for service account "
                                        "loader@proj.iam.gserviceaccount.com failed"),
            std::string::npos)
      << got.status().message();
  EXPECT_NE(got.status().message().find("401"), std::string::npos);
  EXPECT_EQ(got.status().message().find("PRIVATE KEY"), std::string::npos);
  EXPECT_EQ(got.status().message().find("assertion"), std::string::npos);
}

TEST_F(GcsStoreTest, HmacKeysSignGoog4) {
  ScopedEnv env(std::map<std::string, std::optional<std::string>>{
      {"GCS_KEY", "GOOGKEY"}, {"GCS_SECRET", "hmac-secret-never-sent"}});
  auto store = Open("gs://bkt/data");
  auto got = loop_.Run(store->Get("a.txt"));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, "hello gcs");
  EXPECT_EQ(fake_->token_requests(), 0);
  std::string auth = fake_->last_authorization();
  EXPECT_NE(auth.find("/auto/storage/goog4_request"), std::string::npos) << auth;
  EXPECT_EQ(auth.find("hmac-secret-never-sent"), std::string::npos);
}

// GetRangeOnly (the S3-compatible store's, signed with HMAC keys): a fake
// that ignores Range is refused where GetRange cuts the range out of its
// 200; one that serves Range gives the exact bytes, and the head of a 200
// ends the request (see range_only_checks.h).
TEST_F(GcsStoreTest, GetRangeOnlyStopsAtTheHeadOfA200) {
  ScopedEnv env(std::map<std::string, std::optional<std::string>>{
      {"GCS_KEY", "GOOGKEY"}, {"GCS_SECRET", "hmac-secret-never-sent"}});
  auto store = Open("gs://bkt/data");
  ASSERT_NE(store, nullptr);
  auto refused = loop_.Run(store->GetRangeOnly("a.txt", 1, 4));
  EXPECT_EQ(refused.status().code(), StatusCode::kUnimplemented) << refused.status().ToString();
  EXPECT_NE(refused.status().message().find("gs://bkt/data/a.txt: the server ignored Range"),
            std::string::npos)
      << refused.status().ToString();
  auto cut = loop_.Run(store->GetRange("a.txt", 1, 4));
  ASSERT_TRUE(cut.ok()) << cut.status().ToString();
  EXPECT_EQ(*cut, "ello");

  testing::FaultProxy proxy(fake_->port());
  ScopedEnv via("GCS_ENDPOINT_URL", "http://127.0.0.1:" + std::to_string(proxy.port()));
  StoreOptions options;
  options.download_retry = 0;
  options.read_timeout_s = 30;
  auto proxied = OpenStore("gs://bkt/data", loop_.executor(), options);
  ASSERT_TRUE(proxied.ok()) << proxied.status().ToString();
  testing::ExpectGetRangeOnlyStopsAtTheHeadOfA200(loop_, **proxied, proxy, "peek.bin",
                                                  fake_->peek_bytes);
}

// Without a key in the environment, a GCE VM's (or GKE workload's) own
// service account: tokens from the metadata server, cached like the others.
TEST_F(GcsStoreTest, MetadataServerTokenWithoutAKey) {
  std::string host = fake_->url().substr(std::string("http://").size());
  ScopedEnv env(std::map<std::string, std::optional<std::string>>{
      {"GOOGLE_APPLICATION_CREDENTIALS", std::nullopt}, {"GCE_METADATA_HOST", host}});
  auto store = Open("gs://bkt/data");
  ASSERT_NE(store, nullptr);
  auto got = loop_.Run(store->Get("a.txt"));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, "hello gcs");
  ASSERT_TRUE(loop_.Run(store->Head("a.txt")).ok());
  EXPECT_EQ(fake_->metadata_requests(), 1);
  EXPECT_EQ(fake_->token_requests(), 0);
  EXPECT_EQ(fake_->last_authorization(), "Bearer ya29.metadata-token-1");

  // A store opened once the first is gone fetches its own token (while a
  // store holds it, the token is shared: TwoStoresShareOneToken).
  store.reset();
  fake_->expires_in = 30;  // short-lived: serves half its life, both requests
  auto fresh = Open("gs://bkt/data");
  ASSERT_TRUE(loop_.Run(fresh->Get("a.txt")).ok());
  ASSERT_TRUE(loop_.Run(fresh->Get("a.txt")).ok());
  EXPECT_EQ(fake_->metadata_requests(), 2);
  EXPECT_EQ(fake_->last_authorization(), "Bearer ya29.metadata-token-2");
}

// Stores of one process with the same key (or metadata server) share one
// token: one fetch for all of them.
TEST_F(GcsStoreTest, TwoStoresShareOneToken) {
  auto a = Open("gs://bkt/data");
  auto b = Open("gs://bkt");
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(loop_.Run(a->Get("a.txt")).ok());
  auto got = loop_.Run(b->Get("data/a.txt"));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, "hello gcs");
  EXPECT_EQ(fake_->token_requests(), 1);
  EXPECT_EQ(fake_->last_authorization(), "Bearer ya29.fake-token-1");

  std::string host = fake_->url().substr(std::string("http://").size());
  ScopedEnv env(std::map<std::string, std::optional<std::string>>{
      {"GOOGLE_APPLICATION_CREDENTIALS", std::nullopt}, {"GCE_METADATA_HOST", host}});
  auto c = Open("gs://bkt/data");
  auto d = Open("gs://bkt");
  ASSERT_TRUE(loop_.Run(c->Head("a.txt")).ok());
  ASSERT_TRUE(loop_.Run(d->Head("data/a.txt")).ok());
  EXPECT_EQ(fake_->metadata_requests(), 1);
  EXPECT_EQ(fake_->last_authorization(), "Bearer ya29.metadata-token-1");
}

// The service-account token on a fake clock (no background thread): a
// failed first fetch is tried again after the backoff, and the token is
// refreshed 300 s ahead of its expiry with a JWT issued at the clock's time.
TEST_F(GcsStoreTest, ServiceAccountTokenRetriedAndRefreshedAheadOfExpiry) {
  auto text = ReadFile(key_file_, 1 << 20);
  ASSERT_TRUE(text.ok());
  auto key = ParseServiceAccountKey(*text, key_file_);
  ASSERT_TRUE(key.ok()) << key.status().ToString();
  std::atomic<int64_t> now{1700000000};
  SharedCredentialOptions options = GcsTokenOptions();
  options.clock = [&now] { return now.load(); };
  options.background = false;
  SharedCredential credential(MakeGcsServiceAccountChain(*key), options);

  fake_->reject_tokens = true;
  auto rejected = credential.Get();
  EXPECT_EQ(rejected.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(rejected.status().message().find("service account loader@proj"), std::string::npos)
      << rejected.status().message();
  fake_->reject_tokens = false;
  EXPECT_FALSE(credential.Get().ok());  // backing off (1 s): not asked again
  EXPECT_EQ(fake_->token_requests(), 1);

  now = 1700000001;
  auto first = credential.Get();
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->bearer, "ya29.fake-token-2");
  EXPECT_EQ(first->source, "service account loader@proj.iam.gserviceaccount.com");
  EXPECT_EQ(first->expires_at, std::optional<int64_t>(1700003601));
  EXPECT_NE(fake_->last_jwt_claims().find("\"iat\":1700000001,"), std::string::npos)
      << fake_->last_jwt_claims();

  now = 1700003601 - 301;
  EXPECT_FALSE(credential.RefreshIfDue());
  EXPECT_EQ(credential.Get()->bearer, "ya29.fake-token-2");
  now = 1700003601 - 300;
  EXPECT_TRUE(credential.RefreshIfDue());
  EXPECT_EQ(fake_->token_requests(), 3);
  EXPECT_NE(fake_->last_jwt_claims().find("\"iat\":1700003301,"), std::string::npos)
      << fake_->last_jwt_claims();
  auto refreshed = credential.Get();
  ASSERT_TRUE(refreshed.ok()) << refreshed.status().ToString();
  EXPECT_EQ(refreshed->bearer, "ya29.fake-token-3");
  EXPECT_EQ(refreshed->expires_at, std::optional<int64_t>(1700006901));
  EXPECT_EQ(fake_->token_requests(), 3);
}

TEST_F(GcsStoreTest, MetadataServerWithoutATokenIsPermissionDenied) {
  std::string host = fake_->url().substr(std::string("http://").size());
  ScopedEnv env(std::map<std::string, std::optional<std::string>>{
      {"GOOGLE_APPLICATION_CREDENTIALS", std::nullopt}, {"GCE_METADATA_HOST", host}});
  fake_->reject_tokens = true;
  auto store = Open("gs://bkt/data");
  ASSERT_NE(store, nullptr);
  auto got = loop_.Run(store->Get("a.txt"));
  EXPECT_EQ(got.status().code(), StatusCode::kPermissionDenied) << got.status().ToString();
  EXPECT_NE(got.status().message().find("metadata server at " + host), std::string::npos)
      << got.status().message();
  EXPECT_NE(got.status().message().find("404"), std::string::npos) << got.status().message();
  EXPECT_NE(got.status().message().find("GCS_KEY"), std::string::npos) << got.status().message();
}

TEST(GcsSettingsTest, MetadataServerIsExpectedOnGoogleMachinesOrWhenNamed) {
  TempDir dir;
  ScopedEnv env(CleanStoreEnv());
  std::string gce = dir.path() + "/gce", other = dir.path() + "/other";
  ASSERT_TRUE(WriteFileAtomic(gce, "Google Compute Engine\n").ok());
  ASSERT_TRUE(WriteFileAtomic(other, "Standard PC (Q35 + ICH9, 2009)\n").ok());
  EXPECT_EQ(MetadataServerHost(gce), std::optional<std::string>("metadata.google.internal"));
  EXPECT_EQ(MetadataServerHost(other), std::nullopt);
  EXPECT_EQ(MetadataServerHost(dir.path() + "/missing"), std::nullopt);
  ScopedEnv named("GCE_METADATA_HOST", "127.0.0.1:8080");
  EXPECT_EQ(MetadataServerHost(other), std::optional<std::string>("127.0.0.1:8080"));
}

TEST(GcsSettingsTest, MissingOrBrokenCredentials) {
  EventLoop loop;
  TempDir dir;
  ScopedEnv env(CleanStoreEnv());
  // No credentials at all: the store opens unsigned, for public buckets
  // (tests/stores/credentials/gcs_adc_test.cc reads one).
  auto none = OpenStore("gs://b/x", loop.executor());
  EXPECT_TRUE(none.ok()) << none.status().ToString();
  // A credentials file is read at the first request: a broken one fails it
  // there, naming the file and the field, before anything is sent.
  std::string file = dir.path() + "/user.json";
  ASSERT_TRUE(WriteFileAtomic(file, "{\"type\": \"authorized_user\"}").ok());
  ScopedEnv creds("GOOGLE_APPLICATION_CREDENTIALS", file);
  auto user = OpenStore("gs://b/x", loop.executor());
  ASSERT_TRUE(user.ok()) << user.status().ToString();
  auto got = loop.Run((*user)->Get("k"));
  EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument) << got.status().ToString();
  EXPECT_NE(got.status().message().find("GOOGLE_APPLICATION_CREDENTIALS: authorized_user "
                                        "credentials in " + file + " has no 'client_id'"),
            std::string::npos)
      << got.status().message();
  // A type that is not a plain word is not quoted: a mangled file may hold
  // key material there (found by gcs_credentials_fuzz).
  auto mangled = ParseServiceAccountKey(
      R"({"type": "service_-----BEGIN PRIVATE KEY-----", "private_key": "k"})", file);
  EXPECT_EQ(mangled.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(mangled.status().message().find("BEGIN"), std::string::npos);
  EXPECT_NE(mangled.status().message().find("another type, expected 'service_account'"),
            std::string::npos);
  ServiceAccountKey key;
  key.client_email = "a@b";
  key.private_key_pem = "-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n";
  key.token_uri = "http://127.0.0.1:1/token";
  auto jwt = MakeServiceAccountJwt(key, kGcsScope, 1700000000);
  EXPECT_EQ(jwt.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(jwt.status().message().find("not a key"), std::string::npos);
}

}  // namespace
}  // namespace sluice
