// FillWatermark: the readable prefix of a file written in parts in any
// order, and what readers get once the write fails or is abandoned, or
// when the file system (a FaultEnv) fails its open or its read.
#include "base/fill_watermark.h"

#include <fcntl.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "tests/base/fault_env.h"
#include "tests/common/temp_dir.h"

namespace sluice {
namespace {

// Writes `bytes` at `offset` of the file at `path` (created if missing).
void WriteAt(const std::string& path, const std::string& bytes, off_t offset) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::pwrite(fd, bytes.data(), bytes.size(), offset), static_cast<ssize_t>(bytes.size()));
  ::close(fd);
}

std::optional<std::string> ReadNow(FillWatermark& fill, uint64_t offset, uint64_t length) {
  auto got = fill.Read(offset, length, /*wait=*/false);
  EXPECT_TRUE(got.ok()) << got.status().ToString();
  return got.ok() ? *got : std::nullopt;
}

// A fill of a `total`-byte file at `path`, created empty, attached.
std::unique_ptr<FillWatermark> Attached(const std::string& path, uint64_t total) {
  WriteAt(path, "", 0);
  auto fill = std::make_unique<FillWatermark>(total, "http://127.0.0.1/f");
  fill->Attach(path);
  return fill;
}

// Attached, with its first 4 bytes, "abcd", written and reported.
std::unique_ptr<FillWatermark> AbcdWritten(const std::string& path, uint64_t total) {
  auto fill = Attached(path, total);
  WriteAt(path, "abcd", 0);
  fill->Wrote(0, 4);
  return fill;
}

TEST(FillWatermark, PartsWrittenOutOfOrderBecomeReadableOnceTheBytesBeforeThemAre) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/f";
  std::unique_ptr<FillWatermark> attached = Attached(path, 12);
  FillWatermark& fill = *attached;
  WriteAt(path, "ghij", 6);
  fill.Wrote(6, 4);
  EXPECT_EQ(fill.watermark(), 0u);
  EXPECT_EQ(ReadNow(fill, 6, 2), std::nullopt);
  WriteAt(path, "abc", 0);
  fill.Wrote(0, 3);
  EXPECT_EQ(fill.watermark(), 3u);
  EXPECT_EQ(ReadNow(fill, 1, 2), std::optional<std::string>("bc"));
  WriteAt(path, "def", 3);
  fill.Wrote(3, 3);  // joins the part written earlier
  EXPECT_EQ(fill.watermark(), 10u);
  EXPECT_EQ(ReadNow(fill, 2, 8), std::optional<std::string>("cdefghij"));
  EXPECT_EQ(ReadNow(fill, 8, 4), std::nullopt);
  auto past = fill.Read(10, 3, false);
  ASSERT_FALSE(past.ok());
  EXPECT_EQ(past.status().code(), StatusCode::kOutOfRange);
}

TEST(FillWatermark, AWaitingReaderGetsTheBytesWhenTheyArrive) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/f";
  std::unique_ptr<FillWatermark> attached = Attached(path, 4);
  FillWatermark& fill = *attached;
  std::thread writer([&] {
    WriteAt(path, "wxyz", 0);
    fill.Wrote(0, 4);
  });
  auto got = fill.Read(2, 2, /*wait=*/true);
  writer.join();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, std::optional<std::string>("yz"));
}

// A consumer's download wait is counted only when it waited (blocked).
TEST(FillWatermark, AReadOfBytesAlreadyThereDoesNotBlockEvenWhenItMayWait) {
  testing::TempDir dir;
  std::unique_ptr<FillWatermark> written = AbcdWritten(dir.path() + "/f", 8);
  FillWatermark& fill = *written;
  bool blocked = false;
  auto got = fill.Read(1, 3, /*wait=*/true, {}, &blocked);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, std::optional<std::string>("bcd"));
  EXPECT_FALSE(blocked);
  got = fill.Read(4, 2, /*wait=*/false, {}, &blocked);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, std::nullopt);
  EXPECT_FALSE(blocked);
  // Stopped before it starts: it returns at once (it used to deadlock,
  // its stop callback run under the lock it takes).
  std::stop_source stop;
  stop.request_stop();
  got = fill.Read(4, 2, /*wait=*/true, stop.get_token(), &blocked);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, std::nullopt);
  EXPECT_FALSE(blocked);
}

TEST(FillWatermark, AFailedOrAbandonedFillServesNothingMore) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/f";
  std::unique_ptr<FillWatermark> written = AbcdWritten(path, 8);
  FillWatermark& failed = *written;
  std::thread owner([&] { failed.Finish(IoError("connection reset")); });
  auto waited = failed.Read(4, 2, /*wait=*/true);  // woken by Finish
  owner.join();
  ASSERT_TRUE(waited.ok());
  EXPECT_EQ(*waited, std::nullopt);
  EXPECT_EQ(ReadNow(failed, 0, 2), std::nullopt);

  FillWatermark abandoned(4, "f");
  abandoned.Attach(path);
  abandoned.Wrote(0, 4);
  abandoned.Abandon();
  EXPECT_EQ(ReadNow(abandoned, 0, 2), std::nullopt);

  FillWatermark never_attached(4, "f");
  never_attached.Finish(Status::Ok());
  EXPECT_EQ(ReadNow(never_attached, 0, 2), std::nullopt);
}

TEST(FillWatermark, ReadsTheBytesAfterTheFileIsRenamedOrDeleted) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/f";
  std::unique_ptr<FillWatermark> written = AbcdWritten(path, 4);
  FillWatermark& fill = *written;
  fill.Finish(Status::Ok());
  ASSERT_EQ(::unlink(path.c_str()), 0);
  EXPECT_EQ(ReadNow(fill, 0, 4), std::optional<std::string>("abcd"));
}

// Through its Env: a read the file system fails is an error naming the
// file and the download; an open it fails leaves the fill unreadable (the
// reader gets nothing from it, and waits for the whole file elsewhere).
TEST(FillWatermark, AFailedReadIsAnErrorNamingTheFileAndAFailedOpenServesNothing) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/f";
  WriteAt(path, "abcd", 0);
  testing::FaultEnv env;
  env.Add({.op = testing::FsOp::kRead, .path_pattern = path, .nth = 1, .err = EIO});
  FillWatermark fill(4, "http://127.0.0.1/f", &env);
  fill.Attach(path);
  fill.Wrote(0, 4);
  auto failed = fill.Read(1, 2, /*wait=*/false);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().ToString(),
            "i/o error: reading the download in flight of http://127.0.0.1/f: cannot read " + path +
                ": Input/output error");
  EXPECT_EQ(env.fired(), 1);
  EXPECT_EQ(ReadNow(fill, 1, 2), std::optional<std::string>("bc"));  // the fault was one read

  env.Add({.op = testing::FsOp::kOpen, .path_pattern = path, .nth = 1, .err = EACCES});
  FillWatermark unopened(4, "http://127.0.0.1/f", &env);
  unopened.Attach(path);
  unopened.Wrote(0, 4);
  EXPECT_EQ(env.fired(), 2);
  EXPECT_EQ(ReadNow(unopened, 0, 4), std::nullopt);
  auto waited = unopened.Read(0, 4, /*wait=*/true);  // unreadable: no wait at all
  ASSERT_TRUE(waited.ok());
  EXPECT_EQ(*waited, std::nullopt);
}

}  // namespace
}  // namespace sluice
