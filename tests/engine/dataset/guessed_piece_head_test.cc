// The guessed head of a cold Parquet folder's first file (GuessedPieceHead):
// which of a piece's spans it serves (exact), its spans and bytes read from
// a folder remote, its room, and its errors when the file is not as listed;
// its threads (its reads', ending with them), and its bytes published when
// the reads end, taken once, by the process itself or a forked child.
#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "base/file.h"
#include "engine/dataset/guessed_piece_head.h"
#include "engine/dataset/remote_source.h"
#include "tests/engine/dataset/dataset_test_util.h"
#include "tests/engine/dataset/multiprocess_util.h"

namespace sluice {
namespace {

using testing::Fork;
using testing::ScratchDir;

TEST(GuessedSpansServing, OnlyAPieceBeginningWithTheGuessedSpansIsServed) {
  const std::vector<DataSpan> head = {{4, 8}, {12, 8}};
  // The same spans; the piece's last ending within its guessed span.
  EXPECT_EQ(GuessedSpansServing(head, {{4, 8}, {12, 8}}), 2u);
  EXPECT_EQ(GuessedSpansServing(head, {{4, 8}, {12, 3}}), 2u);
  EXPECT_EQ(GuessedSpansServing(head, {{4, 5}}), 1u);
  // Longer than the guess: its first spans, then the rest read as ever.
  EXPECT_EQ(GuessedSpansServing(head, {{4, 8}, {12, 8}, {20, 8}, {40, 2}}), 2u);
  // Elsewhere, or a span that is not the guessed one where it is not last.
  EXPECT_EQ(GuessedSpansServing(head, {{5, 8}}), 0u);
  EXPECT_EQ(GuessedSpansServing(head, {{4, 5}, {12, 8}}), 0u);
  EXPECT_EQ(GuessedSpansServing(head, {{4, 8}, {12, 9}}), 0u);
  EXPECT_EQ(GuessedSpansServing(head, {{4, 9}}), 0u);
  EXPECT_EQ(GuessedSpansServing(head, {{4, 8}, {30, 8}}), 0u);
  EXPECT_EQ(GuessedSpansServing({}, {{4, 8}}), 0u);
}

class GuessedPieceHeadRead : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 3000; ++i) bytes_ += static_cast<char>('a' + i % 23);
    ASSERT_TRUE(WriteFileAtomic(JoinPath(dir_.path(), "a.parquet"), bytes_).ok());
    auto remote = OpenRemoteSource(dir_.path());
    ASSERT_TRUE(remote.ok()) << remote.status().message();
    remote_ = std::move(*remote);
  }

  ScratchDir dir_;
  std::string bytes_;
  std::unique_ptr<RemoteSource> remote_;
};

// A file under a part: one span, from byte 4 to its end; a piece of its
// first 1,000 bytes from there gets them, exact, and nothing else is
// given: the room is the file's size, and it is taken once.
TEST_F(GuessedPieceHeadRead, ThePieceGetsTheFilesBytesFromFourInTheRoomOfTheFile) {
  GuessedPieceHead head(*remote_, "a.parquet", "a.parquet", ObjectVersion("", bytes_.size()));
  EXPECT_EQ(head.spans(), (std::vector<DataSpan>{{4, bytes_.size() - 4}}));
  EXPECT_EQ(head.Take(bytes_.size() + 1), nullptr);  // no piece of the file is larger
  char* room = head.Take(bytes_.size());
  ASSERT_NE(room, nullptr);
  EXPECT_EQ(head.Take(10), nullptr);  // once
  std::vector<Result<uint64_t>> got = head.Wait({1000});
  ASSERT_EQ(got.size(), 1u);
  ASSERT_TRUE(got[0].ok()) << got[0].status().message();
  EXPECT_EQ(*got[0], 1000u);
  ShardBytes piece = head.Release();
  ASSERT_EQ(piece.room(), bytes_.size());
  piece.Received(1000);
  EXPECT_EQ(piece.view(), bytes_.substr(4, 1000));
}

// A file of another size than listed: the span's answer is the read's
// error, naming the object and both sizes; a file gone: not found.
TEST_F(GuessedPieceHeadRead, AFileNotAsListedIsTheSpansError) {
  {
    GuessedPieceHead head(*remote_, "a.parquet", "a.parquet", ObjectVersion("", 5000));
    ASSERT_NE(head.Take(100), nullptr);
    std::vector<Result<uint64_t>> got = head.Wait({100});
    ASSERT_EQ(got.size(), 1u);
    ASSERT_FALSE(got[0].ok());
    EXPECT_EQ(got[0].status().ToString(),
              "corrupt: " + JoinPath(dir_.path(), "a.parquet") +
                  ": the object is 3000 bytes, index.json says 5000 (the remote changed since it "
                  "was indexed?)");
  }
  {
    GuessedPieceHead head(*remote_, "b.parquet", "b.parquet", ObjectVersion("", 3000));
    ASSERT_NE(head.Take(100), nullptr);
    std::vector<Result<uint64_t>> got = head.Wait({100});
    ASSERT_EQ(got.size(), 1u);
    ASSERT_FALSE(got[0].ok());
    EXPECT_EQ(got[0].status().ToString(), "not found: cannot open " +
                                              JoinPath(dir_.path(), "b.parquet") +
                                              ": No such file or directory");
  }
}

// Nothing to guess in a file of its magic alone.
TEST_F(GuessedPieceHeadRead, AFileOfItsMagicAloneIsNotGuessed) {
  GuessedPieceHead head(*remote_, "a.parquet", "a.parquet", ObjectVersion("", 4));
  EXPECT_TRUE(head.spans().empty());
  EXPECT_EQ(head.Take(0), nullptr);
}

// A folder's reads in parts of 1,000 bytes, each held (not begun) until
// Release: the test decides whether a take comes before the reads end.
class HeldPartsRemote final : public RemoteSource {
 public:
  explicit HeldPartsRemote(std::unique_ptr<RemoteSource> inner) : inner_(std::move(inner)) {}
  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    released_ = true;
    cv_.notify_all();
  }
  uint64_t PartSize() const override { return 1000; }
  Result<uint64_t> GetRangeOnlyOfVersionInto(const std::string& key, uint64_t offset,
                                             uint64_t length, const ObjectVersion& version,
                                             char* into, IntoProgress& progress,
                                             std::stop_token stop) override {
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return released_; });
    }
    return inner_->GetRangeOnlyOfVersionInto(key, offset, length, version, into, progress,
                                             std::move(stop));
  }
  Result<uint64_t> Fetch(const std::string& key, const std::string& path,
                         std::optional<uint64_t> expected_size) override {
    return inner_->Fetch(key, path, expected_size);
  }
  Result<std::string> GetRangeOnly(const std::string& key, uint64_t offset, uint64_t length,
                                   std::stop_token stop) override {
    return inner_->GetRangeOnly(key, offset, length, std::move(stop));
  }
  Result<std::vector<ObjectInfo>> List(const std::string& prefix) override {
    return inner_->List(prefix);
  }
  Result<std::vector<uint64_t>> Sizes(const std::vector<std::string>& keys) override {
    return inner_->Sizes(keys);
  }
  std::string Describe() const override { return inner_->Describe(); }

 private:
  std::unique_ptr<RemoteSource> inner_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool released_ = false;
};

// The threads of this process now (/proc/self/task).
size_t ThreadsOfThisProcess() {
  size_t n = 0;
  if (DIR* dir = opendir("/proc/self/task")) {
    while (dirent* entry = readdir(dir)) n += entry->d_name[0] != '.';
    closedir(dir);
  }
  return n;
}

// Whether this process is back to `threads` threads: waited for (a
// thread's end is not told), bounded only against a hang, not a timing.
bool ThreadsBackTo(size_t threads) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (ThreadsOfThisProcess() > threads) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// A child's exit code, or -1 when it had not exited within a bound
// against a hang (then it is killed).
int ExitOrHang(pid_t child) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  int status = 0;
  while (waitpid(child, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > until) {
      kill(child, SIGKILL);
      waitpid(child, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

class GuessedPieceHeadHeld : public GuessedPieceHeadRead {
 protected:
  void SetUp() override {
    GuessedPieceHeadRead::SetUp();
    if (HasFatalFailure()) return;
    held_ = std::make_unique<HeldPartsRemote>(std::move(remote_));
  }
  // What a Take of a piece of the file's bytes [4, 2004) gets: 0 when
  // those bytes exact, in a room of the file's size; 1 when nothing; 2
  // when anything else.
  static int TakeExit(GuessedPieceHead& head, const std::string& file) {
    char* room = head.Take(2000);
    if (room == nullptr) return 1;
    std::vector<Result<uint64_t>> got = head.Wait({1000, 1000});
    if (got.size() != 2 || !got[0].ok() || *got[0] != 1000 || !got[1].ok() || *got[1] != 1000) {
      return 2;
    }
    ShardBytes piece = head.Release();
    if (piece.room() != file.size()) return 2;
    piece.Received(2000);
    return piece.view() == file.substr(4, 2000) ? 0 : 2;
  }

  std::unique_ptr<HeldPartsRemote> held_;
};

// The guess starts one thread per read, and no other (none wakes for the
// dataset's life); they end with the reads, whoever takes the bytes.
TEST_F(GuessedPieceHeadHeld, ItsOnlyThreadsAreItsReadsAndTheyEndWithThem) {
  const size_t before = ThreadsOfThisProcess();
  GuessedPieceHead head(*held_, "a.parquet", "a.parquet", ObjectVersion("", bytes_.size()));
  ASSERT_EQ(head.spans(), (std::vector<DataSpan>{{4, 1000}, {1004, 1000}}));
  EXPECT_EQ(ThreadsOfThisProcess(), before + 2);
  held_->Release();
  EXPECT_TRUE(ThreadsBackTo(before)) << ThreadsOfThisProcess() << " threads, " << before
                                     << " before the guess";
}

// The reads ended, no piece took the bytes: published at the next fork,
// whoever asks later. The child forked then gets them, exact; then no
// process does (their memory given back): neither a second child nor the
// parent.
TEST_F(GuessedPieceHeadHeld, TheBytesArePublishedAtAForkAfterTheReadsAndTakenOnce) {
  const size_t before = ThreadsOfThisProcess();
  GuessedPieceHead head(*held_, "a.parquet", "a.parquet", ObjectVersion("", bytes_.size()));
  held_->Release();
  ASSERT_TRUE(ThreadsBackTo(before));
  const pid_t child = Fork([&] { return TakeExit(head, bytes_); });
  ASSERT_GT(child, 0);
  EXPECT_EQ(ExitOrHang(child), 0);
  const pid_t second = Fork([&] { return TakeExit(head, bytes_); });
  ASSERT_GT(second, 0);
  EXPECT_EQ(ExitOrHang(second), 1);
  EXPECT_EQ(head.Take(2000), nullptr);
}

// A child forked while the reads are held waits for them: the last read's
// end publishes the bytes (no thread of the parent's waits for a child).
TEST_F(GuessedPieceHeadHeld, AChildForkedBeforeTheReadsEndGetsTheBytesAsTheyEnd) {
  GuessedPieceHead head(*held_, "a.parquet", "a.parquet", ObjectVersion("", bytes_.size()));
  const pid_t child = Fork([&] { return TakeExit(head, bytes_); });
  ASSERT_GT(child, 0);
  held_->Release();
  EXPECT_EQ(ExitOrHang(child), 0);
  EXPECT_EQ(head.Take(2000), nullptr);
}

// The parent's own piece after its reads ended takes the published bytes
// back, exact; a child forked after gets nothing.
TEST_F(GuessedPieceHeadHeld, ThePiecesTakeAfterTheReadsEndedGetsThePublishedBytes) {
  const size_t before = ThreadsOfThisProcess();
  GuessedPieceHead head(*held_, "a.parquet", "a.parquet", ObjectVersion("", bytes_.size()));
  held_->Release();
  ASSERT_TRUE(ThreadsBackTo(before));
  EXPECT_EQ(TakeExit(head, bytes_), 0);
  const pid_t child = Fork([&] { return TakeExit(head, bytes_); });
  ASSERT_GT(child, 0);
  EXPECT_EQ(ExitOrHang(child), 1);
}

// A piece of the parent's takes the bytes while the reads are held: a
// child waiting for them learns at once that none will come (it does not
// wait for the reads); the piece gets them exact once they end.
TEST_F(GuessedPieceHeadHeld, APieceTakingThemBeforeTheReadsEndTellsWaitingChildrenAtOnce) {
  GuessedPieceHead head(*held_, "a.parquet", "a.parquet", ObjectVersion("", bytes_.size()));
  const pid_t child = Fork([&] { return TakeExit(head, bytes_); });
  ASSERT_GT(child, 0);
  char* room = head.Take(2000);
  ASSERT_NE(room, nullptr);
  EXPECT_EQ(ExitOrHang(child), 1);
  held_->Release();
  std::vector<Result<uint64_t>> got = head.Wait({1000, 1000});
  ASSERT_EQ(got.size(), 2u);
  ASSERT_TRUE(got[0].ok() && got[1].ok());
  EXPECT_EQ(*got[0] + *got[1], 2000u);
  ShardBytes piece = head.Release();
  piece.Received(2000);
  EXPECT_EQ(piece.view(), bytes_.substr(4, 2000));
}

// A read that failed (the file is shorter than listed) publishes nothing:
// a child reads the piece itself, and the parent's piece still gets the
// read's error, naming the object and both sizes.
TEST_F(GuessedPieceHeadHeld, AFailedReadPublishesNothing) {
  const size_t before = ThreadsOfThisProcess();
  GuessedPieceHead head(*held_, "a.parquet", "a.parquet", ObjectVersion("", 5000));
  held_->Release();
  ASSERT_TRUE(ThreadsBackTo(before));
  const pid_t child = Fork([&] { return TakeExit(head, bytes_); });
  ASSERT_GT(child, 0);
  EXPECT_EQ(ExitOrHang(child), 1);
  ASSERT_NE(head.Take(2000), nullptr);
  std::vector<Result<uint64_t>> got = head.Wait({1000, 1000});
  ASSERT_EQ(got.size(), 2u);
  ASSERT_FALSE(got[0].ok());
  EXPECT_EQ(got[0].status().ToString(),
            "corrupt: " + JoinPath(dir_.path(), "a.parquet") +
                ": the object is 3000 bytes, index.json says 5000 (the remote changed since it "
                "was indexed?)");
}

}  // namespace
}  // namespace sluice
