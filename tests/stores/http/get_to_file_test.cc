// HttpClient::GetToFile's file: one temporary named by base/file.h's scheme
// (none when the destination is already a temporary of this process), and
// the mode of what it creates.
#include <dirent.h>
#include <sys/stat.h>

#include <atomic>

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
  const std::string head = "cannot rename " + out() + "/";
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
  EXPECT_EQ(requests.load(), 1);  // no retry, no part beyond the first
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

}  // namespace
}  // namespace sluice
