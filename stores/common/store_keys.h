// Helpers every backend shares: key and prefix validation, URL splitting,
// environment lookups. Pure functions (GetEnv reads the environment);
// thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace sluice {

// OK when `key` is a valid object key: non-empty, no leading '/', no empty,
// "." or ".." components, no NUL. Errors (kInvalidArgument) name the key and
// the store's root.
Status ValidateKey(std::string_view key, std::string_view root);

// As ValidateKey, but an empty prefix (everything) and a trailing '/' are
// allowed.
Status ValidatePrefix(std::string_view prefix, std::string_view root);

// "a/b" + "c" -> "a/b/c"; "" + "c" -> "c"; "a/" + "c" -> "a/c".
std::string JoinKey(std::string_view base, std::string_view key);

// Splits "scheme://authority/path" (after the scheme's "://") into the
// authority and the path without its leading '/'s ("bucket", "a/b").
struct BucketPath {
  std::string bucket;
  std::string path;  // no leading or trailing '/'
};
// `rest` is the URL after "scheme://". Errors (kInvalidArgument) name `url`:
// an empty bucket, spaces or control characters.
Result<BucketPath> SplitBucketPath(std::string_view url, std::string_view rest);

// `url` as errors may show it: without its query or fragment (where SAS
// tokens and signatures travel).
std::string UrlForErrors(std::string_view url);

// The value of environment variable `name` when set and non-empty.
std::optional<std::string> GetEnv(const char* name);

// Bytes [offset, offset + length) of local file `path` (for uploads in
// parts); kIoError naming the path when it cannot be read or is shorter.
Result<std::string> ReadLocalFileRange(const std::string& path, uint64_t offset,
                                       uint64_t length);

// Splits on any of `separators`, dropping empty pieces.
std::vector<std::string> SplitAny(std::string_view s, std::string_view separators);

}  // namespace sluice
