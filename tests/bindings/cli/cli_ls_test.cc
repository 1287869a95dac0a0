// sluice ls: the files a raw-file dataset holds, in its order, and the errors.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <string>

#include "tests/bindings/cli/cli_runner.h"
#include "tests/common/temp_dir.h"

namespace sluice {
namespace {

using testing::CliRun;
using testing::Sluice;

void Write(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

class CliLsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(::mkdir((dir_ + "/b").c_str(), 0755), 0);
    ASSERT_EQ(::mkdir((dir_ + "/_tmp").c_str(), 0755), 0);
    Write(dir_ + "/b/2.jpg", "22");
    Write(dir_ + "/B.jpg", "1");
    Write(dir_ + "/a.png", "333");
    Write(dir_ + "/_SUCCESS", "");
    Write(dir_ + "/_tmp/x.jpg", "partial");
    Write(dir_ + "/.a.jpg.crc", "crc");
  }
  testing::TempDir tmp_{"sluice_cli_ls"};
  const std::string dir_ = tmp_.path();
};

TEST_F(CliLsTest, ListsTheDataFilesInBytewiseOrder) {
  CliRun r = Sluice("ls " + dir_);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out, "1\tB.jpg\n3\ta.png\n2\tb/2.jpg\n3 files, 6 bytes (of 6 listed)\n");
}

TEST_F(CliLsTest, GlobsSelect) {
  CliRun r = Sluice("ls " + dir_ + " --glob '*.jpg'");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out, "1\tB.jpg\n2\tb/2.jpg\n2 files, 3 bytes (of 6 listed)\n");
  r = Sluice("ls " + dir_ + " --glob 'b/*,*.png'");
  EXPECT_EQ(r.out, "3\ta.png\n2\tb/2.jpg\n2 files, 5 bytes (of 6 listed)\n");
}

TEST_F(CliLsTest, AManifestNamesTheFilesAndSizesAreLookedUp) {
  Write(dir_ + "/files.txt", "# two of them\nb/2.jpg\n{\"path\": \"a.png\", \"size\": 3}\n");
  CliRun r = Sluice("ls " + dir_ + " --manifest files.txt");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out, "3\ta.png\n2\tb/2.jpg\n2 files, 5 bytes (of 2 listed)\n");
  Write(dir_ + "/bad.txt", "b/2.jpg\nnope.jpg\n");
  r = Sluice("ls " + dir_ + " --manifest bad.txt");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "sluice ls: not found: " + dir_ + "/nope.jpg: no such object\n");
}

TEST_F(CliLsTest, ErrorsAreClear) {
  CliRun r = Sluice("ls " + dir_ + " --glob '*.tiff'");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "sluice ls: not found: " + dir_ +
                       ": no data file among the 6 listed that matches \"*.tiff\" (names "
                       "starting with '_' or '.' are left out)\n");
  r = Sluice("ls " + dir_ + " --recursive");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("--recursive"), std::string::npos) << r.out;
  r = Sluice("ls");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out.rfind("usage: sluice ls DATASET", 0), 0u) << r.out;
  r = Sluice("ls nosuch://bucket/x");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("nosuch"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace sluice
