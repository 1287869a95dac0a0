// Where a stream's files come from when they are not in the cache yet.
//
// A RemoteSource copies one object (key relative to the stream's remote root)
// into a local file. Local folders and file:// URLs are read directly here;
// other schemes go through stores/ (OpenStore) once it is linked into the
// engine, until then they fail with kUnimplemented naming the URL.
// Thread safety: Fetch may be called from several threads at once.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"

namespace sluice {

class RemoteSource {
 public:
  virtual ~RemoteSource() = default;
  // Writes the whole object `key` into `path` (created or truncated) and
  // returns its size. kNotFound when the object does not exist. On error
  // `path` may hold a partial file: the caller owns and deletes it.
  virtual Result<uint64_t> Fetch(const std::string& key, const std::string& path) = 0;
  // The root as given, for error messages (secrets redacted).
  virtual std::string Describe() const = 0;
};

// `url`: a plain path or file://PATH (a folder); anything else is
// kUnimplemented for now. Keys must be safe relative paths (IsSafeBasename).
Result<std::unique_ptr<RemoteSource>> OpenRemoteSource(std::string_view url);

}  // namespace sluice
