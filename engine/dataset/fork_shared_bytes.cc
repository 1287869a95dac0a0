#include "engine/dataset/fork_shared_bytes.h"

#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <mutex>
#include <new>

namespace sluice {
namespace {

void WakeAll(std::atomic<uint32_t>& word) {
  ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAKE, INT_MAX, nullptr, nullptr,
            0);
}

// Until `word` may have left `from`, or 20 ms (the caller's other reasons
// to stop are checked that often).
void WaitWhile(std::atomic<uint32_t>& word, uint32_t from) {
  timespec most{0, 20 * 1000 * 1000};
  ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAIT, from, &most, nullptr, 0);
}

size_t PageBytes() { return static_cast<size_t>(::sysconf(_SC_PAGESIZE)); }

size_t PagesOf(uint64_t bytes) { return (bytes + PageBytes() - 1) / PageBytes(); }

}  // namespace

// Every owner's mapping of this process with a fork hook, run before each
// fork (the hooks of another process's mappings, copied by a fork, never
// run: their locks may have been copied held).
struct ForkSharedBytesForks {
  std::mutex mu;
  std::vector<ForkSharedBytes*> owned;

  static ForkSharedBytesForks& Get() {
    static ForkSharedBytesForks* forks = [] {
      auto* f = new ForkSharedBytesForks();  // never destroyed: handlers may run at any time
      ::pthread_atfork(Prepare, Unlock, Unlock);
      return f;
    }();
    return *forks;
  }
  static void Prepare() {
    ForkSharedBytesForks& f = Get();
    f.mu.lock();
    const pid_t me = getpid();
    for (ForkSharedBytes* shared : f.owned) {
      if (shared->owner_ != me) continue;
      shared->forked_.store(true, std::memory_order_release);
      try {
        shared->before_fork_();
      } catch (...) {
        // A hook that failed only leaves its bytes unpublished.
      }
    }
  }
  static void Unlock() { Get().mu.unlock(); }
};

// `state` leaves kRunning once, after `count`, `sizes` and the bytes are
// written; it leaves kBytes (for kClaimed) at most once.
struct ForkSharedBytes::Header {
  static constexpr uint32_t kRunning = 0, kBytes = 1, kNone = 2, kClaimed = 3;
  static_assert(std::atomic<uint32_t>::is_always_lock_free);
  std::atomic<uint32_t> state{kRunning};
  uint32_t count = 0;
  uint64_t sizes[kMaxPieces] = {};
};

std::unique_ptr<ForkSharedBytes> ForkSharedBytes::Map(uint64_t capacity) {
  // The header in a page of its own: the bytes' pages are given back
  // without it.
  const size_t bytes_at = PageBytes();
  static_assert(sizeof(Header) <= 4096);
  const size_t mapped = bytes_at + capacity;
  void* at = ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (at == MAP_FAILED) return nullptr;
  return std::unique_ptr<ForkSharedBytes>(
      new ForkSharedBytes(new (at) Header(), capacity, bytes_at, mapped));
}

ForkSharedBytes::ForkSharedBytes(Header* header, uint64_t capacity, size_t bytes_at,
                                 size_t mapped)
    : header_(header), capacity_(capacity), bytes_at_(bytes_at), mapped_(mapped),
      owner_(getpid()) {}

ForkSharedBytes::~ForkSharedBytes() {
  if (before_fork_) {
    ForkSharedBytesForks& f = ForkSharedBytesForks::Get();
    std::lock_guard<std::mutex> lock(f.mu);
    std::erase(f.owned, this);
  }
  ::munmap(header_, mapped_);
}

void ForkSharedBytes::OnFork(std::function<void()> before) {
  ForkSharedBytesForks& f = ForkSharedBytesForks::Get();
  std::lock_guard<std::mutex> lock(f.mu);
  if (!before_fork_ && before) f.owned.push_back(this);
  if (before_fork_ && !before) std::erase(f.owned, this);
  before_fork_ = std::move(before);
}

bool ForkSharedBytes::Forked() const { return forked_.load(std::memory_order_acquire); }

char* ForkSharedBytes::bytes() const { return reinterpret_cast<char*>(header_) + bytes_at_; }

bool ForkSharedBytes::Publish(const Pieces& pieces) {
  if (header_->state.load(std::memory_order_acquire) != Header::kRunning) return false;
  uint64_t total = 0;
  for (std::string_view piece : pieces) total += piece.size();
  if (pieces.size() > kMaxPieces || total > capacity_) {
    PublishNothing();
    return false;
  }
  char* to = bytes();
  for (size_t i = 0; i < pieces.size(); ++i) {
    std::memcpy(to, pieces[i].data(), pieces[i].size());
    header_->sizes[i] = pieces[i].size();
    to += pieces[i].size();
  }
  header_->count = static_cast<uint32_t>(pieces.size());
  header_->state.store(Header::kBytes, std::memory_order_release);
  WakeAll(header_->state);
  return true;
}

void ForkSharedBytes::PublishNothing() {
  uint32_t running = Header::kRunning;
  if (header_->state.compare_exchange_strong(running, Header::kNone, std::memory_order_acq_rel)) {
    WakeAll(header_->state);
  }
}

std::optional<uint32_t> ForkSharedBytes::AwaitDecided(std::stop_token stop) {
  // A child of the owner's own sees it gone as its parent changes (at
  // once, even while the owner is a zombie); any other asks the kernel.
  const bool forked_by_owner = getppid() == owner_;
  auto owner_gone = [&] {
    return (forked_by_owner && getppid() != owner_) || (::kill(owner_, 0) != 0 && errno == ESRCH);
  };
  std::stop_callback wake(stop, [this] { WakeAll(header_->state); });
  uint32_t state;
  while ((state = header_->state.load(std::memory_order_acquire)) == Header::kRunning) {
    if (stop.stop_requested() || owner_gone()) return std::nullopt;
    WaitWhile(header_->state, Header::kRunning);
  }
  return state;
}

ForkSharedBytes::Pieces ForkSharedBytes::PiecesPublished() const {
  Pieces pieces;
  const char* from = bytes();
  for (uint32_t i = 0; i < header_->count; ++i) {
    pieces.emplace_back(from, header_->sizes[i]);
    from += header_->sizes[i];
  }
  return pieces;
}

std::optional<ForkSharedBytes::Pieces> ForkSharedBytes::Await(std::stop_token stop) {
  if (AwaitDecided(std::move(stop)) != Header::kBytes) return std::nullopt;
  return PiecesPublished();
}

bool ForkSharedBytes::Claim(const std::function<void(const Pieces&)>& take,
                            std::stop_token stop) {
  if (AwaitDecided(std::move(stop)) != Header::kBytes) return false;
  uint32_t published = Header::kBytes;
  if (!header_->state.compare_exchange_strong(published, Header::kClaimed,
                                              std::memory_order_acq_rel)) {
    return false;
  }
  // Given back even when `take` throws: nobody else may read them now.
  struct GiveBack {
    ForkSharedBytes& shared;
    ~GiveBack() {
      // The shared memory object's pages themselves (not only this
      // process's view of them), in every process at once.
      if (shared.capacity_ > 0) {
        ::madvise(shared.bytes(), PagesOf(shared.capacity_) * PageBytes(), MADV_REMOVE);
      }
    }
  } give_back{*this};
  take(PiecesPublished());
  return true;
}

uint64_t ForkSharedBytes::ResidentPages() const {
  const size_t pages = PagesOf(capacity_);
  if (pages == 0) return 0;
  std::vector<unsigned char> in(pages);
  if (::mincore(bytes(), pages * PageBytes(), in.data()) != 0) return 0;
  uint64_t n = 0;
  for (unsigned char page : in) n += page & 1;
  return n;
}

}  // namespace sluice
