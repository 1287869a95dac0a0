// What a full disk or a failing write or rename does to an MDS writer: the
// error names the shard, no shard is left partial under its name, no
// temporary remains, the shards written before stay whole, and index.json
// is never written to list a shard that is missing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <vector>

#include "base/file.h"
#include "formats/mds/mds_writer.h"
#include "tests/base/fault_env.h"
#include "tests/common/temp_dir.h"

namespace sluice {
namespace {

using testing::FaultEnv;
using testing::FsOp;

// The names in `dir`, sorted.
std::vector<std::string> Names(const std::string& dir) {
  auto names = Env::Default()->ListFolder(dir);
  EXPECT_TRUE(names.ok()) << names.status().ToString();
  if (!names.ok()) return {};
  std::sort(names->begin(), names->end());
  return *names;
}

class MdsWriterFaultTest : public ::testing::Test {
 protected:
  // Three samples of 1000 bytes under a 1500-byte limit: one shard each.
  // Returns the first error of Write or Finish.
  Status WriteDataset(const std::string& dir, Env* env) {
    ShardedWriterOptions options;
    options.size_limit = 1500;
    options.env = env;
    auto w = MdsWriter::Create(dir, {{"x", "bytes"}}, options);
    if (!w.ok()) return w.status();
    for (char c : {'a', 'b', 'c'}) {
      SLUICE_RETURN_IF_ERROR((*w)->Write({MdsBytes{std::string(1000, c)}}));
    }
    Status finished = (*w)->Finish();
    if (!finished.ok()) {
      // Every later call fails the same way.
      EXPECT_EQ((*w)->Write({MdsBytes{"d"}}).ToString(), finished.ToString());
    }
    return finished;
  }

  void SetUp() override {
    ASSERT_TRUE(WriteDataset(reference(), Env::Default()).ok());
    ASSERT_EQ(Names(reference()), (std::vector<std::string>{"index.json", "shard.00000.mds",
                                                            "shard.00001.mds", "shard.00002.mds"}));
  }

  std::string reference() const { return dir_.path() + "/reference"; }
  std::string out() const { return dir_.path() + "/out"; }
  // The bytes the fault-free writer wrote for `name`.
  std::string Expected(const std::string& name) const {
    return ReadFile(JoinPath(reference(), name)).value();
  }

  testing::TempDir dir_{"sluice_mds_fault_test"};
  FaultEnv env_;
};

TEST_F(MdsWriterFaultTest, AFullDiskInAShardKeepsTheShardsBeforeAndWritesNoIndex) {
  // Shard 1's first write is cut short, its second finds the disk full.
  env_.Add({.op = FsOp::kWrite, .path_pattern = "*/.shard.00001.mds.sluice-tmp.*", .nth = 1,
            .short_write = true, .short_bytes = 10});
  env_.Add({.op = FsOp::kWrite, .path_pattern = "*/.shard.00001.mds.sluice-tmp.*", .nth = 2,
            .err = ENOSPC});
  Status st = WriteDataset(out(), &env_);
  const std::string tmp = env_.last_fired_path();
  EXPECT_EQ(st.ToString(), "i/o error: writing shard 1 in " + out() + ": cannot write " + tmp +
                               ": No space left on device");
  EXPECT_EQ(tmp.rfind(out() + "/.shard.00001.mds.sluice-tmp.", 0), 0u) << tmp;
  EXPECT_EQ(Names(out()), std::vector<std::string>{"shard.00000.mds"})
      << "no partial shard 1, no temporary, no index.json";
  EXPECT_EQ(*ReadFile(JoinPath(out(), "shard.00000.mds")), Expected("shard.00000.mds"));
}

TEST_F(MdsWriterFaultTest, AFailedShardRenameKeepsTheShardsBeforeAndWritesNoIndex) {
  env_.Add({.op = FsOp::kRename, .path_pattern = "*/shard.00001.mds", .err = EIO});
  Status st = WriteDataset(out(), &env_);
  const std::string tmp = env_.last_fired_path();
  EXPECT_EQ(st.ToString(), "i/o error: writing shard 1 in " + out() + ": cannot rename " + tmp +
                               " onto " + out() + "/shard.00001.mds: Input/output error");
  EXPECT_EQ(Names(out()), std::vector<std::string>{"shard.00000.mds"});
  EXPECT_EQ(*ReadFile(JoinPath(out(), "shard.00000.mds")), Expected("shard.00000.mds"));
}

TEST_F(MdsWriterFaultTest, AFailedIndexLeavesEveryShardWholeAndNoIndex) {
  env_.Add({.op = FsOp::kWrite, .path_pattern = "*/.index.json.sluice-tmp.*", .err = ENOSPC});
  Status st = WriteDataset(out(), &env_);
  EXPECT_EQ(st.ToString(), "i/o error: cannot write " + env_.last_fired_path() +
                               ": No space left on device");
  EXPECT_EQ(Names(out()), (std::vector<std::string>{"shard.00000.mds", "shard.00001.mds",
                                                    "shard.00002.mds"}));
  for (const char* name : {"shard.00000.mds", "shard.00001.mds", "shard.00002.mds"}) {
    EXPECT_EQ(*ReadFile(JoinPath(out(), name)), Expected(name)) << name;
  }
}

TEST_F(MdsWriterFaultTest, TheSameWriteSucceedsOnceTheDiskHasRoom) {
  env_.Add({.op = FsOp::kWrite, .path_pattern = "*/.shard.00002.mds.sluice-tmp.*", .err = ENOSPC});
  EXPECT_FALSE(WriteDataset(out(), &env_).ok());
  env_.Clear();
  ASSERT_TRUE(WriteDataset(out(), &env_).ok());
  for (const std::string& name : Names(reference())) {
    EXPECT_EQ(*ReadFile(JoinPath(out(), name)), Expected(name)) << name;
  }
  EXPECT_EQ(Names(out()), Names(reference()));
}

}  // namespace
}  // namespace sluice
