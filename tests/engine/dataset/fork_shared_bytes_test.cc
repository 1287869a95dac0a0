// ForkSharedBytes: what forked children get of their owner's bytes, exact:
// the pieces published before or after the fork, nothing, nothing once
// they stop or the owner process is gone, and the pieces once only to the
// first process that claims them, whose claim gives their memory back.
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "engine/dataset/fork_shared_bytes.h"
#include "tests/engine/dataset/multiprocess_util.h"

namespace sluice {
namespace {

using ForkPieces = std::vector<std::string_view>;

using testing::Fork;
using testing::WaitExit;

// What a child's Await got, as one exit code: 0 when it is `expected`
// (nullopt: nothing), 1 when it is something else.
int ForkSharedAwaitExit(ForkSharedBytes& shared, const std::optional<ForkPieces>& expected) {
  const std::optional<ForkPieces> got = shared.Await();
  return got == expected ? 0 : 1;
}

// What a Claim got, as one exit code: 0 when it is `expected` (nullopt:
// nothing, and `take` not called), 1 when it is something else.
int ForkSharedClaimExit(ForkSharedBytes& shared, const std::optional<ForkPieces>& expected) {
  std::optional<std::vector<std::string>> got;
  const bool claimed = shared.Claim([&](const ForkPieces& pieces) {
    got.emplace(pieces.begin(), pieces.end());
  });
  if (claimed != got.has_value() || claimed != expected.has_value()) return 1;
  return !expected || *got == std::vector<std::string>(expected->begin(), expected->end()) ? 0 : 1;
}

TEST(ForkSharedBytes, AChildGetsThePiecesPublishedBeforeItsForkExact) {
  auto shared = ForkSharedBytes::Map(8);
  ASSERT_NE(shared, nullptr);
  EXPECT_TRUE(shared->Publish({"ab", "", "cdefg"}));
  // Decided once: neither a second publish nor nothing changes it.
  EXPECT_FALSE(shared->Publish({"x"}));
  shared->PublishNothing();
  const pid_t child =
      Fork([&] { return ForkSharedAwaitExit(*shared, ForkPieces{"ab", "", "cdefg"}); });
  ASSERT_GT(child, 0);
  EXPECT_EQ(WaitExit(child), 0);
}

TEST(ForkSharedBytes, PiecesOverTheCapacityPublishNothing) {
  auto shared = ForkSharedBytes::Map(4);
  ASSERT_NE(shared, nullptr);
  EXPECT_FALSE(shared->Publish({"abc", "de"}));
  EXPECT_FALSE(shared->Publish({"abc"}));  // decided: nothing
  const pid_t child = Fork([&] { return ForkSharedAwaitExit(*shared, std::nullopt); });
  ASSERT_GT(child, 0);
  EXPECT_EQ(WaitExit(child), 0);
}

TEST(ForkSharedBytes, NothingPublishedAfterTheForkEndsTheChildsWait) {
  auto shared = ForkSharedBytes::Map(4);
  ASSERT_NE(shared, nullptr);
  const pid_t child = Fork([&] { return ForkSharedAwaitExit(*shared, std::nullopt); });
  ASSERT_GT(child, 0);
  shared->PublishNothing();
  EXPECT_FALSE(shared->Publish({"ab"}));
  EXPECT_EQ(WaitExit(child), 0);
}

// Whether the child waits before the owner publishes or not, it gets the
// bytes published after its fork.
TEST(ForkSharedBytes, AChildGetsTheBytesPublishedAfterItsFork) {
  auto shared = ForkSharedBytes::Map(6);
  ASSERT_NE(shared, nullptr);
  const pid_t child =
      Fork([&] { return ForkSharedAwaitExit(*shared, ForkPieces{"head", "xy"}); });
  ASSERT_GT(child, 0);
  EXPECT_TRUE(shared->Publish({"head", "xy"}));
  EXPECT_EQ(WaitExit(child), 0);
}

// Three pages' worth of bytes, in memory once published; a child's claim
// gets them exact and gives their pages back (the owner's view holds none
// after), and every later claim or wait, the owner's or a child's, gets
// nothing.
TEST(ForkSharedBytes, TheFirstClaimGetsThePiecesAndGivesTheirMemoryBack) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const std::string a(page + 100, 'a'), b(2 * page - 100, 'b');
  auto shared = ForkSharedBytes::Map(a.size() + b.size());
  ASSERT_NE(shared, nullptr);
  EXPECT_EQ(shared->ResidentPages(), 0u);
  ASSERT_TRUE(shared->Publish({a, b}));
  EXPECT_EQ(shared->ResidentPages(), 3u);
  const pid_t claimer = Fork([&] { return ForkSharedClaimExit(*shared, ForkPieces{a, b}); });
  ASSERT_GT(claimer, 0);
  EXPECT_EQ(WaitExit(claimer), 0);
  EXPECT_EQ(shared->ResidentPages(), 0u);
  const pid_t later = Fork([&] {
    return ForkSharedClaimExit(*shared, std::nullopt) | ForkSharedAwaitExit(*shared, std::nullopt);
  });
  ASSERT_GT(later, 0);
  EXPECT_EQ(WaitExit(later), 0);
  EXPECT_EQ(ForkSharedClaimExit(*shared, std::nullopt), 0);
}

// The owner may claim what it published itself (its own first reader);
// a child forked after gets nothing. Nothing published: nothing claimed.
TEST(ForkSharedBytes, TheOwnerClaimsWhatItPublished) {
  auto shared = ForkSharedBytes::Map(8);
  ASSERT_NE(shared, nullptr);
  ASSERT_TRUE(shared->Publish({"ab", "cdefg"}));
  EXPECT_EQ(ForkSharedClaimExit(*shared, ForkPieces{"ab", "cdefg"}), 0);
  const pid_t child = Fork([&] { return ForkSharedAwaitExit(*shared, std::nullopt); });
  ASSERT_GT(child, 0);
  EXPECT_EQ(WaitExit(child), 0);

  auto none = ForkSharedBytes::Map(8);
  ASSERT_NE(none, nullptr);
  none->PublishNothing();
  EXPECT_EQ(ForkSharedClaimExit(*none, std::nullopt), 0);
}

// The owner's fork hook runs just before each of its forks (here it
// publishes, so the child forked gets the bytes), not before one in a
// child of its, and not once it is ended.
TEST(ForkSharedBytes, TheOwnersForkHookPublishesBeforeItsFork) {
  auto shared = ForkSharedBytes::Map(8);
  ASSERT_NE(shared, nullptr);
  int runs = 0;
  shared->OnFork([&] {
    ++runs;
    shared->Publish({"forked"});
  });
  EXPECT_FALSE(shared->Forked());
  EXPECT_EQ(runs, 0);
  const pid_t child = Fork([&] {
    // A fork of the child's own runs no hook of the owner's.
    const pid_t grandchild = Fork([] { return 0; });
    return grandchild > 0 && WaitExit(grandchild) == 0 && runs == 1 ? ForkSharedAwaitExit(*shared, ForkPieces{"forked"}) : 1;
  });
  ASSERT_GT(child, 0);
  EXPECT_EQ(WaitExit(child), 0);
  EXPECT_TRUE(shared->Forked());
  EXPECT_EQ(runs, 1);
  shared->OnFork(nullptr);
  const pid_t after = Fork([] { return 0; });
  ASSERT_GT(after, 0);
  EXPECT_EQ(WaitExit(after), 0);
  EXPECT_EQ(runs, 1);
}

TEST(ForkSharedBytes, AStopEndsTheWaitWithNothing) {
  auto shared = ForkSharedBytes::Map(1);
  ASSERT_NE(shared, nullptr);
  // Stopped before the wait: a forked child of a threaded process starts
  // no thread of its own (ThreadSanitizer ends such a child).
  const pid_t child = Fork([&] {
    std::stop_source stop;
    stop.request_stop();
    return shared->Await(stop.get_token()).has_value() ? 1 : 0;
  });
  ASSERT_GT(child, 0);
  EXPECT_EQ(WaitExit(child), 0);
}

// The owner is a process the test forks; it maps, forks the waiter, and
// exits without deciding. The waiter tells through a pipe what its wait
// ended with: 'n' nothing.
TEST(ForkSharedBytes, TheOwnerGoneEndsTheWaitWithNothing) {
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  const pid_t owner = Fork([&] {
    close(pipe_fds[0]);
    auto shared = ForkSharedBytes::Map(4);
    if (shared == nullptr) return 2;
    const pid_t waiter = Fork([&] {
      const char told = shared->Await().has_value() ? 'b' : 'n';
      return write(pipe_fds[1], &told, 1) == 1 ? 0 : 1;
    });
    if (waiter <= 0) return 3;
    // Tell the test the waiter's pid (to end it, were it to hang), and
    // leave, whether it waits already or not yet.
    return write(pipe_fds[1], &waiter, sizeof(waiter)) == sizeof(waiter) ? 0 : 4;
  });
  ASSERT_GT(owner, 0);
  close(pipe_fds[1]);
  pid_t waiter = 0;
  ASSERT_EQ(read(pipe_fds[0], &waiter, sizeof(waiter)), static_cast<ssize_t>(sizeof(waiter)));
  EXPECT_EQ(WaitExit(owner), 0);  // reaped: not even a zombie is left
  pollfd told_fd{pipe_fds[0], POLLIN, 0};
  // Only a bound on a hang (the waiter checks every 20 ms), not a timing.
  const bool told = poll(&told_fd, 1, 60'000) == 1;
  if (!told) kill(waiter, SIGKILL);
  char told_what = 0;
  if (told) {
    EXPECT_EQ(read(pipe_fds[0], &told_what, 1), 1);
  }
  close(pipe_fds[0]);
  EXPECT_TRUE(told) << "the waiter was still waiting with its owner gone";
  EXPECT_EQ(told_what, 'n');
}

}  // namespace
}  // namespace sluice
