// Keeps forked children from inheriting this process's cache locks.
//
// OFD locks belong to open file descriptions, which fork() shares with the
// child: without this, a child forked while the parent pins a shard or
// fetches one (a DataLoader worker, a multiprocessing helper) would keep
// those locks alive after the parent dies. Every descriptor that can hold a
// cache lock is registered here; a pthread_atfork child handler (installed
// on first use, never at static init) points each of them at /dev/null in
// the child, dropping its reference without freeing the descriptor number
// that the child's copy of the owning object still refers to.
//
// Thread-safe. Opening and closing go through the registry's mutex, which
// fork() also takes, so no descriptor is ever in flight during a fork.
#pragma once

#include <string>

#include "base/status.h"

namespace sluice::cache_internal {

// open(path, flags | O_CLOEXEC, mode) and register the result. Returns the
// descriptor or -1 with errno set.
int OpenRegistered(const std::string& path, int flags, int mode);

// Unregister and close `fd` (no-op for -1; unregistered fds just close).
void CloseRegistered(int fd);

}  // namespace sluice::cache_internal
