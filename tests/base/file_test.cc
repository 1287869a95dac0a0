#include "base/file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>

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
