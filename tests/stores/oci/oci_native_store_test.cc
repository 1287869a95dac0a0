// oci:// through the native Object Storage API (stores/oci/oci_native_store.h)
// against a fake of it (no OCI endpoint can run here) that checks every
// request's signature as Object Storage does: the signing string rebuilt
// from the request (Date, method and target, Host), verified with the API
// key's public key, and the key id.
#include "stores/oci/oci_native_store.h"

#include <openssl/evp.h>
#include <openssl/pem.h>

#include <gtest/gtest.h>

#include <ctime>
#include <map>
#include <mutex>
#include <functional>
#include <string>
#include <vector>

#include "base/file.h"
#include "engine/runtime/event_loop.h"
#include "formats/json/py_json.h"
#include "stores/signing/digest.h"
#include "stores/signing/jwt_rs256.h"
#include "stores/signing/oci_signature.h"
#include "stores/signing/uri_encoding.h"
#include "stores/store.h"
#include "tests/common/scoped_env.h"
#include "tests/common/temp_dir.h"
#include "tests/stores/common/fake_http_server.h"
#include "tests/stores/common/fake_oci_identity.h"
#include "tests/stores/common/node_servers.h"
#include "tests/stores/http/test_servers.h"

namespace sluice {
namespace {

// The fake's etag of an object: changes with its bytes.
std::string EtagOf(const std::string& bytes) {
  return "etag-" + std::to_string(std::hash<std::string>{}(bytes));
}

using testing::CleanStoreEnv;
using testing::FakeHttpServer;
using testing::FakeOciIdentity;
using testing::MakeTestCertificate;
using testing::FakeRequest;
using testing::FakeResponse;
using testing::PatternBytes;
using testing::ScopedEnv;
using testing::TempDir;

const std::string kKeyDir = std::string(SLUICE_TEST_DATA_DIR) + "/oci";
constexpr char kKeyId[] = "ocid1.tenancy.oc1..t/ocid1.user.oc1..u/aa:bb:cc";

// `pem`: a private key, or a public key ("BEGIN PUBLIC KEY").
bool VerifySignature(const std::string& pem, const std::string& data, const std::string& sig) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  EVP_PKEY* key = pem.find("BEGIN PUBLIC KEY") != std::string::npos
                      ? PEM_read_bio_PUBKEY(bio, nullptr, nullptr, nullptr)
                      : PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  bool ok = key != nullptr && EVP_DigestVerifyInit(ctx, nullptr, EVP_sha256(), nullptr, key) == 1 &&
            EVP_DigestVerify(ctx, reinterpret_cast<const unsigned char*>(sig.data()), sig.size(),
                             reinterpret_cast<const unsigned char*>(data.data()), data.size()) == 1;
  EVP_MD_CTX_free(ctx);
  EVP_PKEY_free(key);
  return ok;
}

class FakeObjectStorage {
 public:
  explicit FakeObjectStorage(std::string pem)
      : pem_(std::move(pem)), server_([this](const FakeRequest& r) { return Handle(r); }) {}
  std::string url() const { return server_.url(); }
  void Put(const std::string& name, std::string bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    objects_[name] = std::move(bytes);
  }
  int refused() {
    std::lock_guard<std::mutex> lock(mu_);
    return refused_;
  }
  void set_key_id(std::string id) {
    std::lock_guard<std::mutex> lock(mu_);
    key_id_ = std::move(id);
  }
  // Requests must be signed with the token `identity` issued last and its
  // session key (an instance principal's).
  void set_identity(FakeOciIdentity* identity) {
    std::lock_guard<std::mutex> lock(mu_);
    identity_ = identity;
  }
  int page_size = 1000;

 private:
  FakeResponse Handle(const FakeRequest& r) {
    std::lock_guard<std::mutex> lock(mu_);
    if (identity_ != nullptr) {
      key_id_ = "ST$" + identity_->last_token();
      pem_ = identity_->last_session_public_pem();
    }
    const std::string auth = r.Header("authorization");
    // A POST signs its body as well (the SDK's body signer); GET, HEAD,
    // DELETE and the PUTs of PutObject and UploadPart do not.
    const bool body_signed = r.method == "POST";
    const std::string prefix = std::string("Signature algorithm=\"rsa-sha256\",headers=\"date "
                                           "(request-target) host") +
                               (body_signed ? " content-length content-type x-content-sha256" : "") +
                               "\",keyId=\"" + key_id_ + "\",signature=\"";
    const std::string tail = "\",version=\"1\"";
    std::string sig;
    std::string lower = r.method;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string signing = "date: " + r.Header("date") + "\n(request-target): " + lower + " " +
                          r.target + "\nhost: " + r.Header("host");
    if (body_signed) {
      signing += "\ncontent-length: " + r.Header("content-length") +
                 "\ncontent-type: " + r.Header("content-type") +
                 "\nx-content-sha256: " + r.Header("x-content-sha256");
    }
    if ((body_signed && (r.Header("x-content-sha256") != Base64Encode(Sha256(r.body)) ||
                         r.Header("content-length") != std::to_string(r.body.size()))) ||
        auth.rfind(prefix, 0) != 0 || auth.size() < prefix.size() + tail.size() ||
        auth.compare(auth.size() - tail.size(), tail.size(), tail) != 0 ||
        !Base64Decode(auth.substr(prefix.size(), auth.size() - prefix.size() - tail.size()), &sig) ||
        r.Header("date").empty() || !VerifySignature(pem_, signing, sig)) {
      ++refused_;
      return {401, {{"Content-Type", "application/json"}},
              "{\"code\": \"NotAuthenticated\", \"message\": \"The required information to "
              "complete authentication was not provided or was incorrect.\"}"};
    }
    std::string target = r.target, query;
    if (size_t q = target.find('?'); q != std::string::npos) {
      query = target.substr(q + 1);
      target.resize(q);
    }
    if (target == "/n/") return {200, {{"Content-Type", "application/json"}}, "\"mytenancy\""};
    const std::string base = "/n/mytenancy/b/bkt/o";
    if (target == base) {
      std::map<std::string, std::string> params;
      for (size_t pos = 0; pos < query.size();) {
        size_t amp = query.find('&', pos);
        if (amp == std::string::npos) amp = query.size();
        std::string kv = query.substr(pos, amp - pos);
        size_t eq = kv.find('=');
        params[kv.substr(0, eq)] = PercentDecode(kv.substr(eq + 1));
        pos = amp + 1;
      }
      std::string body = "{\"objects\": [";
      int n = 0;
      std::string next;
      for (auto it = objects_.lower_bound(params["start"]); it != objects_.end(); ++it) {
        if (it->first.rfind(params["prefix"], 0) != 0) continue;
        if (n == page_size) {
          next = it->first;
          break;
        }
        // As OCI: the fields asked for (its etag only when "etag" is).
        const bool etag = ("," + params["fields"] + ",").find(",etag,") != std::string::npos;
        body += (n++ ? ", " : "") + std::string("{\"name\": \"") + it->first +
                "\", \"size\": " + std::to_string(it->second.size()) +
                (etag ? ", \"etag\": \"" + EtagOf(it->second) + "\"" : std::string()) + "}";
      }
      body += "]";
      if (!next.empty()) body += ", \"nextStartWith\": \"" + next + "\"";
      return {200, {{"Content-Type", "application/json"}}, body + "}"};
    }
    if (target.rfind("/n/mytenancy/b/bkt/u", 0) == 0) return Multipart(r, target, query);
    if (target.rfind(base + "/", 0) == 0 && r.method == "PUT") {
      objects_[PercentDecode(target.substr(base.size() + 1))] = r.body;
      return {200, {{"ETag", "e"}}, ""};
    }
    if (target.rfind(base + "/", 0) == 0) {
      auto it = objects_.find(PercentDecode(target.substr(base.size() + 1)));
      if (it == objects_.end()) {
        return {404, {{"Content-Type", "application/json"}},
                "{\"code\": \"ObjectNotFound\", \"message\": \"The object was not found\"}"};
      }
      const std::string& data = it->second;
      const std::string range = r.Header("range");
      if (range.empty() || r.method == "HEAD") {
        return {200, {{"Content-Length", std::to_string(data.size())}}, r.method == "HEAD" ? "" : data};
      }
      const size_t dash = range.find('-');
      const uint64_t first = std::stoull(range.substr(6, dash - 6));
      const uint64_t last = std::min<uint64_t>(std::stoull(range.substr(dash + 1)), data.size() - 1);
      return {206, {{"Content-Range", "bytes " + std::to_string(first) + "-" + std::to_string(last) +
                                          "/" + std::to_string(data.size())}},
              data.substr(first, last - first + 1)};
    }
    return {404, {}, "{\"code\": \"NotFound\"}"};
  }

  // CreateMultipartUpload, UploadPart, CommitMultipartUpload and
  // AbortMultipartUpload, each logged as "<verb> <object> [<part>]".
  FakeResponse Multipart(const FakeRequest& r, const std::string& target, const std::string& query) {
    const std::string u = "/n/mytenancy/b/bkt/u";
    if (target == u && r.method == "POST") {
      auto json = ParsePyJson(r.body);
      const std::string name = json.ok() ? JsonStringMember(*json, "object") : "";
      uploads_["up-" + std::to_string(++upload_count_)] = {name, {}};
      multipart_log_.push_back("create " + name);
      return {200, {{"Content-Type", "application/json"}},
              "{\"uploadId\": \"up-" + std::to_string(upload_count_) + "\", \"object\": \"" + name +
                  "\"}"};
    }
    const std::string name = PercentDecode(target.substr(u.size() + 1));
    std::string id, part;
    for (size_t pos = 0; pos < query.size();) {
      size_t amp = query.find('&', pos);
      if (amp == std::string::npos) amp = query.size();
      const std::string kv = query.substr(pos, amp - pos);
      if (kv.rfind("uploadId=", 0) == 0) id = kv.substr(9);
      if (kv.rfind("uploadPartNum=", 0) == 0) part = kv.substr(14);
      pos = amp + 1;
    }
    auto upload = uploads_.find(id);
    if (upload == uploads_.end() || upload->second.first != name ||
        query != "uploadId=" + id + (part.empty() ? "" : "&uploadPartNum=" + part)) {
      return {404, {{"Content-Type", "application/json"}}, "{\"code\": \"NoSuchUpload\"}"};
    }
    if (r.method == "PUT") {
      multipart_log_.push_back("part " + name + " " + part);
      if (part == fail_part) {
        return {400, {{"Content-Type", "application/json"}},
                "{\"code\": \"InvalidParameter\", \"message\": \"part refused\"}"};
      }
      upload->second.second[std::stoi(part)] = r.body;
      return {200, {{"ETag", "etag-" + part}}, ""};
    }
    if (r.method == "DELETE") {
      multipart_log_.push_back("abort " + name);
      uploads_.erase(upload);
      return {204, {}, ""};
    }
    // Commit: every part listed, in order, with its ETag.
    std::string expected = "{\"partsToCommit\": [";
    std::string bytes;
    for (const auto& [n, data] : upload->second.second) {
      expected += (n > 1 ? ", " : "") + std::string("{\"partNum\": ") + std::to_string(n) +
                  ", \"etag\": \"etag-" + std::to_string(n) + "\"}";
      bytes += data;
    }
    expected += "]}";
    multipart_log_.push_back("commit " + name);
    if (r.body != expected) return {400, {}, "{\"code\": \"InvalidParameter\"}"};
    objects_[name] = bytes;
    uploads_.erase(upload);
    return {200, {{"ETag", "e"}}, ""};
  }

 public:
  std::vector<std::string> multipart_log() {
    std::lock_guard<std::mutex> lock(mu_);
    return multipart_log_;
  }
  size_t open_uploads() {
    std::lock_guard<std::mutex> lock(mu_);
    return uploads_.size();
  }
  std::string fail_part;  // UploadPart of this number answers 400

 private:
  FakeOciIdentity* identity_ = nullptr;
  std::map<std::string, std::pair<std::string, std::map<int, std::string>>> uploads_;
  int upload_count_ = 0;
  std::vector<std::string> multipart_log_;
  std::string pem_;
  std::mutex mu_;
  std::string key_id_ = kKeyId;
  std::map<std::string, std::string> objects_;
  int refused_ = 0;
  FakeHttpServer server_;
};

class OciNativeStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fake_.Put("ds/index.json", "{}");
    fake_.Put("ds/train/shard.00000.mds", PatternBytes(9000, 2));
    fake_.Put("ds/train/shard.00001.mds", "s1");
    fake_.Put("other/x", "x");
    const std::string cfg = dir_.path() + "/oci-config";
    ASSERT_TRUE(WriteFileAtomic(cfg, "[DEFAULT]\nregion = us-ashburn-1\ntenancy = ocid1.tenancy.oc1..t\n\n"
                                     "[loader]\nuser = ocid1.user.oc1..u\nfingerprint = aa:bb:cc\n"
                                     "key_file = " + kKeyDir + "/test_api_key_encrypted.pem\n"
                                     "pass_phrase = test-passphrase\n").ok());
    auto env = CleanStoreEnv();
    env["HOME"] = dir_.path();  // no ~/.oci/config: OCI_CONFIG_FILE is read
    env["OCI_CONFIG_FILE"] = cfg;
    env["OCI_CLI_PROFILE"] = "loader";
    env["SLUICE_OCI_OBJECT_STORAGE_ENDPOINT"] = fake_.url();
    env_ = std::make_unique<ScopedEnv>(env);
  }
  FakeObjectStorage fake_{*ReadFile(kKeyDir + "/test_api_key.pem")};
  TempDir dir_{"oci_native_test"};
  std::unique_ptr<ScopedEnv> env_;
  EventLoop loop_;
};

TEST_F(OciNativeStoreTest, SignedReadsListsAndTheNamespaceAskedOfTheApi) {
  EXPECT_TRUE(WantsOciNativeApi("oci://bkt/ds"));
  StoreOptions options;
  options.part_size = 4000;
  options.list_page_size = 1;
  options.upload_concurrency = 1;  // the parts in order in the fake's log
  auto store = OpenStore("oci://bkt/ds", loop_.executor(), options);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ((*store)->root(), "oci://bkt@mytenancy/ds");
  auto all = loop_.Run((*store)->List(""));
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[1].key, "train/shard.00000.mds");
  EXPECT_EQ((*all)[1].size, 9000u);
  EXPECT_EQ((*all)[1].etag, EtagOf(PatternBytes(9000, 2)));  // asked for and read
  auto train = loop_.Run((*store)->List("train/shard.00001"));
  ASSERT_TRUE(train.ok());
  ASSERT_EQ(train->size(), 1u);
  EXPECT_EQ(*loop_.Run((*store)->Get("index.json")), "{}");
  EXPECT_EQ(loop_.Run((*store)->Head("train/shard.00000.mds"))->size, 9000u);
  auto range = loop_.Run((*store)->GetRange("train/shard.00000.mds", 8990, 100));
  ASSERT_TRUE(range.ok()) << range.status().ToString();
  EXPECT_TRUE(*range == PatternBytes(9000, 2).substr(8990));
  const std::string dst = dir_.path() + "/shard";
  Status got = loop_.Run((*store)->GetToFile("train/shard.00000.mds", dst, 9000));
  ASSERT_TRUE(got.ok()) << got.ToString();
  EXPECT_TRUE(*ReadFile(dst) == PatternBytes(9000, 2));
  ASSERT_TRUE(loop_.Run((*store)->Put("out/new.json", "{\"n\": 1}")).ok());
  ASSERT_TRUE(WriteFileAtomic(dir_.path() + "/up", PatternBytes(5000, 7)).ok());
  Status up = loop_.Run((*store)->PutFile("out/shard.mds", dir_.path() + "/up"));
  ASSERT_TRUE(up.ok()) << up.ToString();
  EXPECT_EQ(*loop_.Run((*store)->Get("out/new.json")), "{\"n\": 1}");
  EXPECT_TRUE(*loop_.Run((*store)->Get("out/shard.mds")) == PatternBytes(5000, 7));
  // 5000 bytes above the part size of 4000: a multipart upload of two parts.
  EXPECT_EQ(fake_.multipart_log(),
            (std::vector<std::string>{"create ds/out/shard.mds", "part ds/out/shard.mds 1",
                                      "part ds/out/shard.mds 2", "commit ds/out/shard.mds"}));
  EXPECT_EQ(fake_.open_uploads(), 0u);
  EXPECT_EQ(fake_.refused(), 0);
  auto missing = loop_.Run((*store)->Get("nope"));
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("ObjectNotFound: The object was not found"),
            std::string::npos)
      << missing.status().message();
  auto whoami = DescribeOciNativeAuth("oci://bkt@mytenancy/ds");
  ASSERT_TRUE(whoami.ok()) << whoami.status().ToString();
  EXPECT_EQ(*whoami, "oci://bkt@mytenancy/ds\n  endpoint: " + fake_.url() +
                         " (native Object Storage API)\n  namespace: mytenancy (from the URL)\n"
                         "  credentials: API key of profile loader in " + dir_.path() +
                         "/oci-config (key id " + kKeyId + ", request signatures)\n");
  EXPECT_EQ(whoami->find("test-passphrase"), std::string::npos);
}

TEST_F(OciNativeStoreTest, WhichUrlsGoNativeAndBrokenProfilesSayWhy) {
  {
    ScopedEnv s3("OCI_NAMESPACE", "mytenancy");  // the S3-compatible API is configured
    EXPECT_FALSE(WantsOciNativeApi("oci://bkt/ds"));
    EXPECT_TRUE(WantsOciNativeApi("oci://bkt@mytenancy/ds"));
  }
  auto empty_ns = OpenStore("oci://bkt@/ds", loop_.executor());
  EXPECT_EQ(empty_ns.status().message(),
            "malformed oci URL 'oci://bkt@/ds' (expected oci://BUCKET[@NAMESPACE]/PATH)");
  {
    ScopedEnv profile("OCI_CLI_PROFILE", "nope");
    auto s = OpenStore("oci://bkt@mytenancy/ds", loop_.executor());
    EXPECT_EQ(s.status().message(), "oci://bkt@mytenancy/ds: Profile 'nope' not found in config file " +
                                        dir_.path() + "/oci-config");
  }
  ASSERT_TRUE(WriteFileAtomic(dir_.path() + "/oci-config",
                              "[loader]\nuser = u\nfingerprint = f\nkey_file = " + kKeyDir +
                                  "/test_api_key_encrypted.pem\ntenancy = t\nregion = us-ashburn-1\n"
                                  "pass_phrase = wrong-passphrase\n").ok());
  auto s = OpenStore("oci://bkt@mytenancy/ds", loop_.executor());
  ASSERT_TRUE(s.ok());  // the key is read at the first request
  auto got = loop_.Run((*s)->Get("index.json"));
  EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(got.status().message(), "the key_file " + kKeyDir +
                                        "/test_api_key_encrypted.pem holds no PEM private key that "
                                        "its passphrase opens");
  EXPECT_EQ(got.status().message().find("wrong-passphrase"), std::string::npos);
}

// A JWT-shaped session token expiring at unix time `exp` (its signature
// part is the service's business, not the client's).
std::string SessionToken(int64_t exp, const std::string& subject) {
  return Base64UrlEncode(R"({"alg": "RS256"})") + "." +
         Base64UrlEncode(R"({"sub": ")" + subject + R"(", "exp": )" + std::to_string(exp) + "}") +
         ".c2ln";
}

// A profile `oci session authenticate` wrote: no user; requests signed with
// key id "ST$<token>", the token read again per request (a refresh reaches
// an open store), an expired token refused before it is sent.
TEST_F(OciNativeStoreTest, SessionTokenProfilesSignWithTheTokenReadPerRequest) {
  const std::string token_file = dir_.path() + "/token";
  const int64_t later = static_cast<int64_t>(std::time(nullptr)) + 3600;
  const std::string first = SessionToken(later, "first");
  ASSERT_TRUE(WriteFileAtomic(token_file, first + "\n").ok());
  ASSERT_TRUE(WriteFileAtomic(dir_.path() + "/oci-config",
                              "[DEFAULT]\nregion = us-ashburn-1\n\n[loader]\n"
                              "fingerprint = aa:bb:cc\ntenancy = ocid1.tenancy.oc1..t\n"
                              "key_file = " + kKeyDir + "/test_api_key.pem\n"
                              "security_token_file = " + token_file + "\n").ok());
  fake_.set_key_id("ST$" + first);
  auto store = OpenStore("oci://bkt/ds", loop_.executor());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ(*loop_.Run((*store)->Get("index.json")), "{}");
  EXPECT_EQ(fake_.refused(), 0);

  const std::string second = SessionToken(later, "second");
  ASSERT_TRUE(WriteFileAtomic(token_file, second).ok());
  fake_.set_key_id("ST$" + second);
  EXPECT_EQ(*loop_.Run((*store)->Get("index.json")), "{}");
  EXPECT_EQ(fake_.refused(), 0);

  auto whoami = DescribeOciNativeAuth("oci://bkt@mytenancy/ds");
  ASSERT_TRUE(whoami.ok()) << whoami.status().ToString();
  EXPECT_EQ(*whoami, "oci://bkt@mytenancy/ds\n  endpoint: " + fake_.url() +
                         " (native Object Storage API)\n  namespace: mytenancy (from the URL)\n"
                         "  credentials: session token of profile loader in " + dir_.path() +
                         "/oci-config (security_token_file " + token_file + ", key_file " +
                         kKeyDir + "/test_api_key.pem, request signatures)\n");

  ASSERT_TRUE(WriteFileAtomic(token_file, SessionToken(1700000000, "old")).ok());
  auto expired = loop_.Run((*store)->Get("index.json"));
  EXPECT_EQ(expired.status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(expired.status().message(),
            "the session token of OCI profile loader (" + token_file +
                ") expired at Tue, 14 Nov 2023 22:13:20 GMT: refresh it with `oci session "
                "refresh --profile loader`");
  EXPECT_EQ(fake_.refused(), 0);  // never sent

  ASSERT_TRUE(WriteFileAtomic(token_file, " \n").ok());
  auto empty = OpenStore("oci://bkt@mytenancy/ds", loop_.executor());
  EXPECT_EQ(empty.status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(empty.status().message(), "oci://bkt@mytenancy/ds: the security_token_file " +
                                          token_file + " of OCI profile loader is empty");
}

// OCI_CLI_AUTH chooses as the OCI CLI's --auth does.
TEST_F(OciNativeStoreTest, OciCliAuthChoosesHowAProfileSigns) {
  const std::string token_file = dir_.path() + "/token";
  const std::string token = SessionToken(static_cast<int64_t>(std::time(nullptr)) + 600, "t");
  ASSERT_TRUE(WriteFileAtomic(token_file, token).ok());
  const std::string key = kKeyDir + "/test_api_key_encrypted.pem";
  ASSERT_TRUE(WriteFileAtomic(dir_.path() + "/oci-config",
                              "[loader]\nuser = ocid1.user.oc1..u\nfingerprint = aa:bb:cc\n"
                              "tenancy = ocid1.tenancy.oc1..t\nregion = us-ashburn-1\nkey_file = " + key +
                              "\npass_phrase = test-passphrase\nsecurity_token_file = " +
                              token_file + "\n").ok());
  // With a user, the API key (as the CLI's default, api_key).
  auto store = OpenStore("oci://bkt@mytenancy/ds", loop_.executor());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ(*loop_.Run((*store)->Get("index.json")), "{}");
  {
    ScopedEnv auth("OCI_CLI_AUTH", "security_token");
    fake_.set_key_id("ST$" + token);
    auto by_token = OpenStore("oci://bkt@mytenancy/ds", loop_.executor());
    ASSERT_TRUE(by_token.ok()) << by_token.status().ToString();
    EXPECT_EQ(*loop_.Run((*by_token)->Get("index.json")), "{}");
    EXPECT_EQ(fake_.refused(), 0);
  }
  {
    ScopedEnv auth("OCI_CLI_AUTH", "instance_obo_user");
    auto refused = OpenStore("oci://bkt@mytenancy/ds", loop_.executor());
    EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(refused.status().message(),
              "oci://bkt@mytenancy/ds: OCI_CLI_AUTH=instance_obo_user is not supported (api_key, "
              "security_token, resource_principal or instance_principal)");
  }
  ASSERT_TRUE(WriteFileAtomic(dir_.path() + "/oci-config",
                              "[loader]\nregion = us-ashburn-1\nkey_file = " + key + "\n").ok());
  ScopedEnv auth("OCI_CLI_AUTH", "security_token");
  auto missing = OpenStore("oci://bkt@mytenancy/ds", loop_.executor());
  EXPECT_EQ(missing.status().message(), "oci://bkt@mytenancy/ds: profile loader of " +
                                            dir_.path() + "/oci-config is missing security_token_file");
}

// A part refused: no new part starts, the upload is aborted, no object.
TEST_F(OciNativeStoreTest, AFailedPartAbortsTheMultipartUpload) {
  StoreOptions options;
  options.part_size = 1000;
  options.upload_concurrency = 1;
  fake_.fail_part = "2";
  auto store = OpenStore("oci://bkt@mytenancy/ds", loop_.executor(), options);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ASSERT_TRUE(WriteFileAtomic(dir_.path() + "/up", PatternBytes(3500, 3)).ok());
  Status up = loop_.Run((*store)->PutFile("big/shard.mds", dir_.path() + "/up"));
  EXPECT_EQ(up.code(), StatusCode::kIoError) << up.ToString();
  EXPECT_NE(up.message().find("part 2"), std::string::npos) << up.message();
  EXPECT_NE(up.message().find("InvalidParameter: part refused"), std::string::npos) << up.message();
  EXPECT_EQ(fake_.multipart_log(),
            (std::vector<std::string>{"create ds/big/shard.mds", "part ds/big/shard.mds 1",
                                      "part ds/big/shard.mds 2", "abort ds/big/shard.mds"}));
  EXPECT_EQ(fake_.open_uploads(), 0u);
  EXPECT_EQ(loop_.Run((*store)->Head("big/shard.mds")).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(fake_.refused(), 0);
}

// Resource principals (OCI Functions, Data Science) as the SDK's
// get_resource_principals_signer() reads version 2.2: values that are
// absolute paths are files (read again per request), others the values.
TEST_F(OciNativeStoreTest, ResourcePrincipalsSignWithTheRpstOfTheEnvironment) {
  const std::string rpst = dir_.path() + "/rpst";
  const std::string passphrase = dir_.path() + "/passphrase";
  const int64_t later = static_cast<int64_t>(std::time(nullptr)) + 3600;
  const std::string first = SessionToken(later, "fn-first");
  ASSERT_TRUE(WriteFileAtomic(rpst, first).ok());
  ASSERT_TRUE(WriteFileAtomic(passphrase, "test-passphrase\n").ok());
  ScopedEnv env({{"OCI_CONFIG_FILE", "/nonexistent/oci-config"},
                 {"OCI_RESOURCE_PRINCIPAL_VERSION", "2.2"},
                 {"OCI_RESOURCE_PRINCIPAL_RPST", rpst},
                 {"OCI_RESOURCE_PRINCIPAL_PRIVATE_PEM", kKeyDir + "/test_api_key_encrypted.pem"},
                 {"OCI_RESOURCE_PRINCIPAL_PRIVATE_PEM_PASSPHRASE", passphrase},
                 {"OCI_RESOURCE_PRINCIPAL_REGION", "us-ashburn-1"}});
  EXPECT_TRUE(WantsOciNativeApi("oci://bkt/ds"));
  fake_.set_key_id("ST$" + first);
  auto store = OpenStore("oci://bkt/ds", loop_.executor());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ((*store)->root(), "oci://bkt@mytenancy/ds");
  EXPECT_EQ(*loop_.Run((*store)->Get("index.json")), "{}");
  // The platform replaces the token: the next request carries the new one.
  const std::string second = SessionToken(later, "fn-second");
  ASSERT_TRUE(WriteFileAtomic(rpst, second + "\n").ok());
  fake_.set_key_id("ST$" + second);
  EXPECT_EQ(*loop_.Run((*store)->Get("index.json")), "{}");
  EXPECT_EQ(fake_.refused(), 0);

  auto whoami = DescribeOciNativeAuth("oci://bkt@mytenancy/ds");
  ASSERT_TRUE(whoami.ok()) << whoami.status().ToString();
  EXPECT_EQ(*whoami, "oci://bkt@mytenancy/ds\n  endpoint: " + fake_.url() +
                         " (native Object Storage API)\n  namespace: mytenancy (from the URL)\n"
                         "  credentials: resource principal (OCI_RESOURCE_PRINCIPAL_VERSION 2.2, "
                         "RPST from file " + rpst + ", private key from file " + kKeyDir +
                         "/test_api_key_encrypted.pem, region us-ashburn-1, request signatures)\n");

  ASSERT_TRUE(WriteFileAtomic(rpst, SessionToken(1700000000, "old")).ok());
  auto expired = loop_.Run((*store)->Get("index.json"));
  EXPECT_EQ(expired.status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(expired.status().message(),
            "the resource principal session token (OCI_RESOURCE_PRINCIPAL_RPST, file " + rpst +
                ") expired at Tue, 14 Nov 2023 22:13:20 GMT");
  EXPECT_EQ(fake_.refused(), 0);  // never sent

  // Inline values: the token and the PEM themselves.
  const std::string inline_token = SessionToken(later, "fn-inline");
  ScopedEnv inline_env({{"OCI_RESOURCE_PRINCIPAL_RPST", inline_token},
                        {"OCI_RESOURCE_PRINCIPAL_PRIVATE_PEM", *ReadFile(kKeyDir + "/test_api_key.pem")},
                        {"OCI_RESOURCE_PRINCIPAL_PRIVATE_PEM_PASSPHRASE", std::nullopt}});
  fake_.set_key_id("ST$" + inline_token);
  auto by_value = OpenStore("oci://bkt@mytenancy/ds", loop_.executor());
  ASSERT_TRUE(by_value.ok()) << by_value.status().ToString();
  EXPECT_EQ(*loop_.Run((*by_value)->Get("index.json")), "{}");
  EXPECT_EQ(fake_.refused(), 0);
  auto said = DescribeOciNativeAuth("oci://bkt@mytenancy/ds");
  ASSERT_TRUE(said.ok());
  EXPECT_EQ(said->find(inline_token), std::string::npos);
  EXPECT_EQ(said->find("PRIVATE KEY"), std::string::npos);
  EXPECT_NE(said->find("RPST from the environment, private key from the environment"),
            std::string::npos) << *said;
}

TEST_F(OciNativeStoreTest, BrokenOrMissingResourcePrincipalsSayWhy) {
  ScopedEnv no_config("OCI_CONFIG_FILE", "/nonexistent/oci-config");
  auto none = OpenStore("oci://bkt@mytenancy/ds", loop_.executor());
  EXPECT_EQ(none.status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(none.status().message(),
            "oci://bkt@mytenancy/ds: no OCI credentials: tried the config file (no OCI config "
            "file (~/.oci/config, OCI_CONFIG_FILE)), a resource principal "
            "(OCI_RESOURCE_PRINCIPAL_VERSION is not set); an instance principal only with "
            "OCI_CLI_AUTH=instance_principal");
  EXPECT_FALSE(WantsOciNativeApi("oci://bkt/ds"));
  {
    ScopedEnv v("OCI_RESOURCE_PRINCIPAL_VERSION", "9.9");
    auto s = OpenStore("oci://bkt@mytenancy/ds", loop_.executor());
    EXPECT_EQ(s.status().message(),
              "oci://bkt@mytenancy/ds: OCI_RESOURCE_PRINCIPAL_VERSION=9.9 is not supported "
              "(1.1, 2.1, 2.1.1, 2.1.2, 2.2 and 3.0 are)");
  }
  ScopedEnv v({{"OCI_RESOURCE_PRINCIPAL_VERSION", "2.2"},
               {"OCI_RESOURCE_PRINCIPAL_RPST", dir_.path() + "/no-rpst"}});
  auto missing = OpenStore("oci://bkt@mytenancy/ds", loop_.executor());
  EXPECT_EQ(missing.status().message(),
            "oci://bkt@mytenancy/ds: OCI_RESOURCE_PRINCIPAL_VERSION=2.2 but "
            "OCI_RESOURCE_PRINCIPAL_PRIVATE_PEM, OCI_RESOURCE_PRINCIPAL_REGION are not set");
  ScopedEnv rest({{"OCI_RESOURCE_PRINCIPAL_PRIVATE_PEM", kKeyDir + "/test_api_key.pem"},
                  {"OCI_RESOURCE_PRINCIPAL_REGION", "us-ashburn-1"}});
  auto unreadable = OpenStore("oci://bkt@mytenancy/ds", loop_.executor());
  EXPECT_EQ(unreadable.status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(unreadable.status().message().rfind(
                "oci://bkt@mytenancy/ds: cannot read OCI_RESOURCE_PRINCIPAL_RPST's file " +
                    dir_.path() + "/no-rpst: ", 0),
            0u)
      << unreadable.status().message();
}

// A config file wins over a resource principal; OCI_CLI_AUTH chooses.
TEST_F(OciNativeStoreTest, AConfigFileWinsUnlessOciCliAuthChoosesTheResourcePrincipal) {
  const std::string token = SessionToken(static_cast<int64_t>(std::time(nullptr)) + 600, "fn");
  ScopedEnv rp({{"OCI_RESOURCE_PRINCIPAL_VERSION", "2.2"},
                {"OCI_RESOURCE_PRINCIPAL_RPST", token},
                {"OCI_RESOURCE_PRINCIPAL_PRIVATE_PEM", kKeyDir + "/test_api_key.pem"},
                {"OCI_RESOURCE_PRINCIPAL_REGION", "us-phoenix-1"}});
  auto by_file = DescribeOciNativeAuth("oci://bkt@mytenancy/ds");
  ASSERT_TRUE(by_file.ok()) << by_file.status().ToString();
  EXPECT_NE(by_file->find("credentials: API key of profile loader"), std::string::npos) << *by_file;
  ScopedEnv auth("OCI_CLI_AUTH", "resource_principal");
  auto by_rp = DescribeOciNativeAuth("oci://bkt@mytenancy/ds");
  ASSERT_TRUE(by_rp.ok()) << by_rp.status().ToString();
  EXPECT_NE(by_rp->find("credentials: resource principal (OCI_RESOURCE_PRINCIPAL_VERSION 2.2, RPST "
                        "from the environment, private key from file " + kKeyDir +
                        "/test_api_key.pem, region us-phoenix-1, request signatures)"),
            std::string::npos)
      << *by_rp;
  fake_.set_key_id("ST$" + token);
  auto store = OpenStore("oci://bkt@mytenancy/ds", loop_.executor());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ(*loop_.Run((*store)->Get("index.json")), "{}");
  EXPECT_EQ(fake_.refused(), 0);
}

// Instance principals, chosen by OCI_CLI_AUTH=instance_principal: the
// leaf certificate and key from the metadata service federate for a token
// the requests are then signed with, by the session key sent along.
TEST_F(OciNativeStoreTest, InstancePrincipalsSignWithTheFederatedTokenAndSessionKey) {
  FakeOciIdentity identity("ocid1.tenancy.oc1..ip", "us-ashburn-1");
  ScopedEnv env({{"OCI_CLI_AUTH", "instance_principal"},
                 {"OCI_METADATA_BASE_URL", identity.metadata_url()},
                 {"SLUICE_OCI_FEDERATION_ENDPOINT", identity.federation_url()}});
  fake_.set_identity(&identity);
  StoreOptions options;
  options.part_size = 3000;
  options.upload_concurrency = 1;
  auto store = OpenStore("oci://bkt/ds", loop_.executor(), options);
  ASSERT_TRUE(store.ok()) << store.status().ToString() << " / " << identity.last_refusal();
  EXPECT_EQ((*store)->root(), "oci://bkt@mytenancy/ds");  // the namespace asked with the token
  EXPECT_EQ(*loop_.Run((*store)->Get("index.json")), "{}");
  ASSERT_TRUE(WriteFileAtomic(dir_.path() + "/up", PatternBytes(7000, 5)).ok());
  Status up = loop_.Run((*store)->PutFile("ip/shard.mds", dir_.path() + "/up"));
  ASSERT_TRUE(up.ok()) << up.ToString();
  EXPECT_TRUE(*loop_.Run((*store)->Get("ip/shard.mds")) == PatternBytes(7000, 5));
  EXPECT_EQ(fake_.multipart_log().size(), 5u);  // create, 3 parts, commit
  EXPECT_EQ(fake_.refused(), 0);
  EXPECT_EQ(identity.refused(), 0) << identity.last_refusal();
  EXPECT_EQ(identity.tokens_issued(), 1);
  EXPECT_EQ(identity.metadata_gets(), 4);  // region, certificate, key, intermediate

  // whoami shares the open store's credential: no second token.
  auto whoami = DescribeOciNativeAuth("oci://bkt@mytenancy/ds");
  ASSERT_TRUE(whoami.ok()) << whoami.status().ToString();
  EXPECT_EQ(*whoami, "oci://bkt@mytenancy/ds\n  endpoint: " + fake_.url() +
                         " (native Object Storage API)\n  namespace: mytenancy (from the URL)\n"
                         "  credentials: OCI instance principal (metadata " + identity.metadata_url() +
                         ", tenancy ocid1.tenancy.oc1..ip), OCI_CLI_AUTH=instance_principal "
                         "(federation " + identity.federation_url() +
                         ", region us-ashburn-1, request signatures with a session key)\n");
  EXPECT_EQ(whoami->find(identity.last_token()), std::string::npos);
  EXPECT_EQ(identity.tokens_issued(), 1);
}

TEST_F(OciNativeStoreTest, BrokenInstancePrincipalsSayWhatFailed) {
  FakeOciIdentity identity("ocid1.tenancy.oc1..ip", "us-ashburn-1");
  ScopedEnv env({{"OCI_CLI_AUTH", "instance_principal"},
                 {"OCI_METADATA_BASE_URL", identity.metadata_url()},
                 {"SLUICE_OCI_FEDERATION_ENDPOINT", identity.federation_url()}});
  identity.set_missing_path("identity/key.pem");
  auto no_key = OpenStore("oci://bkt@mytenancy/ds", loop_.executor());
  EXPECT_EQ(no_key.status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(no_key.status().message().rfind(
                "oci://bkt@mytenancy/ds: OCI instance principal: OCI instance metadata " +
                    identity.metadata_url() + "/identity/key.pem: ", 0),
            0u)
      << no_key.status().message();
  EXPECT_EQ(identity.tokens_issued(), 0);

  // A certificate naming no tenancy (another metadata endpoint: another
  // shared credential).
  FakeOciIdentity other("ocid1.tenancy.oc1..ip", "us-ashburn-1");
  other.set_leaf(MakeTestCertificate("ocid1.instance.oc1..x", ""));
  ScopedEnv env2({{"OCI_METADATA_BASE_URL", other.metadata_url()},
                  {"SLUICE_OCI_FEDERATION_ENDPOINT", other.federation_url()}});
  auto no_tenancy = OpenStore("oci://bkt@mytenancy/ds", loop_.executor());
  EXPECT_EQ(no_tenancy.status().message(),
            "oci://bkt@mytenancy/ds: OCI instance principal: the leaf certificate " +
                other.metadata_url() + "/identity/cert.pem names no tenancy (no subject value "
                "opc-tenant:...)");

  // The auth service refuses a signature by another key than the
  // certificate's (its key.pem belongs to another certificate).
  FakeOciIdentity third("ocid1.tenancy.oc1..ip", "us-ashburn-1");
  auto stranger = MakeTestCertificate("ocid1.instance.oc1..y", "opc-tenant:ocid1.tenancy.oc1..ip");
  stranger.cert_pem = third.leaf_cert_pem();
  third.set_leaf(stranger);
  ScopedEnv env3({{"OCI_METADATA_BASE_URL", third.metadata_url()},
                  {"SLUICE_OCI_FEDERATION_ENDPOINT", third.federation_url()}});
  auto refused = OpenStore("oci://bkt@mytenancy/ds", loop_.executor());
  EXPECT_EQ(refused.status().code(), StatusCode::kPermissionDenied) << refused.status().ToString();
  EXPECT_NE(refused.status().message().find(
                "OCI X.509 federation at " + third.federation_url() +
                " (tenancy ocid1.tenancy.oc1..ip)"),
            std::string::npos)
      << refused.status().message();
  EXPECT_NE(refused.status().message().find("NotAuthenticated"), std::string::npos)
      << refused.status().message();
  EXPECT_EQ(third.last_refusal(), "signature does not verify with the leaf certificate");
  EXPECT_EQ(refused.status().message().find("PRIVATE KEY"), std::string::npos);
}

}  // namespace
}  // namespace sluice
