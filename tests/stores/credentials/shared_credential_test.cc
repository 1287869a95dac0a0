// SharedCredential: one fetch, refresh ahead of expiry, backoff, errors only
// after expiry, one object per key, fork. A fake clock drives every decision
// (background = false and RefreshIfDue() called by the test) except in the
// two tests that run the refresher thread, whose bounds are generous.
#include "stores/credentials/shared_credential.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include "tests/stores/credentials/fake_credential_source.h"

namespace sluice {
namespace {

using testing::NumberedCredential;
using testing::ScriptedSource;

struct FakeClock {
  std::atomic<int64_t> now{1000};
  std::function<int64_t()> fn() {
    return [this] { return now.load(); };
  }
};

// A shared credential over one scripted source; *source stays owned by it.
std::unique_ptr<SharedCredential> Make(ScriptedSource::Answer answer, ScriptedSource** source,
                                       SharedCredentialOptions options) {
  auto s = std::make_unique<ScriptedSource>("scripted", std::move(answer));
  *source = s.get();
  std::vector<std::unique_ptr<CredentialSource>> sources;
  sources.push_back(std::move(s));
  return std::make_unique<SharedCredential>(
      std::make_unique<CredentialChain>("test credentials", std::move(sources)),
      std::move(options));
}

SharedCredentialOptions Manual(FakeClock& clock) {
  SharedCredentialOptions o;
  o.clock = clock.fn();
  o.refresh_ahead_s = 300;
  o.retry_initial_s = 10;
  o.retry_max_s = 40;
  o.background = false;
  return o;
}

TEST(SharedCredentialTest, FetchesOnceAndRefreshesAheadOfExpiry) {
  FakeClock clock;
  ScriptedSource* source = nullptr;
  auto cred = Make(
      [](int call, int64_t now) -> Result<Credential> {
        return NumberedCredential("scripted", call, now, 3600);
      },
      &source, Manual(clock));
  for (int i = 0; i < 3; ++i) {
    auto got = cred->Get();
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(got->keys.access_key_id, "key-1");
  }
  EXPECT_EQ(source->calls(), 1);
  clock.now = 1000 + 3600 - 301;
  EXPECT_FALSE(cred->RefreshIfDue());
  clock.now = 1000 + 3600 - 300;
  EXPECT_TRUE(cred->RefreshIfDue());
  EXPECT_EQ(cred->Get()->keys.access_key_id, "key-2");
  EXPECT_FALSE(cred->RefreshIfDue());  // the new one is not due yet
  EXPECT_EQ(source->calls(), 2);
  EXPECT_EQ(cred->fetches(), 2);
}

TEST(SharedCredentialTest, ShortLivedCredentialRefreshesAtHalfItsLifetime) {
  FakeClock clock;
  ScriptedSource* source = nullptr;
  auto cred = Make(
      [](int call, int64_t now) -> Result<Credential> {
        return NumberedCredential("scripted", call, now, 4);
      },
      &source, Manual(clock));
  ASSERT_TRUE(cred->Get().ok());
  clock.now = 1001;
  EXPECT_FALSE(cred->RefreshIfDue());
  clock.now = 1002;
  EXPECT_TRUE(cred->RefreshIfDue());
  EXPECT_EQ(cred->Get()->keys.access_key_id, "key-2");
}

TEST(SharedCredentialTest, FailedRefreshBacksOffAndSurfacesOnlyAfterExpiry) {
  FakeClock clock;
  ScriptedSource* source = nullptr;
  auto cred = Make(
      [](int call, int64_t now) -> Result<Credential> {
        if (call == 1 || call == 5) return NumberedCredential("scripted", call, now, 1000);
        return UnavailableError("STS answered 503");
      },
      &source, Manual(clock));
  ASSERT_TRUE(cred->Get().ok());                        // call 1, expires at 2000
  clock.now = 1700;                                     // due (300 s ahead)
  EXPECT_TRUE(cred->RefreshIfDue());                    // call 2 fails; next try at 1710
  EXPECT_EQ(cred->Get()->keys.access_key_id, "key-1");  // the old one still serves
  clock.now = 1709;
  EXPECT_FALSE(cred->RefreshIfDue());
  clock.now = 1710;
  EXPECT_TRUE(cred->RefreshIfDue());  // call 3 fails; next at 1730
  clock.now = 1729;
  EXPECT_FALSE(cred->RefreshIfDue());
  clock.now = 1730;
  EXPECT_TRUE(cred->RefreshIfDue());  // call 4 fails; next at 1770
  clock.now = 2000;                   // expired, refresh still failing
  auto expired = cred->Get();
  EXPECT_EQ(expired.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(expired.status().message(),
            "the credential from scripted expired at 2000 (unix time) and refreshing it "
            "failed: scripted: STS answered 503");
  EXPECT_TRUE(cred->RefreshIfDue());  // call 5 succeeds
  auto back = cred->Get();
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->keys.access_key_id, "key-5");
  EXPECT_EQ(source->calls(), 5);
}

TEST(SharedCredentialTest, FirstFetchErrorIsRememberedNotRetriedPerRequest) {
  FakeClock clock;
  ScriptedSource* source = nullptr;
  auto cred =
      Make([](int, int64_t) -> Result<Credential> { return NotFoundError("SCRIPT not set"); },
           &source, Manual(clock));
  for (int i = 0; i < 2; ++i) {
    auto got = cred->Get();
    EXPECT_EQ(got.status().message(),
              "no test credentials found; tried: scripted (SCRIPT not set)");
  }
  EXPECT_EQ(source->calls(), 1);
  EXPECT_EQ(cred->DescribeAttempts(), "scripted (SCRIPT not set)");
}

// A bearer token must outlive the request it authorizes: within
// min_validity_s of its expiry, Get() refreshes first (blocking) instead of
// handing the old one out; a failed refresh backs off and the old one
// serves until it expires.
TEST(SharedCredentialTest, MinValidityRefreshesBeforeHandingOut) {
  FakeClock clock;
  ScriptedSource* source = nullptr;
  SharedCredentialOptions options = Manual(clock);
  options.min_validity_s = 60;
  auto cred = Make(
      [](int call, int64_t now) -> Result<Credential> {
        if (call == 3) return UnavailableError("token endpoint answered 503");
        return NumberedCredential("scripted", call, now, 200);
      },
      &source, options);
  EXPECT_EQ(cred->Get()->keys.access_key_id, "key-1");  // expires at 1200
  clock.now = 1139;
  EXPECT_EQ(cred->Get()->keys.access_key_id, "key-1");  // 61 s left
  clock.now = 1140;
  EXPECT_EQ(cred->Get()->keys.access_key_id, "key-2");  // 60 s left: refreshed first
  EXPECT_EQ(source->calls(), 2);
  clock.now = 1280;                                     // key-2 expires at 1340
  EXPECT_EQ(cred->Get()->keys.access_key_id, "key-2");  // call 3 failed: next try at 1290
  EXPECT_EQ(cred->Get()->keys.access_key_id, "key-2");  // backing off: not asked again
  EXPECT_EQ(source->calls(), 3);
  clock.now = 1290;
  EXPECT_EQ(cred->Get()->keys.access_key_id, "key-4");
  EXPECT_EQ(source->calls(), 4);
}

// A token issued for less than twice min_validity_s (here 30 s against
// 60 s) serves the first half of its life instead of being fetched anew for
// every request.
TEST(SharedCredentialTest, MinValidityIsAtMostHalfTheLifetime) {
  FakeClock clock;
  ScriptedSource* source = nullptr;
  SharedCredentialOptions options = Manual(clock);
  options.min_validity_s = 60;
  auto cred = Make(
      [](int call, int64_t now) -> Result<Credential> {
        return NumberedCredential("scripted", call, now, 30);
      },
      &source, options);
  EXPECT_EQ(cred->Get()->keys.access_key_id, "key-1");  // expires at 1030
  EXPECT_EQ(cred->Get()->keys.access_key_id, "key-1");
  clock.now = 1014;
  EXPECT_EQ(cred->Get()->keys.access_key_id, "key-1");  // 16 s left of 30
  EXPECT_EQ(source->calls(), 1);
  clock.now = 1015;
  EXPECT_EQ(cred->Get()->keys.access_key_id, "key-2");  // 15 s left: refreshed first
  clock.now = 1029;
  EXPECT_EQ(cred->Get()->keys.access_key_id, "key-2");  // key-2 expires at 1045
  EXPECT_EQ(source->calls(), 2);
}

// Runs `awaitable` on `context` until it completes or `rounds` polls of the
// context have passed; the answer, or nullopt while it is still waiting.
struct AwaitRun {
  boost::asio::io_context context;
  std::optional<Result<Credential>> answer;
  void Start(SharedCredential& cred) {
    answer.reset();
    boost::asio::co_spawn(
        context, [&]() -> boost::asio::awaitable<void> { answer = co_await cred.AwaitGet(); },
        boost::asio::detached);
  }
  // Lets the coroutine poll a few times (it polls every millisecond here).
  void Spin() {
    context.restart();
    context.run_for(std::chrono::milliseconds(20));
  }
};

// A bearer-token-like credential for the AwaitGet() tests: keys living
// `lifetime` s, min_validity_s 60, on `clock`, refreshed by the test.
std::unique_ptr<SharedCredential> MakeAwaited(FakeClock& clock, int64_t lifetime,
                                              ScriptedSource** source) {
  SharedCredentialOptions options = Manual(clock);
  options.min_validity_s = 60;
  options.await_poll_ms = 1;
  return Make(
      [lifetime](int call, int64_t now) -> Result<Credential> {
        return NumberedCredential("scripted", call, now, lifetime);
      },
      source, options);
}

// AwaitGet() never runs the chain on its caller's thread: a due fetch (the
// first, then one min_validity_s asks for) waits for the refresher's step
// (RefreshIfDue(), called by the test here: background = false) and then
// answers what that fetch brought.
TEST(SharedCredentialTest, AwaitGetWaitsForTheRefresherInsteadOfFetching) {
  FakeClock clock;
  ScriptedSource* source = nullptr;
  auto cred = MakeAwaited(clock, 200, &source);
  AwaitRun run;
  run.Start(*cred);
  run.Spin();
  EXPECT_FALSE(run.answer.has_value());
  EXPECT_EQ(source->calls(), 0);
  EXPECT_TRUE(cred->RefreshIfDue());  // the first fetch, asked for by AwaitGet
  run.Spin();
  ASSERT_TRUE(run.answer.has_value());
  ASSERT_TRUE(run.answer->ok()) << run.answer->status().ToString();
  EXPECT_EQ((*run.answer)->keys.access_key_id, "key-1");  // expires at 1200

  clock.now = 1139;  // 61 s left: served without a fetch
  run.Start(*cred);
  run.Spin();
  ASSERT_TRUE(run.answer.has_value());
  EXPECT_EQ((*run.answer)->keys.access_key_id, "key-1");
  EXPECT_EQ(source->calls(), 1);

  clock.now = 1140;  // 60 s left: waits for a refresh
  run.Start(*cred);
  run.Spin();
  EXPECT_FALSE(run.answer.has_value());
  EXPECT_EQ(source->calls(), 1);
  EXPECT_TRUE(cred->RefreshIfDue());
  run.Spin();
  ASSERT_TRUE(run.answer.has_value());
  EXPECT_EQ((*run.answer)->keys.access_key_id, "key-2");
  EXPECT_EQ(source->calls(), 2);
}

// A token that arrives already expired ends the wait with the expiry error
// instead of asking for fetch after fetch.
TEST(SharedCredentialTest, AwaitGetTakesTheOutcomeOfTheFetchItWaitedFor) {
  FakeClock clock;
  ScriptedSource* source = nullptr;
  auto cred = MakeAwaited(clock, 0, &source);
  AwaitRun run;
  run.Start(*cred);
  run.Spin();
  EXPECT_TRUE(cred->RefreshIfDue());
  run.Spin();
  ASSERT_TRUE(run.answer.has_value());
  EXPECT_EQ(run.answer->status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(run.answer->status().message(),
            "the credential from scripted expired at 1000 (unix time) and refreshing it has "
            "not succeeded yet");
  EXPECT_EQ(source->calls(), 1);
}

// With the background refresher (real clock), AwaitGet's first fetch runs on
// the refresher thread, not on the thread that runs the event loop.
TEST(SharedCredentialTest, AwaitGetFetchesOnTheRefresherThread) {
  SharedCredentialOptions options;
  options.min_validity_s = 60;
  std::mutex mu;
  std::vector<std::thread::id> fetched_on;
  ScriptedSource* source = nullptr;
  auto cred = Make(
      [&](int call, int64_t now) -> Result<Credential> {
        std::lock_guard<std::mutex> lock(mu);
        fetched_on.push_back(std::this_thread::get_id());
        return NumberedCredential("scripted", call, now, 3600);
      },
      &source, options);
  boost::asio::io_context context;
  std::optional<Result<Credential>> answer;
  boost::asio::co_spawn(
      context, [&]() -> boost::asio::awaitable<void> { answer = co_await cred->AwaitGet(); },
      boost::asio::detached);
  context.run_for(std::chrono::seconds(20));
  ASSERT_TRUE(answer.has_value());
  ASSERT_TRUE(answer->ok()) << answer->status().ToString();
  EXPECT_EQ((*answer)->keys.access_key_id, "key-1");
  std::lock_guard<std::mutex> lock(mu);
  ASSERT_EQ(fetched_on.size(), 1u);
  EXPECT_NE(fetched_on[0], std::this_thread::get_id());
}

// With retry_first_fetch (a store that fetches at its first request, not at
// open), a failed first fetch is tried again once the backoff has elapsed.
TEST(SharedCredentialTest, RetryFirstFetchAfterBackoff) {
  FakeClock clock;
  ScriptedSource* source = nullptr;
  SharedCredentialOptions options = Manual(clock);
  options.retry_first_fetch = true;
  auto cred = Make(
      [](int call, int64_t now) -> Result<Credential> {
        if (call <= 2) return PermissionDeniedError("token endpoint answered 401");
        return NumberedCredential("scripted", call, now, 3600);
      },
      &source, options);
  auto first = cred->Get();  // call 1 fails; next try at 1010
  EXPECT_EQ(first.status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(first.status().message(), "scripted: token endpoint answered 401");
  clock.now = 1009;
  EXPECT_EQ(cred->Get().status().message(), "scripted: token endpoint answered 401");
  EXPECT_EQ(source->calls(), 1);
  clock.now = 1010;
  EXPECT_EQ(cred->Get().status().code(), StatusCode::kPermissionDenied);  // call 2; next at 1030
  clock.now = 1029;
  EXPECT_FALSE(cred->Get().ok());
  EXPECT_EQ(source->calls(), 2);
  clock.now = 1030;
  auto got = cred->Get();  // call 3
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->keys.access_key_id, "key-3");
  EXPECT_EQ(cred->fetches(), 1);
}

TEST(SharedCredentialTest, OneObjectPerKeyWhileAnyoneHoldsIt) {
  FakeClock clock;
  int made = 0;
  auto make = [&] {
    ++made;
    ScriptedSource* source = nullptr;
    return std::shared_ptr<SharedCredential>(Make(
        [](int call, int64_t now) -> Result<Credential> {
          return NumberedCredential("scripted", call, now, -1);
        },
        &source, Manual(clock)));
  };
  auto a = SharedCredentialFor("key-a", make);
  auto b = SharedCredentialFor("key-a", make);
  auto c = SharedCredentialFor("key-c", make);
  EXPECT_EQ(a.get(), b.get());
  EXPECT_NE(a.get(), c.get());
  EXPECT_EQ(made, 2);
  a.reset();
  b.reset();
  auto again = SharedCredentialFor("key-a", make);
  EXPECT_EQ(made, 3);
}

// Real threads and the real clock: a credential living 2 s is refreshed by
// the background thread (at 1 s) while a reader keeps asking; no Get()
// fails, and refreshes stay near one per lifetime.
TEST(SharedCredentialTest, BackgroundRefresherKeepsAShortLivedCredentialValid) {
  SharedCredentialOptions options;
  options.refresh_ahead_s = 300;  // capped at half the lifetime
  ScriptedSource* source = nullptr;
  auto cred = Make(
      [](int call, int64_t now) -> Result<Credential> {
        return NumberedCredential("scripted", call, now, 2);
      },
      &source, options);
  auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - start < std::chrono::seconds(7)) {
    auto got = cred->Get();
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // ~7 fetches in 7 s at one per second; generous bounds for a loaded machine.
  EXPECT_GE(source->calls(), 3);
  EXPECT_LE(source->calls(), 12);
}

// A child forked while the parent's refresh is under way gets the
// parent's completed credential, not its half-done refresh, and its own
// refresher produces the next one.
TEST(SharedCredentialTest, ForkedChildNeverReusesTheParentsRefreshInFlight) {
  FakeClock clock;
  std::atomic<bool> in_refresh{false};
  std::atomic<bool> release{false};
  ScriptedSource* source = nullptr;
  const pid_t parent = getpid();
  auto cred = Make(
      [&](int call, int64_t now) -> Result<Credential> {
        if (call == 2 && getpid() == parent) {
          in_refresh = true;
          while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        return NumberedCredential("scripted", call, now, 1000);
      },
      &source, Manual(clock));
  ASSERT_TRUE(cred->Get().ok());
  clock.now = 1000 + 1000 - 300;
  std::thread parent_refresh([&] { cred->RefreshIfDue(); });
  while (!in_refresh) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  pid_t child = fork();
  if (child == 0) {
    // The parent's refresh does not exist here: the old credential serves,
    // and a refresh of the child's own runs and completes (call 3: the
    // source counted the parent's call 2 before the fork).
    auto got = cred->Get();
    bool ok = got.ok() && got->keys.access_key_id == "key-1";
    ok = ok && cred->RefreshIfDue();
    got = cred->Get();
    ok = ok && got.ok() && got->keys.access_key_id == "key-3";
    _exit(ok ? 0 : 1);
  }
  ASSERT_GT(child, 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  release = true;
  parent_refresh.join();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_EQ(cred->Get()->keys.access_key_id, "key-2");
}

}  // namespace
}  // namespace sluice
