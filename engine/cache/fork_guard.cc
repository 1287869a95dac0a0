#include "engine/cache/fork_guard.h"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <mutex>
#include <vector>

namespace sluice::cache_internal {
namespace {

struct Registry {
  std::mutex mu;
  std::vector<int> fds;
};

Registry& TheRegistry();

void PrepareFork() { TheRegistry().mu.lock(); }
void ParentAfterFork() { TheRegistry().mu.unlock(); }
void ChildAfterFork() {
  Registry& r = TheRegistry();
  // Only async-signal-safe calls here: open, dup3, close.
  int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  for (int fd : r.fds) {
    if (null_fd >= 0) {
      ::dup3(null_fd, fd, O_CLOEXEC);
    }
  }
  if (null_fd >= 0) ::close(null_fd);
  r.fds.clear();  // keeps capacity: no allocation
  r.mu.unlock();
}

Registry& TheRegistry() {
  static Registry* registry = [] {
    auto* r = new Registry();  // never destroyed: handlers may run at any time
    ::pthread_atfork(PrepareFork, ParentAfterFork, ChildAfterFork);
    return r;
  }();
  return *registry;
}

}  // namespace

Result<int> OpenRegistered(Env* env, const FsPath& file, OpenMode mode,
                           const OpenOptions& options) {
  Registry& r = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  SLUICE_ASSIGN_OR_RETURN(OwnedFd fd, env->Open(file, mode, options));
  r.fds.push_back(fd.get());
  return fd.Release();
}

void CloseRegistered(int fd) {
  if (fd < 0) return;
  Registry& r = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = std::find(r.fds.begin(), r.fds.end(), fd);
  if (it != r.fds.end()) {
    *it = r.fds.back();
    r.fds.pop_back();
  }
  ::close(fd);
}

}  // namespace sluice::cache_internal
