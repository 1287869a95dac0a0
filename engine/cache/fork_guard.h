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
// The child handler is the one place that calls open(2) and close(2)
// itself, not through an Env: it runs between fork() and the child's return
// from it, where only async-signal-safe calls are allowed.
//
// Thread-safe. Opening and closing go through the registry's mutex, which
// fork() also takes, so no descriptor is ever in flight during a fork.
#pragma once

#include <string>

#include "base/env.h"
#include "base/status.h"

namespace sluice::cache_internal {

// Opens `file` through `env` (Env::Open, close-on-exec) and registers the
// descriptor, under the registry's mutex so that no fork sees it
// unregistered. The descriptor, owned by the caller, to be closed by
// CloseRegistered.
Result<int> OpenRegistered(Env* env, const FsPath& file, OpenMode mode,
                           const OpenOptions& options);

// Unregister and close `fd` (no-op for -1; unregistered fds just close).
void CloseRegistered(int fd);

}  // namespace sluice::cache_internal
