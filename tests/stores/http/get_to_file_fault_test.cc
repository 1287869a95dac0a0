// HttpClient::GetToFile on a failing disk: its Env (GetToFileOptions::env)
// is a FaultEnv that fails the first write of the download's temporary (a
// full disk), a write in the middle of the body (an I/O error after a
// first block is on disk), or the rename onto the destination. Each is the
// error naming the URL and the file, the destination is untouched and no
// temporary is left; the same download succeeds once the fault is gone.
#include <dirent.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/file.h"
#include "engine/runtime/event_loop.h"
#include "stores/http/http_client.h"
#include "tests/base/fault_env.h"
#include "tests/stores/http/test_servers.h"

namespace sluice {
namespace {

using testing::FaultEnv;
using testing::FsOp;
using testing::NginxServer;
using testing::PatternBytes;
using testing::TempDir;

constexpr size_t kDownloadFaultBytes = 300000;

class GetToFileFaultTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    nginx_ = NginxServer::Start(dir_->path()).release();
    ASSERT_NE(nginx_, nullptr) << "nginx did not start";
    ASSERT_TRUE(
        WriteFileAtomic(nginx_->www() + "/fault.bin", PatternBytes(kDownloadFaultBytes, 5)).ok());
  }
  static void TearDownTestSuite() {
    delete nginx_;
    delete dir_;
  }
  void SetUp() override {
    auto client = HttpClient::Create(loop_.executor());
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    client_ = std::move(client).value();
    ASSERT_TRUE(MakeDirs(Out()).ok());
    options_.env = &env_;
  }
  void TearDown() override {
    client_.reset();
    std::system(("rm -rf " + Out()).c_str());
  }

  std::string Url() const {
    return "http://127.0.0.1:" + std::to_string(nginx_->http_port()) + "/fault.bin";
  }
  static std::string Out() { return dir_->path() + "/fault-out"; }
  std::string Dest() const { return Out() + "/dest.bin"; }
  std::string Temporaries() const { return Out() + "/.dest.bin.sluice-tmp.*"; }

  // The names in Out(), sorted.
  static std::vector<std::string> Names() {
    std::vector<std::string> names;
    DIR* d = ::opendir(Out().c_str());
    while (dirent* e = ::readdir(d)) {
      std::string n = e->d_name;
      if (n != "." && n != "..") names.push_back(n);
    }
    ::closedir(d);
    std::sort(names.begin(), names.end());
    return names;
  }

  // The temporary the fault hit: in Out(), named by base/file.h's scheme.
  std::string FiredTemporary() const {
    const std::string tmp = env_.last_fired_path();
    EXPECT_EQ(tmp.rfind(Out() + "/.dest.bin.sluice-tmp.", 0), 0u) << tmp;
    return tmp;
  }

  // The fault gone, the same download writes the whole object.
  void ExpectRetryDownloads() {
    env_.Clear();
    auto r = loop_.Run(client_->GetToFile(Url(), Dest(), options_));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(*ReadFile(Dest()), PatternBytes(kDownloadFaultBytes, 5));
    EXPECT_EQ(Names(), std::vector<std::string>{"dest.bin"});
  }

  static TempDir* dir_;
  static NginxServer* nginx_;
  EventLoop loop_;
  std::unique_ptr<HttpClient> client_;
  FaultEnv env_;
  GetToFileOptions options_;
};

TempDir* GetToFileFaultTest::dir_ = nullptr;
NginxServer* GetToFileFaultTest::nginx_ = nullptr;

TEST_F(GetToFileFaultTest, AFullDiskOnTheFirstWriteIsAnErrorNamingTheUrlAndTheTemporary) {
  env_.Add({.op = FsOp::kWrite, .path_pattern = Temporaries(), .nth = 1, .err = ENOSPC});
  auto r = loop_.Run(client_->GetToFile(Url(), Dest(), options_));
  ASSERT_EQ(env_.fired(), 1);
  ASSERT_FALSE(r.ok());
  const std::string tmp = FiredTemporary();
  EXPECT_EQ(r.status().ToString(), "i/o error: GET " + Url() + ": writing " +
                                       std::to_string(kPageCacheWriteBlock) +
                                       " bytes at offset 0: cannot write " + tmp +
                                       ": No space left on device");
  EXPECT_EQ(r.status().os_error(), ENOSPC);
  EXPECT_EQ(Names(), std::vector<std::string>{}) << "no temporary left, nothing at the destination";
  ExpectRetryDownloads();
}

TEST_F(GetToFileFaultTest, AnIoErrorMidBodyIsAnErrorNamingTheUrlTheTemporaryAndTheOffset) {
  // The first block reaches the disk; the second block's write fails.
  env_.Add({.op = FsOp::kWrite, .path_pattern = Temporaries(), .nth = 2, .err = EIO});
  auto r = loop_.Run(client_->GetToFile(Url(), Dest(), options_));
  ASSERT_EQ(env_.fired(), 1);
  ASSERT_FALSE(r.ok());
  const std::string tmp = FiredTemporary();
  EXPECT_EQ(r.status().ToString(), "i/o error: GET " + Url() + ": writing " +
                                       std::to_string(kPageCacheWriteBlock) + " bytes at offset " +
                                       std::to_string(kPageCacheWriteBlock) + ": cannot write " +
                                       tmp + ": Input/output error");
  EXPECT_EQ(Names(), std::vector<std::string>{}) << "no temporary left, nothing at the destination";
  ExpectRetryDownloads();
}

TEST_F(GetToFileFaultTest, AFailedRenameIsAnErrorNamingTheUrlAndBothPathsAndKeepsTheOldFile) {
  ASSERT_TRUE(WriteFileAtomic(Dest(), "the old file").ok());
  env_.Add({.op = FsOp::kRename, .path_pattern = Dest(), .nth = 1, .err = EIO});
  auto r = loop_.Run(client_->GetToFile(Url(), Dest(), options_));
  ASSERT_EQ(env_.fired(), 1);
  ASSERT_FALSE(r.ok());
  const std::string tmp = FiredTemporary();
  EXPECT_EQ(r.status().ToString(), "i/o error: GET " + Url() + ": cannot rename " + tmp +
                                       " onto " + Dest() + ": Input/output error");
  EXPECT_EQ(*ReadFile(Dest()), "the old file");
  EXPECT_EQ(Names(), std::vector<std::string>{"dest.bin"}) << "no temporary left";
  ExpectRetryDownloads();
}

}  // namespace
}  // namespace sluice
