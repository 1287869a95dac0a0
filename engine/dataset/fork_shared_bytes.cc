#include "engine/dataset/fork_shared_bytes.h"

#include <linux/futex.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
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

}  // namespace

// `state` leaves kRunning once, after `count`, `sizes` and the bytes that
// follow the header are written.
struct ForkSharedBytes::Header {
  static constexpr uint32_t kRunning = 0, kBytes = 1, kNone = 2;
  static_assert(std::atomic<uint32_t>::is_always_lock_free);
  std::atomic<uint32_t> state{kRunning};
  std::atomic<uint32_t> wanted{0};
  std::atomic<uint32_t> closing{0};  // the owner's: AwaitWanted is to end
  uint32_t count = 0;
  uint64_t sizes[kMaxPieces] = {};
  char* bytes() { return reinterpret_cast<char*>(this + 1); }
};

std::unique_ptr<ForkSharedBytes> ForkSharedBytes::Map(uint64_t capacity) {
  const size_t mapped = sizeof(Header) + capacity;
  void* at = ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (at == MAP_FAILED) return nullptr;
  return std::unique_ptr<ForkSharedBytes>(
      new ForkSharedBytes(new (at) Header(), capacity, mapped));
}

ForkSharedBytes::ForkSharedBytes(Header* header, uint64_t capacity, size_t mapped)
    : header_(header), capacity_(capacity), mapped_(mapped), owner_(getpid()) {}

ForkSharedBytes::~ForkSharedBytes() { ::munmap(header_, mapped_); }

bool ForkSharedBytes::Publish(const std::vector<std::string_view>& pieces) {
  if (header_->state.load(std::memory_order_acquire) != Header::kRunning) return false;
  uint64_t total = 0;
  for (std::string_view piece : pieces) total += piece.size();
  if (pieces.size() > kMaxPieces || total > capacity_) {
    PublishNothing();
    return false;
  }
  char* to = header_->bytes();
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

bool ForkSharedBytes::AwaitWanted() {
  while (header_->wanted.load(std::memory_order_acquire) == 0) {
    if (header_->closing.load(std::memory_order_acquire) != 0) return false;
    WaitWhile(header_->wanted, 0);
  }
  return header_->closing.load(std::memory_order_acquire) == 0;
}

void ForkSharedBytes::StopAwaitingWanted() {
  header_->closing.store(1, std::memory_order_release);
  WakeAll(header_->wanted);
}

void ForkSharedBytes::Want() {
  if (header_->wanted.exchange(1, std::memory_order_acq_rel) == 0) WakeAll(header_->wanted);
}

std::optional<std::vector<std::string_view>> ForkSharedBytes::Await(std::stop_token stop) {
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
  if (state != Header::kBytes) return std::nullopt;
  std::vector<std::string_view> pieces;
  const char* from = header_->bytes();
  for (uint32_t i = 0; i < header_->count; ++i) {
    pieces.emplace_back(from, header_->sizes[i]);
    from += header_->sizes[i];
  }
  return pieces;
}

}  // namespace sluice
