// The local-folder store: plain paths ("/data/c4", "rel/dir") and file://
// URLs ("file:///data/c4", "file://localhost/data/c4"; %XX escapes decoded).
// Also covers FUSE-mounted paths such as /Volumes/... .
//
// I/O is plain POSIX on the calling (loop) thread: local reads and writes
// are short next to network transfers, and the file store keeps no state
// besides its root, so it is safe to use from any thread.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"
#include "stores/store.h"

namespace sluice {

// Opens the store rooted at `url` (a path or file:// URL). The folder need
// not exist yet (Put creates it). Errors: kInvalidArgument for a malformed
// file:// URL (another host, bad escape, empty path).
Result<std::unique_ptr<Store>> OpenFileStore(std::string_view url);

// The local path a path or file:// URL names (without trailing '/', except
// for "/").
Result<std::string> FileUrlToPath(std::string_view url);

}  // namespace sluice
