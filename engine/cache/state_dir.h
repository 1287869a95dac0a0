// Where a cache folder's coordination state (cache_layout.h's lock and state
// files, the index lock) lives: outside the folder, so that the folder holds
// only the dataset's files (code written for Mosaic lists it and compares it
// with the remote), in a private per-user folder of this node:
//
//   <temp>/sluice-<uid>/<st_dev>-<st_ino>/
//
// <temp> is $SLUICE_CACHE_STATE_DIR when set, else $TMPDIR, else /tmp.
// Processes that share a cache folder but not a temporary folder (the
// containers of one node mounting one host folder each have their own /tmp)
// must point SLUICE_CACHE_STATE_DIR at one folder they share on that node,
// or they would not coordinate.
//
// Keyed by the folder's identity, not its spelling, so every path that
// reaches it (links, bind mounts, relative paths) finds the same state. A
// folder deleted and made again may get the old inode number back, and with
// it the old state: harmless once nobody uses the old folder (the first
// user recounts from the files), not while a process still does. The state
// is per node by nature (it coordinates the processes of one machine), and a
// stale one is harmless: the files in the cache folder are the truth, and the
// first process to open a cache recounts them (see ShardCache::Open).
// Processes of different users, or with different state roots, do not
// coordinate.
#pragma once

#include <string>

#include "base/env.h"
#include "base/status.h"

namespace sluice {

// Makes (if needed) and returns the state folder of the existing folder
// `root`. Errors name the path: `root` missing; the per-user folder not a
// folder of this user, or readable or writable by others (it is refused, not
// repaired, so no other user can plant files in it); a symbolic link on the
// way; SLUICE_CACHE_STATE_DIR not absolute. Thread-safe.
Result<std::string> CacheStateDir(const std::string& root, Env* env = Env::Default());

}  // namespace sluice
