// What a full disk or a failing write or rename does to the file store's
// puts and downloads: the exact error, nothing under the key (or the old
// object kept whole), no temporary left, and success once the fault is gone.
#include <algorithm>
#include <cerrno>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/file.h"
#include "engine/runtime/event_loop.h"
#include "stores/file/file_store.h"
#include "tests/base/fault_env.h"
#include "tests/stores/http/test_servers.h"

namespace sluice {
namespace {

using testing::FaultEnv;
using testing::FsOp;
using testing::PatternBytes;
using testing::TempDir;

class FileStoreFaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = OpenFileStore(root(), &env_);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
  }
  std::string root() const { return dir_.path() + "/root"; }
  // The names in `dir`, sorted.
  static std::vector<std::string> Names(const std::string& dir) {
    auto names = Env::Default()->ListFolder(dir);
    EXPECT_TRUE(names.ok()) << names.status().ToString();
    if (!names.ok()) return {};
    std::sort(names->begin(), names->end());
    return *names;
  }

  EventLoop loop_;
  TempDir dir_;
  FaultEnv env_;
  std::unique_ptr<Store> store_;
};

TEST_F(FileStoreFaultTest, AFullDiskFailsThePutAndLeavesNothing) {
  env_.Add({.op = FsOp::kWrite, .path_pattern = "*/.obj.sluice-tmp.*", .err = ENOSPC});
  Status st = loop_.Run(store_->Put("a/obj", PatternBytes(50000, 1)));
  const std::string tmp = env_.last_fired_path();
  EXPECT_EQ(st.ToString(), "i/o error: cannot write " + tmp + ": No space left on device");
  EXPECT_EQ(tmp.rfind(root() + "/a/.obj.sluice-tmp.", 0), 0u) << tmp;
  EXPECT_TRUE(Names(root() + "/a").empty()) << "no object, no temporary";
  EXPECT_EQ(loop_.Run(store_->Head("a/obj")).status().code(), StatusCode::kNotFound);

  env_.Clear();
  ASSERT_TRUE(loop_.Run(store_->Put("a/obj", PatternBytes(50000, 1))).ok());
  EXPECT_EQ(*loop_.Run(store_->Get("a/obj")), PatternBytes(50000, 1));
}

TEST_F(FileStoreFaultTest, AFailedReplaceKeepsTheOldObjectWhole) {
  ASSERT_TRUE(loop_.Run(store_->Put("obj", "old bytes")).ok());
  env_.Add({.op = FsOp::kRename, .path_pattern = "*/root/obj", .err = EIO});
  Status st = loop_.Run(store_->Put("obj", "new bytes"));
  EXPECT_EQ(st.ToString(), "i/o error: cannot rename " + env_.last_fired_path() + " onto " +
                               root() + "/obj: Input/output error");
  EXPECT_EQ(*loop_.Run(store_->Get("obj")), "old bytes");
  EXPECT_EQ(Names(root()), std::vector<std::string>{"obj"});
}

TEST_F(FileStoreFaultTest, AFullDiskFailsPutFileAndGetToFileAndLeavesNothing) {
  const std::string local = dir_.path() + "/local.bin";
  ASSERT_TRUE(WriteFileAtomic(local, PatternBytes(70000, 2)).ok());
  // The upload: its third 16 KiB write finds the disk full.
  env_.Add({.op = FsOp::kWrite, .path_pattern = "*/.up.bin.sluice-tmp.*", .nth = 3,
            .err = ENOSPC});
  Status up = loop_.Run(store_->PutFile("up.bin", local));
  EXPECT_EQ(up.ToString(),
            "i/o error: cannot write " + env_.last_fired_path() + ": No space left on device");
  EXPECT_TRUE(Names(root()).empty());
  env_.Clear();
  ASSERT_TRUE(loop_.Run(store_->PutFile("up.bin", local)).ok());

  // The download into a local file.
  const std::string down = dir_.path() + "/down/got.bin";
  ASSERT_TRUE(MakeDirs(dir_.path() + "/down").ok());
  env_.Add({.op = FsOp::kWrite, .path_pattern = "*/.got.bin.sluice-tmp.*", .err = EIO});
  Status got = loop_.Run(store_->GetToFile("up.bin", down, std::nullopt));
  EXPECT_EQ(got.ToString(),
            "i/o error: cannot write " + env_.last_fired_path() + ": Input/output error");
  EXPECT_TRUE(Names(dir_.path() + "/down").empty());
  env_.Clear();
  ASSERT_TRUE(loop_.Run(store_->GetToFile("up.bin", down, std::nullopt)).ok());
  EXPECT_EQ(*ReadFile(down), PatternBytes(70000, 2));
}

// A large folder's files are stat'ed on several threads: the listing is the
// one a stat at a time gave, every file in key order with its size and tag,
// and a file that vanishes between the folder's listing and its stat (or
// whose stat fails otherwise) is left out, as before, not an error.
TEST_F(FileStoreFaultTest, ALargeFolderListsInKeyOrderAndLeavesOutAFileThatVanishedBeforeItsStat) {
  constexpr int kFiles = 1500;  // several claims of the stat threads
  ASSERT_TRUE(MakeDirs(root() + "/many/sub").ok());
  auto name = [](int i) {
    std::string n = std::to_string(i);
    return "f" + std::string(4 - n.size(), '0') + n;
  };
  for (int i = kFiles - 1; i >= 0; --i) {
    ASSERT_TRUE(WriteFileAtomic(root() + "/many/" + name(i), std::string(i % 37, 'x')).ok());
  }
  ASSERT_TRUE(WriteFileAtomic(root() + "/many/sub/x", "xyz").ok());
  env_.Add({.op = FsOp::kStat, .path_pattern = "*/many/f0777", .times = 0, .err = ENOENT});
  env_.Add({.op = FsOp::kStat, .path_pattern = "*/many/f1234", .times = 0, .err = EACCES});

  auto listed = loop_.Run(store_->List("many/"));
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  EXPECT_EQ(env_.fired(), 2);
  std::vector<ObjectInfo> expected;
  for (int i = 0; i < kFiles; ++i) {
    if (i == 777 || i == 1234) continue;
    auto st = Env::Default()->Stat(root() + "/many/" + name(i));
    ASSERT_TRUE(st.ok());
    expected.push_back({"many/" + name(i), static_cast<uint64_t>(i % 37), LocalFileTag(*st)});
  }
  auto st = Env::Default()->Stat(root() + "/many/sub/x");
  ASSERT_TRUE(st.ok());
  expected.push_back({"many/sub/x", 3, LocalFileTag(*st)});
  ASSERT_EQ(listed->size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ((*listed)[i].key, expected[i].key) << i;
    EXPECT_EQ((*listed)[i].size, expected[i].size) << i;
    EXPECT_EQ((*listed)[i].etag, expected[i].etag) << i;
  }
}

}  // namespace
}  // namespace sluice
