// sluice ls through the Env it is given (RunLs's `env`): the folder's walk
// and a manifest's read are that Env's calls, and a failing one is ls's
// error naming the path.
#include <gtest/gtest.h>

#include <cerrno>
#include <string>

#include "base/file.h"
#include "bindings/cli/commands.h"
#include "tests/base/fault_env.h"
#include "tests/common/temp_dir.h"

namespace sluice {
namespace {

using testing::FaultEnv;
using testing::FsFault;
using testing::FsOp;

struct LsRun {
  int exit_code;
  std::string out, err;
};

LsRun Ls(const cli::Args& args, Env* env) {
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  int code = cli::RunLs(args, env);
  std::string out = ::testing::internal::GetCapturedStdout();
  return {code, out, ::testing::internal::GetCapturedStderr()};
}

TEST(CliLsEnv, TheFolderAndTheManifestAreReadThroughTheGivenEnv) {
  sluice::testing::TempDir tmp("sluice_cli_ls_env");
  const std::string dir = tmp.path();
  ASSERT_TRUE(WriteFileAtomic(dir + "/a.jpg", "1").ok());
  ASSERT_TRUE(WriteFileAtomic(dir + "/b.jpg", "22").ok());
  ASSERT_TRUE(WriteFileAtomic(dir + "/files.txt", "b.jpg\n").ok());
  FaultEnv fault;

  LsRun r = Ls({dir}, &fault);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "1\ta.jpg\n2\tb.jpg\n6\tfiles.txt\n3 files, 9 bytes (of 3 listed)\n");

  fault.Add(FsFault{.op = FsOp::kList, .path_pattern = dir + "*", .times = 0, .err = EIO});
  r = Ls({dir}, &fault);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_GE(fault.fired(), 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "sluice ls: i/o error: cannot list " + dir + ": Input/output error\n");

  fault.Clear();
  fault.Add(FsFault{.op = FsOp::kOpen, .path_pattern = dir + "/files.txt", .times = 0,
                    .err = EIO});
  const int fired = fault.fired();
  r = Ls({dir, "--manifest", "files.txt"}, &fault);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_GT(fault.fired(), fired);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "sluice ls: i/o error: manifest " + dir + "/files.txt: cannot open " + dir +
                       "/files.txt: Input/output error\n");

  fault.Clear();
  r = Ls({dir, "--manifest", "files.txt"}, &fault);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "2\tb.jpg\n1 files, 2 bytes (of 1 listed)\n");
}

}  // namespace
}  // namespace sluice
