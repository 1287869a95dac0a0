// azure:// and azure-dl:// against a real azurite (tests/servers), which
// enforces SharedKey and checks SAS signatures.
#include <ctime>
#include <string>

#include <gtest/gtest.h>

#include "base/file.h"
#include "base/fill_watermark.h"
#include "engine/runtime/event_loop.h"
#include "stores/http/http_client.h"
#include "stores/signing/azure_connection_string.h"
#include "stores/signing/azure_shared_key.h"
#include "stores/signing/signing_time.h"
#include "stores/store.h"
#include "tests/stores/common/azurite_suite.h"
#include "tests/stores/common/node_server_suite.h"
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

class AzureStoreTest : public testing::NodeServerSuite<AzureStoreTest> {
 public:
  static std::unique_ptr<NodeServer> StartServer(const std::string& dir) {
    return testing::StartAzurite(dir);
  }
  static std::map<std::string, std::optional<std::string>> StoreEnv() {
    return testing::AzuriteEnv(server_->port());
  }
  static std::string Endpoint() { return testing::AzuriteEndpoint(server_->port()); }

 protected:
  void SetUp() override {
    NodeServerSuite::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    for (const char* c : {"data", "pages", "blocks"}) {
      Status made = testing::CreateAzuriteContainer(loop_, server_->port(), c);
      ASSERT_TRUE(made.ok()) << made.ToString();
    }
  }
};

TEST_F(AzureStoreTest, PutGetRangeHeadWithConnectionString) {
  auto store = Open("azure://data/root");
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->root(), "azure://data/root");
  std::string data = PatternBytes(50000, 21);
  Status put = loop_.Run(store->Put("dir/a b.bin", data));
  ASSERT_TRUE(put.ok()) << put.ToString() << "\n" << server_->Log();
  auto got = loop_.Run(store->Get("dir/a b.bin"));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(*got == data);
  auto head = loop_.Run(store->Head("dir/a b.bin"));
  ASSERT_TRUE(head.ok()) << head.status().ToString();
  EXPECT_EQ(head->size, 50000u);
  auto range = loop_.Run(store->GetRange("dir/a b.bin", 777, 33));
  ASSERT_TRUE(range.ok()) << range.status().ToString();
  EXPECT_TRUE(*range == data.substr(777, 33));
  auto first = loop_.Run(store->GetRange("dir/a b.bin", 0, 1));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_TRUE(*first == data.substr(0, 1));
  auto tail = loop_.Run(store->GetRange("dir/a b.bin", 49990, 100));
  ASSERT_TRUE(tail.ok()) << tail.status().ToString();
  EXPECT_TRUE(*tail == data.substr(49990));
  // azure-dl:// reaches the same blob through the Blob endpoint.
  auto dl = Open("azure-dl://data");
  auto via_dl = loop_.Run(dl->Head("root/dir/a b.bin"));
  ASSERT_TRUE(via_dl.ok()) << via_dl.status().ToString();
  EXPECT_EQ(via_dl->size, 50000u);
}


// GetRangeOnly gets azurite's exact bytes (the range signed in the Range
// header), and stops at the head of a 200 (see range_only_checks.h).
// Azurite's List Blobs gives each blob's Etag (in its Properties): a
// replacement of the same size lists with another.
TEST_F(AzureStoreTest, ListGivesEachBlobsEtag) {
  auto store = Open("azure://data/etags");
  ASSERT_TRUE(loop_.Run(store->Put("a.parquet", "0123456789")).ok());
  auto first = loop_.Run(store->List(""));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_EQ(first->size(), 1u);
  EXPECT_EQ((*first)[0].etag.rfind("0x", 0), 0u) << (*first)[0].etag;
  ASSERT_TRUE(loop_.Run(store->Put("a.parquet", "9876543210")).ok());
  auto second = loop_.Run(store->List(""));
  ASSERT_TRUE(second.ok());
  ASSERT_EQ(second->size(), 1u);
  EXPECT_EQ((*second)[0].size, 10u);
  EXPECT_EQ((*second)[0].etag.rfind("0x", 0), 0u) << (*second)[0].etag;
  EXPECT_NE((*second)[0].etag, (*first)[0].etag);
}

// GetRangeOnlyOfVersion sends If-Match, signed (azurite checks SharedKey
// over it): the listed version's bytes; after the blob is replaced,
// azurite's 412 becomes the one "changed since it was listed" error, with
// the new ETag a HEAD tells.
TEST_F(AzureStoreTest, ReadOfTheListedVersionFailsOnceTheBlobIsReplaced) {
  auto store = Open("azure://data/versions");
  ASSERT_TRUE(loop_.Run(store->Put("a.parquet", "0123456789")).ok());
  auto listed = loop_.Run(store->List(""));
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  ASSERT_EQ(listed->size(), 1u);
  const std::string etag = (*listed)[0].etag;
  auto same = loop_.Run(store->GetRangeOnlyOfVersion("a.parquet", 2, 5, etag));
  ASSERT_TRUE(same.ok()) << same.status().ToString() << "\n" << server_->Log();
  EXPECT_EQ(*same, "23456");
  ASSERT_TRUE(loop_.Run(store->Put("a.parquet", "9876543210")).ok());
  auto head = loop_.Run(store->Head("a.parquet"));
  ASSERT_TRUE(head.ok()) << head.status().ToString();
  ASSERT_FALSE(SameEtag(head->etag, etag)) << head->etag;
  auto changed = loop_.Run(store->GetRangeOnlyOfVersion("a.parquet", 2, 5, etag));
  EXPECT_EQ(changed.status().code(), StatusCode::kCorrupt);
  EXPECT_EQ(changed.status().message(),
            "azure://data/versions/a.parquet: changed since it was listed (ETag " + head->etag +
                ", listed \"" + etag + "\"); bytes 2..7 not read");
}

TEST_F(AzureStoreTest, GetRangeOnlyStopsAtTheHeadOfA200) {
  const std::string data = PatternBytes(50000, 22);
  auto direct = Open("azure://data");
  ASSERT_NE(direct, nullptr);
  ASSERT_TRUE(loop_.Run(direct->Put("peek/shard.mds", data)).ok());
  auto range = loop_.Run(direct->GetRange("peek/shard.mds", 40000, 17));
  ASSERT_TRUE(range.ok()) << range.status().ToString();
  EXPECT_TRUE(*range == data.substr(40000, 17));
  testing::FaultProxy proxy(server_->port());
  auto env = testing::AzuriteEnv(proxy.port());
  ScopedEnv via(env);
  StoreOptions options;
  options.read_timeout_s = 30;
  auto store = Open("azure://data/peek", options);
  ASSERT_NE(store, nullptr);
  testing::ExpectGetRangeOnlyStopsAtTheHeadOfA200(loop_, *store, proxy, "shard.mds", data);
}

// A ranged read whose body is cut short is asked again with the same
// range, which SharedKey signed (another Range, for the rest, would be
// refused with 403), and gives the range's exact bytes once.
TEST_F(AzureStoreTest, ARangeCutShortIsAskedAgainAsSigned) {
  const std::string data = PatternBytes(60000, 23);
  auto direct = Open("azure://data");
  ASSERT_NE(direct, nullptr);
  ASSERT_TRUE(loop_.Run(direct->Put("cut/shard.mds", data)).ok());
  testing::FaultProxy proxy(server_->port());
  auto env = testing::AzuriteEnv(proxy.port());
  ScopedEnv via(env);
  StoreOptions options;
  options.download_retry = 1;  // Open() allows none
  options.download_timeout_s = 10;
  auto store = OpenStore("azure://data/cut", loop_.executor(), options);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  // The head and about 7 KB of the 20,000 bytes, then the connection ends.
  proxy.Schedule({testing::Fault::Truncate(8000)});
  auto range = loop_.Run((*store)->GetRange("shard.mds", 30000, 20000));
  ASSERT_TRUE(range.ok()) << range.status().ToString();
  EXPECT_TRUE(*range == data.substr(30000, 20000));
  EXPECT_EQ(proxy.connections(), 2);
}

TEST_F(AzureStoreTest, ListBlobsPagesThroughMarkers) {
  StoreOptions options;
  options.list_page_size = 2;
  auto store = Open("azure://pages/ds", options);
  ASSERT_NE(store, nullptr);
  for (const char* k : {"s/2", "a&b", "s/1", "t", "s/10", "u/v", "x/1/a", "x/2/b/c", "x/2/d"}) {
    ASSERT_TRUE(loop_.Run(store->Put(k, std::string(k) + "!")).ok()) << k;
  }
  ASSERT_TRUE(loop_.Run(Open("azure://pages")->Put("outside", "x")).ok());
  auto all = loop_.Run(store->List(""));
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  std::vector<std::string> got;
  for (const auto& info : *all) got.push_back(info.key);
  EXPECT_EQ(got, (std::vector<std::string>{"a&b", "s/1", "s/10", "s/2", "t", "u/v", "x/1/a",
                                            "x/2/b/c", "x/2/d"}));
  auto x = loop_.Run(store->List("x/"));
  ASSERT_TRUE(x.ok()) << x.status().ToString();
  ASSERT_EQ(x->size(), 3u);
  EXPECT_EQ((*x)[1].key, "x/2/b/c");
  EXPECT_EQ((*x)[1].size, 8u);
  EXPECT_EQ((*all)[0].size, 4u);
  auto s = loop_.Run(store->List("s/1"));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->size(), 2u);
}

TEST_F(AzureStoreTest, BlockUploadAndGetToFile) {
  StoreOptions options;
  options.part_size = 64 << 10;
  options.upload_concurrency = 3;  // 5 blocks, 3 in flight
  options.concurrency = 2;         // ranged GETs of GetToFile
  auto store = Open("azure://blocks", options);
  ASSERT_NE(store, nullptr);
  std::string data = PatternBytes((300 << 10) + 7, 9);
  std::string src = dir_->path() + "/az-src.bin";
  ASSERT_TRUE(WriteFileAtomic(src, data).ok());
  Status put = loop_.Run(store->PutFile("big.bin", src));
  ASSERT_TRUE(put.ok()) << put.ToString();
  EXPECT_EQ(loop_.Run(store->Head("big.bin"))->size, data.size());
  std::string dst = dir_->path() + "/az-out/big.bin";
  Status get = loop_.Run(store->GetToFile("big.bin", dst, std::nullopt));
  ASSERT_TRUE(get.ok()) << get.ToString();
  EXPECT_TRUE(*ReadFile(dst) == data);
}

TEST_F(AzureStoreTest, MissingBlobIsNotFoundNamingTheUrl) {
  auto store = Open("azure://data/root");
  auto head = loop_.Run(store->Head("nope.bin"));
  EXPECT_EQ(head.status().code(), StatusCode::kNotFound);
  EXPECT_NE(head.status().message().find("azure://data/root/nope.bin"), std::string::npos)
      << head.status().message();
  auto get = loop_.Run(store->Get("nope.bin"));
  EXPECT_EQ(get.status().code(), StatusCode::kNotFound);
  EXPECT_NE(get.status().message().find("404"), std::string::npos);
  std::string dst = dir_->path() + "/az-never.bin";
  EXPECT_EQ(loop_.Run(store->GetToFile("nope.bin", dst, std::nullopt)).code(), StatusCode::kNotFound);
  EXPECT_FALSE(FileExists(dst));
}

TEST_F(AzureStoreTest, WrongKeyAndBadSasAreRejectedWithoutLeakingThem) {
  ASSERT_TRUE(loop_.Run(Open("azure://data")->Put("auth.txt", "x")).ok());
  // A valid base64 key that is not the account's.
  const std::string wrong_key = "V3JvbmdLZXlXcm9uZ0tleVdyb25nS2V5V3JvbmdLZXk=";
  ScopedEnv env(std::map<std::string, std::optional<std::string>>{
      {"AZURE_STORAGE_CONNECTION_STRING", std::nullopt},
      {"AZURE_ACCOUNT_NAME", "devstoreaccount1"},
      {"AZURE_ACCOUNT_ACCESS_KEY", wrong_key},
      {"AZURE_BLOB_ENDPOINT", Endpoint()}});
  ::testing::internal::CaptureStderr();
  auto store = Open("azure://data");
  auto get = loop_.Run(store->Get("auth.txt"));
  auto list = loop_.Run(store->List(""));
  std::string captured = ::testing::internal::GetCapturedStderr();
  for (const Status& s : {get.status(), list.status()}) {
    EXPECT_EQ(s.code(), StatusCode::kPermissionDenied) << s.ToString();
    EXPECT_NE(s.message().find("403"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("azure://data"), std::string::npos) << s.message();
    EXPECT_EQ(s.message().find(wrong_key), std::string::npos);
    EXPECT_EQ(s.message().find(kAzuriteAccountKey), std::string::npos);
  }
  EXPECT_EQ(captured.find(wrong_key), std::string::npos);

  // A SAS token with a forged signature: rejected, its signature redacted.
  const std::string sig = "Zm9yZ2VkLXNpZ25hdHVyZS0xMjM0NQ%3D%3D";
  ScopedEnv sas(std::map<std::string, std::optional<std::string>>{
      {"AZURE_ACCOUNT_ACCESS_KEY", std::nullopt},
      {"AZURE_STORAGE_SAS_TOKEN",
       "?sv=2021-12-02&ss=b&srt=sco&sp=rl&se=2099-01-01T00:00:00Z&spr=http&sig=" + sig}});
  auto sas_store = Open("azure://data");
  auto sas_get = loop_.Run(sas_store->Get("auth.txt"));
  EXPECT_EQ(sas_get.status().code(), StatusCode::kPermissionDenied) << sas_get.status().ToString();
  EXPECT_EQ(sas_get.status().message().find(sig), std::string::npos) << sas_get.status().message();
}

TEST(AzureSettingsTest, MissingCredentialsNameTheVariables) {
  EventLoop loop;
  ScopedEnv env(CleanStoreEnv());
  auto none = OpenStore("azure://c/x", loop.executor());
  EXPECT_EQ(none.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(none.status().message().find("AZURE_ACCOUNT_NAME"), std::string::npos);
  // An account with no credential source: anonymous (public containers),
  // as DefaultAzureCredential's users read them.
  ScopedEnv account("AZURE_ACCOUNT_NAME", "acct");
  auto no_key = OpenStore("azure://c/x", loop.executor());
  EXPECT_TRUE(no_key.ok()) << no_key.status().ToString();
  EXPECT_EQ(OpenStore("azure://", loop.executor()).status().code(), StatusCode::kInvalidArgument);
  ScopedEnv bad("AZURE_STORAGE_CONNECTION_STRING", "AccountName=a;AccountKey=not base64!");
  auto bad_cs = OpenStore("azure://c", loop.executor());
  EXPECT_EQ(bad_cs.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad_cs.status().message().find("AZURE_STORAGE_CONNECTION_STRING"), std::string::npos);
  EXPECT_EQ(bad_cs.status().message().find("not base64!"), std::string::npos);
}

// GetToFile writes one temporary named by base/file.h's scheme: a rename
// onto a folder fails naming it, and leaves none behind.
// azure:// reports its fills (served in flight like HTTP and S3): each
// ranged part is told to the fill once written into the temporary the fill
// reads, so the whole blob is readable through the fill at the end, and
// nothing is told before the temporary is attached.
TEST_F(AzureStoreTest, GetToFileFillingTellsEachPartOfTheTemporaryAsWritten) {
  StoreOptions options;
  options.part_size = 64 << 10;
  options.concurrency = 2;
  auto store = Open("azure://blocks", options);
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(store->ReportsFills());
  const std::string data = PatternBytes((300 << 10) + 7, 11);
  ASSERT_TRUE(loop_.Run(store->Put("filled.bin", data)).ok());
  FillWatermark fill(data.size(), "azure://blocks/filled.bin");
  const std::string dst = dir_->path() + "/az-filled/filled.bin";
  Status get = loop_.Run(store->GetToFileFilling("filled.bin", dst, data.size(), &fill));
  ASSERT_TRUE(get.ok()) << get.ToString();
  EXPECT_EQ(fill.watermark(), data.size());
  fill.Finish(Status::Ok());
  auto read = fill.Read(0, data.size(), /*wait=*/false);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ASSERT_TRUE(read->has_value());
  EXPECT_TRUE(**read == data);
  EXPECT_TRUE(*ReadFile(dst) == data);
}

TEST_F(AzureStoreTest, GetToFileTemporaryIsNamedByTheOneScheme) {
  auto store = Open("azure://data", StoreOptions{});
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(loop_.Run(store->Put("t.bin", PatternBytes(1000, 4))).ok());
  const std::string taken = dir_->path() + "/az-taken";
  ASSERT_TRUE(MakeDirs(taken + "/inside").ok());
  Status st = loop_.Run(store->GetToFile("t.bin", taken, std::nullopt));
  ASSERT_FALSE(st.ok());
  const std::string head = "cannot rename " + dir_->path() + "/";
  ASSERT_EQ(st.message().rfind(head, 0), 0u) << st.message();
  const std::string temp = st.message().substr(head.size(), st.message().find(" onto ") - head.size());
  EXPECT_EQ(temp.rfind(".az-taken.sluice-tmp.", 0), 0u) << temp;
  ASSERT_TRUE(ParseTempName(temp).has_value()) << temp;
  EXPECT_EQ(ParseTempName(temp)->owner, ThisProcessTempOwner());
  EXPECT_FALSE(FileExists(dir_->path() + "/" + temp));
}

}  // namespace
}  // namespace sluice
