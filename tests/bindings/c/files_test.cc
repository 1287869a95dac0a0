// sluice_file_write / sluice_file_copy: whole files under the final name,
// the old one kept or replaced whole, no temporary left behind, errors that
// name the file.
#include "sluice.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/common/temp_dir.h"

namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(CApiFiles, WriteReplacesTheFileWholeAndCopyCopiesIt) {
  sluice::testing::TempDir dir("capi_files");
  const std::string a = dir.path() + "/a", b = dir.path() + "/b";
  const std::string first = "first", second(300000, 'z');
  ASSERT_EQ(sluice_file_write(a.c_str(), reinterpret_cast<const uint8_t*>(first.data()),
                              first.size()), SLUICE_OK);
  ASSERT_EQ(sluice_file_write(a.c_str(), reinterpret_cast<const uint8_t*>(second.data()),
                              second.size()), SLUICE_OK);
  EXPECT_EQ(Slurp(a), second);
  uint64_t copied = 0;
  ASSERT_EQ(sluice_file_copy(a.c_str(), b.c_str(), &copied), SLUICE_OK);
  EXPECT_EQ(copied, second.size());
  EXPECT_EQ(Slurp(b), second);
  ASSERT_EQ(sluice_file_write(b.c_str(), nullptr, 0), SLUICE_OK);
  EXPECT_EQ(Slurp(b), "");
  EXPECT_EQ(sluice::testing::NamesIn(dir.path()), (std::vector<std::string>{"a", "b"}));
}

TEST(CApiFiles, ErrorsNameTheFileAndLeaveNothing) {
  sluice::testing::TempDir dir("capi_files");
  const std::string missing = dir.path() + "/missing", to = dir.path() + "/to";
  EXPECT_EQ(sluice_file_copy(missing.c_str(), to.c_str(), nullptr), SLUICE_ENOTFOUND);
  EXPECT_NE(std::string(sluice_last_error()).find(missing), std::string::npos)
      << sluice_last_error();
  const std::string no_folder = dir.path() + "/no/such/file";
  EXPECT_EQ(sluice_file_write(no_folder.c_str(), nullptr, 0), SLUICE_ENOTFOUND);
  EXPECT_NE(std::string(sluice_last_error()).find(dir.path() + "/no/such/"), std::string::npos)
      << sluice_last_error();
  EXPECT_EQ(sluice_file_copy(dir.path().c_str(), to.c_str(), nullptr), SLUICE_EIO)
      << sluice_last_error();  // a folder is no file to copy
  EXPECT_EQ(sluice_file_write(nullptr, nullptr, 0), SLUICE_EINVAL);
  EXPECT_EQ(std::string(sluice_last_error()), "invalid argument: sluice_file_write: argument 'path' must not be NULL");
  EXPECT_EQ(sluice_file_write(to.c_str(), nullptr, 3), SLUICE_EINVAL);
  EXPECT_EQ(sluice_file_copy(nullptr, to.c_str(), nullptr), SLUICE_EINVAL);
  EXPECT_TRUE(sluice::testing::NamesIn(dir.path()).empty());
}

}  // namespace
