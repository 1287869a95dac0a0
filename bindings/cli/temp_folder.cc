#include "bindings/cli/temp_folder.h"

#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>

namespace sluice::cli {
namespace {

int RemoveEntry(const char* path, const struct stat*, int, struct FTW*) {
  ::remove(path);
  return 0;  // keep going: remove what can be removed
}

// The live folders, for the signal handler: fixed storage, so that the
// handler touches no allocator. A slot is published by setting its flag.
constexpr int kSlots = 8;
char g_paths[kSlots][4096];
std::atomic<bool> g_live[kSlots];
std::mutex g_slots_mutex;  // taken by Create/destructor only, never by the handler

// On SIGINT/SIGTERM/SIGHUP: `rm -rf` each live folder in a child (_Fork,
// execve and waitpid are async-signal-safe; nftw is not), then die of the
// signal as if unhandled.
void RemoveOnSignal(int sig) {
  for (int i = 0; i < kSlots; ++i) {
    if (!g_live[i].load()) continue;
    pid_t pid = ::_Fork();
    if (pid == 0) {
      char rm[] = "/bin/rm", rf[] = "-rf";
      char* argv[] = {rm, rf, g_paths[i], nullptr};
      char* envp[] = {nullptr};
      ::execve(rm, argv, envp);
      ::_exit(127);
    }
    if (pid > 0) ::waitpid(pid, nullptr, 0);
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

int Register(const std::string& path) {
  std::lock_guard<std::mutex> lock(g_slots_mutex);
  static bool installed = false;
  if (!installed) {
    installed = true;
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction sa {};
      sa.sa_handler = RemoveOnSignal;
      ::sigemptyset(&sa.sa_mask);
      ::sigaction(sig, &sa, nullptr);
    }
  }
  for (int i = 0; i < kSlots; ++i) {
    if (g_live[i].load() || path.size() >= sizeof g_paths[i]) continue;
    std::memcpy(g_paths[i], path.c_str(), path.size() + 1);
    g_live[i].store(true);
    return i;
  }
  return -1;  // more folders than slots: removed by the destructor only
}

void Unregister(int slot) {
  if (slot < 0) return;
  std::lock_guard<std::mutex> lock(g_slots_mutex);
  g_live[slot].store(false);
}

}  // namespace

Result<std::unique_ptr<TempFolder>> TempFolder::Create() {
  const char* tmpdir = std::getenv("TMPDIR");
  std::string parent = tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp";
  std::string pattern = parent + "/sluice-XXXXXX";
  // The signals wait while the folder is made and registered: one arriving
  // in between would otherwise kill the process before the handler knows
  // the folder (and leave it behind). A pending one is handled on unblock.
  sigset_t block, saved;
  ::sigemptyset(&block);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaddset(&block, sig);
  ::pthread_sigmask(SIG_BLOCK, &block, &saved);
  if (::mkdtemp(pattern.data()) == nullptr) {
    const int err = errno;
    ::pthread_sigmask(SIG_SETMASK, &saved, nullptr);
    return IoError("cannot create a temporary folder in " + parent + ": " + std::strerror(err));
  }
  std::unique_ptr<TempFolder> folder(new TempFolder(std::move(pattern)));
  folder->signal_slot_ = Register(folder->path_);
  ::pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  return folder;
}

TempFolder::~TempFolder() {
  Unregister(signal_slot_);
  // Children first (FTW_DEPTH); links are removed, never followed (FTW_PHYS).
  ::nftw(path_.c_str(), RemoveEntry, 16, FTW_DEPTH | FTW_PHYS);
}

}  // namespace sluice::cli
