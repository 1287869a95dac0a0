// A credential fetched once per process and shared by every connection and
// store that uses it, refreshed in the background before it expires, so that
// no request waits for a refresh or fails on expiry.
//
// Refresh: a credential with an expiry is refreshed `refresh_ahead_s` before
// it (at most half its lifetime before, for short-lived ones) by a thread
// the object starts on the first Get() in the process that uses it. A failed
// refresh is retried with exponential backoff; until the old credential
// expires Get() keeps handing it out, and only then does it return the
// refresh's error. A credential that must outlive the request it
// authorizes (a bearer token) sets `min_validity_s`: a fetch is due, rather
// than hand out one that expires sooner (at most half of its lifetime, so
// that a short-lived token still serves for a while).
//
// Two ways to wait for a due fetch: Get() runs it on the calling thread
// (blocking; for threads that may block: store open, `sluice whoami`);
// AwaitGet() hands it to the refresher thread and suspends the calling
// coroutine, so that an event loop's thread never blocks on the network
// (stores/http/blocking_http.h forbids that).
//
// Fork safety (PyTorch DataLoader workers fork): no thread exists before the
// first Get() of a credential with an expiry (or the first AwaitGet() that
// needs a fetch). A child forked later inherits
// the credential the parent had completed but none of the parent's work in
// flight: a pthread_atfork handler holds every SharedCredential's lock across
// fork(), and in the child drops the parent's refresher thread (which does
// not exist there) and any fetch it had under way; the child's first Get()
// starts its own refresher.
//
// Thread safety: every member is safe to call from any thread.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include <boost/asio/awaitable.hpp>

#include "base/retry_policy.h"
#include "base/status.h"
#include "stores/credentials/credential_chain.h"

namespace sluice {

struct SharedCredentialOptions {
  // Unix seconds. Null: the system clock. Tests inject a fake one.
  std::function<int64_t()> clock;
  // Refresh this long before expiry (at most half the credential's lifetime).
  int64_t refresh_ahead_s = 300;
  // Backoff between failed refreshes: initial, doubled per failure, capped
  // (a RetryPolicy without jitter or a limit on attempts).
  int64_t retry_initial_s = 1;
  int64_t retry_max_s = 60;
  // Start a refresher thread. False (tests): nothing refreshes unless the
  // caller calls RefreshIfDue().
  bool background = true;
  // Get() and AwaitGet() never hand out a credential expiring within this
  // many seconds (capped at half the credential's lifetime) while a refresh
  // may be tried (backoff elapsed): they refresh first and wait for it.
  // 0: anything unexpired is handed out.
  int64_t min_validity_s = 0;
  // After a failed first fetch, the first Get() once the backoff has elapsed
  // runs the chain again. False: the first error answers every later Get()
  // (a store that fetches at open, as S3's does, reports it there).
  bool retry_first_fetch = false;
  // How often AwaitGet() looks whether the refresher's fetch has completed.
  int64_t await_poll_ms = 10;
};

class SharedCredential {
 public:
  explicit SharedCredential(std::unique_ptr<CredentialChain> chain,
                            SharedCredentialOptions options = {});
  // Stops and joins the refresher thread (if this process started one).
  ~SharedCredential();
  SharedCredential(const SharedCredential&) = delete;
  SharedCredential& operator=(const SharedCredential&) = delete;

  // The current credential (a copy; it holds secrets). The first call in
  // the object's life runs the chain and blocks until it answers (other
  // callers wait for the same answer); later calls block on the network only
  // for the refreshes `min_validity_s` and `retry_first_fetch` ask for.
  // Errors: the chain's error of the first fetch (kNotFound when no source
  // applied, see CredentialChain::Fetch), remembered for later calls (until
  // a retry, with `retry_first_fetch`);
  // kUnavailable "the credential from <source> expired at <t> (unix time)
  // and refreshing it failed: <why>" once the credential has expired without a successful
  // refresh.
  Result<Credential> Get();

  // Get() for a coroutine on an event loop: the same answers, but a due
  // fetch (the first, or a refresh `min_validity_s` or `retry_first_fetch`
  // asks for) runs on the refresher thread (started here if `background`),
  // never on the calling thread; the coroutine waits for that fetch's
  // outcome on a timer of its executor, polling every `await_poll_ms`
  // (no cross-thread handler into an executor that may be gone by then).
  // With `background` false nothing fetches until someone calls
  // RefreshIfDue(). Errors: as Get(), plus the refresher thread's own
  // failure, should it have stopped. The object must outlive the returned
  // awaitable.
  boost::asio::awaitable<Result<Credential>> AwaitGet();

  // Runs one fetch now if one is due (expiry within the refresh window, or
  // one an AwaitGet() waits for; backoff elapsed, none under way). True when
  // it ran one. The refresher
  // thread calls this; tests with `background = false` call it themselves.
  bool RefreshIfDue();

  // Successful fetches so far, the first included.
  int64_t fetches() const;
  // The sources the first fetch tried and what each said (see
  // CredentialChain::DescribeAttempts); "" before the first Get().
  std::string DescribeAttempts() const;
  // The lines `sluice auth` prints of `current`, a credential Get() gave:
  // "  credentials: <its source> (<how>)", "  expires: <unix time>" when it
  // expires, "  sources tried: <DescribeAttempts()>". `how` says how it
  // signs (never a secret).
  std::string DescribeInUse(const Credential& current, std::string_view how) const;

 private:
  friend struct SharedCredentialForkHooks;
  int64_t Now() const;
  int64_t RefreshAtLocked() const;
  bool MustFetchLocked(int64_t now) const;
  Result<Credential> AnswerLocked();
  bool FetchLocked(std::unique_lock<std::mutex>& lock);
  // Seconds to wait before the next fetch, after `failures` failed ones in
  // a row (the last with `failure`).
  int64_t WaitAfterFailureS(const Status& failure, int failures);
  void StartRefresherLocked();
  void RefresherLoop();
  void ResetInForkedChild();

  std::unique_ptr<CredentialChain> chain_;
  SharedCredentialOptions options_;
  mutable std::mutex mu_;
  // Replaced (the old one leaked) in a forked child, whose copy may record
  // waiters of the parent.
  std::condition_variable* cv_;
  bool first_done_ = false;
  bool fetching_ = false;  // a chain fetch is under way (outside mu_)
  Status first_status_;
  std::optional<Credential> current_;
  int64_t fetched_at_ = 0;
  Status refresh_error_;
  int failures_ = 0;
  RetryPolicy retry_;  // decides the wait after each failed fetch
  int64_t next_attempt_at_ = 0;
  int64_t fetches_ = 0;
  int64_t attempts_done_ = 0;  // fetches completed, failed ones included
  bool fetch_wanted_ = false;  // an AwaitGet() waits for the refresher's fetch
  std::string attempts_;
  // The refresher, started in process refresher_pid_; null in a forked
  // child until its own first Get().
  std::thread* refresher_ = nullptr;
  pid_t refresher_pid_ = 0;
  bool refresher_failed_ = false;  // its loop threw: AwaitGet() must not wait for it
  bool stop_ = false;
};

// The process-wide SharedCredential for `key` (a digest of whatever decides
// the credential: environment values, profile, file paths; it may be derived
// from secrets, so never log it): the live one when another store holds it,
// else the one `make` builds. Thread-safe; fork-safe.
std::shared_ptr<SharedCredential> SharedCredentialFor(
    const std::string& key, const std::function<std::shared_ptr<SharedCredential>()>& make);

}  // namespace sluice
