// A raw-file dataset through the C ABI: sluice_stream_open with "files",
// its one "data" column, sluice_stream_sample_path, and the errors.
#include "sluice.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/common/temp_dir.h"

namespace {

namespace fs = std::filesystem;

class FileStreamCApi : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(root_ + "/data/b");
    Write("data/b/2.txt", "two");
    Write("data/a.txt", "one");
    Write("data/c.bin", "not text");
    Write("data/_SUCCESS", "");
  }
  void Write(const std::string& rel, const std::string& bytes) {
    std::ofstream(root_ + "/" + rel, std::ios::binary) << bytes;
  }
  std::string Config(const std::string& files) const {
    return R"({"remote": ")" + root_ + R"(/data", "local": ")" + root_ +
           R"(/cache", "files": )" + files + R"(, "world": {"rank": 0, "world_size": 1}})";
  }
  sluice::testing::TempDir tmp_{"sluice_c_files"};
  const std::string root_ = tmp_.path();
};

std::string Str(sluice_bytes b) { return std::string(reinterpret_cast<const char*>(b.data), b.size); }

TEST_F(FileStreamCApi, FilesAreSamplesWithTheirPaths) {
  sluice_stream* s = nullptr;
  ASSERT_EQ(sluice_stream_open(Config(R"({"glob": "*.txt"})").c_str(), &s), SLUICE_OK)
      << sluice_last_error();
  ASSERT_EQ(sluice_stream_num_samples(s), 2u);
  ASSERT_EQ(sluice_stream_num_columns(s), 1u);
  EXPECT_STREQ(sluice_stream_column_name(s, 0), "data");
  EXPECT_STREQ(sluice_stream_column_encoding(s, 0), "bytes");
  ASSERT_EQ(sluice_stream_iter_begin(s, 0, 0, 0, 1), SLUICE_OK) << sluice_last_error();
  // A call may return fewer than asked (it waits for its first sample
  // only): take batches until the epoch ends.
  std::vector<int64_t> got_ids;
  std::vector<std::string> got;
  while (true) {
    int64_t ids[4];
    sluice_bytes fields[4];
    uint32_t n = 0;
    ASSERT_EQ(sluice_stream_next_batch(s, 4, ids, fields, &n), SLUICE_OK) << sluice_last_error();
    if (n == 0) break;
    for (uint32_t k = 0; k < n; ++k) {
      got_ids.push_back(ids[k]);
      got.push_back(Str(fields[k]));
    }
  }
  EXPECT_EQ(got_ids, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(got, (std::vector<std::string>{"one", "two"}));  // a.txt sorts before b/2.txt
  const char* want[] = {"/cache/a.txt", "/cache/b/2.txt"};
  for (uint64_t i = 0; i < 2; ++i) {
    char* path = nullptr;
    ASSERT_EQ(sluice_stream_sample_path(s, i, &path), SLUICE_OK) << sluice_last_error();
    EXPECT_EQ(std::string(path), root_ + want[i]);
    EXPECT_TRUE(fs::exists(path));
    sluice_free(path);
  }
  sluice_stream_release(s);
  char* path = reinterpret_cast<char*>(1);
  EXPECT_EQ(sluice_stream_sample_path(s, 2, &path), SLUICE_ERANGE);
  EXPECT_EQ(path, nullptr);
  EXPECT_STREQ(sluice_last_error(), "out of range: sluice_stream_sample_path: sample 2 of 2");
  EXPECT_EQ(sluice_stream_sample_path(s, 0, nullptr), SLUICE_EINVAL);
  sluice_stream_close(s);
}

TEST_F(FileStreamCApi, BadFilesOptionsNameTheKey) {
  sluice_stream* s = nullptr;
  EXPECT_EQ(sluice_stream_open(Config(R"({"globs": "*.txt"})").c_str(), &s), SLUICE_EINVAL);
  EXPECT_STREQ(sluice_last_error(),
               "invalid argument: dataset config: 'files.globs' is not a known key (glob, manifest)");
  EXPECT_EQ(sluice_stream_open(Config("7").c_str(), &s), SLUICE_EINVAL);
  EXPECT_STREQ(sluice_last_error(),
               "invalid argument: dataset config: 'files' must be true, null or an object {glob, manifest}");
  EXPECT_EQ(sluice_stream_open(Config(R"({"glob": [""]})").c_str(), &s), SLUICE_EINVAL);
  EXPECT_STREQ(sluice_last_error(), "invalid argument: dataset config: 'files.glob' must not hold an empty pattern");
  EXPECT_EQ(s, nullptr);
}

}  // namespace
