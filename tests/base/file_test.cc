#include "base/file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace sluice {
namespace {

std::string TempDir() {
  char tmpl[] = "/tmp/sluice_base_test_XXXXXX";
  const char* d = ::mkdtemp(tmpl);
  EXPECT_NE(d, nullptr);
  return d;
}

TEST(FileTest, WriteReadMapRoundTrip) {
  std::string dir = TempDir();
  std::string path = JoinPath(dir, "sub/deeper/f.bin");
  ASSERT_TRUE(MakeDirs(JoinPath(dir, "sub/deeper")).ok());
  std::string data("ab\0cd", 5);
  ASSERT_TRUE(WriteFileAtomic(path, data).ok());
  EXPECT_EQ(*ReadFile(path), data);
  EXPECT_EQ(*FileSize(path), 5u);
  auto m = MappedFile::Open(path);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->data(), data);
  MappedFile moved = std::move(*m);
  EXPECT_EQ(moved.data(), data);
  std::system(("rm -rf " + dir).c_str());
}

// Resident kB of the mapping that starts at `addr`, from /proc/self/smaps.
int64_t MappingRssKb(const void* addr) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool in_mapping = false;
  while (std::getline(smaps, line)) {
    unsigned long long lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-') {
      in_mapping = lo == reinterpret_cast<uintptr_t>(addr);
    } else if (in_mapping && line.rfind("Rss:", 0) == 0) {
      return std::stoll(line.substr(4));
    }
  }
  return -1;
}

TEST(FileTest, PopulateMapsEveryPageAndKeepsTheBytes) {
  std::string dir = TempDir();
  std::string path = JoinPath(dir, "four_mib");
  std::string data(4 << 20, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 7 + i / 4096);
  ASSERT_TRUE(WriteFileAtomic(path, data).ok());
  auto m = MappedFile::Open(path);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(MappingRssKb(m->data().data()), 0) << "nothing read yet";
  if (!m->Populate()) GTEST_SKIP() << "this kernel has no MADV_POPULATE_READ";
  EXPECT_EQ(MappingRssKb(m->data().data()), 4096);
  EXPECT_EQ(m->data(), data);
  EXPECT_TRUE(MappedFile().Populate()) << "an empty map: nothing to do";
  std::system(("rm -rf " + dir).c_str());
}

TEST(FileTest, ErrorsNameThePath) {
  auto r = ReadFile("/nonexistent/sluice/x");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("/nonexistent/sluice/x"), std::string::npos);
  std::string dir = TempDir();
  std::string path = JoinPath(dir, "big");
  ASSERT_TRUE(WriteFileAtomic(path, std::string(100, 'x')).ok());
  auto limited = ReadFile(path, 10);
  EXPECT_EQ(limited.status().code(), StatusCode::kOutOfRange);
  std::system(("rm -rf " + dir).c_str());
}

TEST(FileTest, JoinPath) {
  EXPECT_EQ(JoinPath("a", "b"), "a/b");
  EXPECT_EQ(JoinPath("a/", "b"), "a/b");
  EXPECT_EQ(JoinPath("", "b"), "b");
}

}  // namespace
}  // namespace sluice
