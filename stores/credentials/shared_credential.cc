#include "stores/credentials/shared_credential.h"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <map>
#include <set>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "base/exception_status.h"

namespace sluice {

// Every live SharedCredential and the per-key registry, guarded by one
// mutex that the fork handlers hold across fork().
struct SharedCredentialForkHooks {
  static std::mutex& Mu() {
    static auto* mu = new std::mutex;  // leaked: used until process exit
    return *mu;
  }
  static std::set<SharedCredential*>& Live() {
    static auto* live = new std::set<SharedCredential*>;
    return *live;
  }
  static std::map<std::string, std::weak_ptr<SharedCredential>>& ByKey() {
    static auto* by_key = new std::map<std::string, std::weak_ptr<SharedCredential>>;
    return *by_key;
  }
  static void Prepare() {
    Mu().lock();
    for (SharedCredential* c : Live()) c->mu_.lock();
  }
  static void Parent() {
    for (SharedCredential* c : Live()) c->mu_.unlock();
    Mu().unlock();
  }
  static void Child() {
    for (SharedCredential* c : Live()) {
      c->ResetInForkedChild();
      c->mu_.unlock();
    }
    Mu().unlock();
  }
  static void InstallOnce() {
    static std::once_flag once;
    std::call_once(once, [] { ::pthread_atfork(Prepare, Parent, Child); });
  }
};

namespace {

// A failed fetch is tried again, as often as it takes, after a backoff that
// starts at retry_initial_s and doubles up to retry_max_s, without jitter:
// the refresher is one thread per credential and process, and its clock
// counts whole seconds.
RetryOptions RefreshRetryOptions(const SharedCredentialOptions& o) {
  using std::chrono::seconds;
  return RetryOptions{.retries = RetryOptions::kUnlimitedRetries,
                      .backoff_base = seconds(std::max<int64_t>(o.retry_initial_s, 0)),
                      .backoff_max = seconds(std::max<int64_t>(o.retry_max_s, 0)),
                      .jitter = false,
                      .retryable = nullptr};
}

}  // namespace

SharedCredential::SharedCredential(std::unique_ptr<CredentialChain> chain,
                                   SharedCredentialOptions options)
    : chain_(std::move(chain)),
      options_(std::move(options)),
      cv_(new std::condition_variable),
      retry_(RefreshRetryOptions(options_)) {
  SharedCredentialForkHooks::InstallOnce();
  std::lock_guard<std::mutex> lock(SharedCredentialForkHooks::Mu());
  SharedCredentialForkHooks::Live().insert(this);
}

SharedCredential::~SharedCredential() {
  {
    std::lock_guard<std::mutex> lock(SharedCredentialForkHooks::Mu());
    SharedCredentialForkHooks::Live().erase(this);
  }
  std::thread* refresher = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    cv_->notify_all();
    refresher = refresher_;
    refresher_ = nullptr;
  }
  if (refresher != nullptr) {
    refresher->join();
    delete refresher;
  }
  delete cv_;
}

void SharedCredential::ResetInForkedChild() {
  // The parent's refresher thread and any fetch it ran do not exist here;
  // their objects are left untouched (leaked) rather than joined.
  refresher_ = nullptr;
  refresher_pid_ = 0;
  refresher_failed_ = false;
  fetching_ = false;
  fetch_wanted_ = false;
  cv_ = new std::condition_variable;
}

int64_t SharedCredential::Now() const {
  return options_.clock ? options_.clock() : static_cast<int64_t>(std::time(nullptr));
}

int64_t SharedCredential::RefreshAtLocked() const {
  int64_t expires = *current_->expires_at;
  int64_t ahead = std::min(options_.refresh_ahead_s, (expires - fetched_at_) / 2);
  return std::max(expires - std::max<int64_t>(ahead, 0), next_attempt_at_);
}

bool SharedCredential::MustFetchLocked(int64_t now) const {
  if (!first_done_) return true;
  if (now < next_attempt_at_) return false;  // backing off after a failure
  if (!current_) return options_.retry_first_fetch;
  if (options_.min_validity_s <= 0 || !current_->expires_at) return false;
  // Capped at half the lifetime: a token issued for less than twice the
  // margin would otherwise be fetched anew for every request.
  const int64_t lifetime = *current_->expires_at - fetched_at_;
  const int64_t min_validity =
      std::min(options_.min_validity_s, std::max<int64_t>(lifetime / 2, 0));
  return now + min_validity >= *current_->expires_at;
}

int64_t SharedCredential::WaitAfterFailureS(const Status& failure, int failures) {
  const RetryDecision next = retry_.Decide(failure, failures);
  return std::chrono::duration_cast<std::chrono::seconds>(next.delay).count();
}

bool SharedCredential::FetchLocked(std::unique_lock<std::mutex>& lock) {
  const bool first = !current_;
  fetching_ = true;
  fetch_wanted_ = false;
  lock.unlock();
  int64_t now = Now();
  Result<Credential> got = InternalError("not fetched");
  std::exception_ptr thrown = CatchAll([&] { got = chain_->Fetch(now); });
  if (thrown) {
    got = StatusFromException(thrown, (first ? "fetching " : "refreshing ") + chain_->what());
  }
  std::string attempts = first ? chain_->DescribeAttempts() : "";
  lock.lock();
  if (!fetching_) return false;  // forked meanwhile: this child does not own the fetch
  fetching_ = false;
  ++attempts_done_;
  if (first) {
    first_done_ = true;
    attempts_ = std::move(attempts);
  }
  if (got.ok()) {
    current_ = std::move(got).value();
    fetched_at_ = now;
    ++fetches_;
    failures_ = 0;
    next_attempt_at_ = 0;
    refresh_error_ = Status::Ok();
    first_status_ = Status::Ok();
  } else {
    ++failures_;
    (first ? first_status_ : refresh_error_) = got.status();
    next_attempt_at_ = now + WaitAfterFailureS(got.status(), failures_);
  }
  cv_->notify_all();
  return true;
}

Result<Credential> SharedCredential::Get() {
  std::unique_lock<std::mutex> lock(mu_);
  // Wait for a fetch under way only when this call needs one; after our own
  // fetch, take its outcome as it is (a fresh credential may still be short-lived).
  while (MustFetchLocked(Now())) {
    if (fetching_) {
      cv_->wait(lock);
      continue;
    }
    if (!FetchLocked(lock)) return UnavailableError("credential fetch abandoned by fork; retry");
    break;
  }
  return AnswerLocked();
}

Result<Credential> SharedCredential::AnswerLocked() {
  if (!current_) return first_status_;
  if (current_->expires_at) {
    if (options_.background && refresher_ == nullptr && !stop_) StartRefresherLocked();
    if (Now() >= *current_->expires_at) {
      return UnavailableError("the credential from " + current_->source + " expired at " +
                              std::to_string(*current_->expires_at) +
                              " (unix time) and refreshing it " +
                              (refresh_error_.ok() ? std::string("has not succeeded yet")
                                                   : "failed: " + refresh_error_.message()));
    }
  }
  return *current_;
}

boost::asio::awaitable<Result<Credential>> SharedCredential::AwaitGet() {
  boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor);
  // attempts_done_ when this call first found a fetch due: once another
  // attempt has completed, its outcome is taken as it is (as Get() takes
  // its own fetch's), so a token that arrives already expired ends the wait.
  std::optional<int64_t> asked_at;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      const bool fetched_since = asked_at && attempts_done_ != *asked_at;
      if (fetched_since || !MustFetchLocked(Now())) co_return AnswerLocked();
      if (refresher_failed_) co_return refresh_error_;  // nobody left to fetch
      if (!asked_at) asked_at = attempts_done_;
      fetch_wanted_ = true;
      if (options_.background && refresher_ == nullptr && !stop_) StartRefresherLocked();
      cv_->notify_all();  // wakes the refresher (again, should it have missed it)
    }
    timer.expires_after(std::chrono::milliseconds(std::max<int64_t>(options_.await_poll_ms, 1)));
    // A cancelled wait (the request's own cancellation) is an error, not an
    // exception out of the request's coroutine.
    auto [ec] = co_await timer.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
    if (ec) co_return CancelledError("waiting for a credential: " + ec.message());
  }
}

bool SharedCredential::RefreshIfDue() {
  std::unique_lock<std::mutex> lock(mu_);
  if (fetching_) return false;
  if (fetch_wanted_ && MustFetchLocked(Now())) return FetchLocked(lock);
  if (!current_ || !current_->expires_at) return false;
  if (Now() < RefreshAtLocked()) return false;
  return FetchLocked(lock);
}

void SharedCredential::StartRefresherLocked() {
  refresher_pid_ = ::getpid();
  refresher_ = new std::thread([this] {
    std::exception_ptr thrown = CatchAll([this] { RefresherLoop(); });
    if (thrown) {  // the loop's own machinery failed: say so to the next Get()
      std::lock_guard<std::mutex> lock(mu_);
      refresh_error_ = StatusFromException(thrown, "refresher of " + chain_->what());
      refresher_failed_ = true;
    }
  });
}

void SharedCredential::RefresherLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    lock.unlock();
    std::exception_ptr thrown = CatchAll([&] { RefreshIfDue(); });
    lock.lock();
    if (thrown) {
      refresh_error_ = StatusFromException(thrown, "refreshing " + chain_->what());
      next_attempt_at_ = Now() + WaitAfterFailureS(refresh_error_, 1);
    }
    if (stop_) break;
    // The clock counts whole seconds: look every second, and every 100 ms
    // once the refresh is due within a second (so it starts at most 100 ms
    // late, not up to a second late).
    int64_t wait_s = current_ && current_->expires_at ? RefreshAtLocked() - Now() : 2;
    auto wait = std::chrono::milliseconds(wait_s <= 1 ? 100 : 1000);
    cv_->wait_for(lock, wait);
  }
}

int64_t SharedCredential::fetches() const {
  std::lock_guard<std::mutex> lock(mu_);
  return fetches_;
}

std::string SharedCredential::DescribeAttempts() const {
  std::lock_guard<std::mutex> lock(mu_);
  return attempts_;
}

std::string SharedCredential::DescribeInUse(const Credential& current, std::string_view how) const {
  std::string out = "  credentials: " + current.source + " (" + std::string(how) + ")\n";
  if (current.expires_at) out += "  expires: " + std::to_string(*current.expires_at) + " (unix time)\n";
  return out + "  sources tried: " + DescribeAttempts() + "\n";
}

std::shared_ptr<SharedCredential> SharedCredentialFor(
    const std::string& key, const std::function<std::shared_ptr<SharedCredential>()>& make) {
  SharedCredentialForkHooks::InstallOnce();
  {
    std::lock_guard<std::mutex> lock(SharedCredentialForkHooks::Mu());
    auto& by_key = SharedCredentialForkHooks::ByKey();
    if (auto it = by_key.find(key); it != by_key.end()) {
      if (auto live = it->second.lock()) return live;
    }
  }
  // Built outside the lock: the constructor registers itself under it.
  std::shared_ptr<SharedCredential> made = make();
  std::shared_ptr<SharedCredential> winner;
  {
    std::lock_guard<std::mutex> lock(SharedCredentialForkHooks::Mu());
    auto& by_key = SharedCredentialForkHooks::ByKey();
    // Drop the entries of credentials nobody holds any more.
    for (auto it = by_key.begin(); it != by_key.end();) {
      it = it->second.expired() && it->first != key ? by_key.erase(it) : std::next(it);
    }
    auto& slot = by_key[key];
    winner = slot.lock();  // another thread may have won the race
    if (!winner) slot = winner = made;
  }
  return winner;  // a losing `made` dies here, outside the lock its destructor takes
}

}  // namespace sluice
