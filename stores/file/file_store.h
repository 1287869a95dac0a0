// The local-folder store: plain paths ("/data/c4", "rel/dir") and file://
// URLs ("file:///data/c4", "file://localhost/data/c4"; %XX escapes decoded).
// Also covers FUSE-mounted paths such as /Volumes/... .
//
// I/O goes through an Env (base/env.h) on the calling (loop) thread: local
// reads and writes are short next to network transfers, and the file store
// keeps no state besides its root and Env, so it is safe to use from any
// thread. Puts and copies write a temporary and rename it: after an error
// nothing is left under the key and no temporary remains.
#pragma once

#include <sys/stat.h>

#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "base/env.h"
#include "base/fd.h"
#include "base/status.h"
#include "stores/store.h"

namespace sluice {

// Opens the store rooted at `url` (a path or file:// URL). The folder need
// not exist yet (Put creates it). Errors: kInvalidArgument for a malformed
// file:// URL (another host, bad escape, empty path). Every file-system call
// goes through `env`, which must outlive the store.
Result<std::unique_ptr<Store>> OpenFileStore(std::string_view url, Env* env = Env::Default());

// The local path a path or file:// URL names (without trailing '/', except
// for "/"): the one place that turns a file URL into a path (the C ABI's
// sluice_local_path and the command-line tool ask it). Whether `url` is a
// file URL is StoreUrlScheme's reading (any case: "FILE:///x" is one).
// Errors (kInvalidArgument): a store URL ("'s3://b/k' is a store URL, not
// a local path"), a file URL of another host, a bad escape, an empty path.
Result<std::string> FileUrlToPath(std::string_view url);

// OpenFileStore(url)'s List(prefix), read on the calling thread, except
// that a file the folder's entry says is regular (readdir's d_type) is not
// stat'ed: its ObjectInfo has size 0 and etag "" (a stat'ed file's
// LocalFileTag is never ""). For a caller that opens every such file anyway
// and takes its size and version from that open (LocalRangeReader::
// ReadTailInto): a million Parquet files' first open looks each name up
// once. Links (followed) and names of unknown type are stat'ed as List's.
Result<std::vector<ObjectInfo>> ListFileStoreNames(std::string_view url, const std::string& prefix,
                                                   Env* env = Env::Default());

// A local file's ObjectInfo::etag: "<inode>-<mtime in ns>" of `st`. The
// inode changes when a file is replaced by a rename (how writers publish a
// file whole, Sluice's own included), the mtime when it is rewritten in
// place; a same-size rewrite within the file system's timestamp
// granularity, in place, is the one change it can miss. Pure.
std::string LocalFileTag(const struct stat& st);
// A tag's usual length (a 7-digit inode, '-', a 19-digit mtime): room a
// caller reserves for the tags of files listed but not yet stat'ed.
inline constexpr size_t kLocalFileTagUsualBytes = 27;

// What OpenFileStore(url)'s GetRangeOnlyOfVersion(key, offset, length,
// version) answers, read on the calling thread with no store or event loop
// made: the same checks (key, version, size) and errors. For a caller that
// reads many small ranges of a local folder one at a time (a million
// Parquet footers), where each store and loop made cost more than the read.
Result<std::string> ReadFileStoreRange(std::string_view url, const std::string& key,
                                       uint64_t offset, uint64_t length,
                                       const ObjectVersion& version, Env* env = Env::Default());
// ReadFileStoreRange for many files of one folder (a million Parquet
// footers), each read into `into` (room for `length` bytes, which the read
// overwrites: no string made and zero-filled a read; how many bytes came
// is returned, fewer at the file's end). Each file is opened by its key
// relative to the folder, held open from the first read, so that the
// kernel looks up the key alone, not the folder's whole path again a file
// (those lookups were an eighth of the first open's CPU at 100k footers).
// The same checks and errors, naming the file's whole path. A folder that
// cannot be opened is no error here: each read then names its file's
// whole path, and fails or not as ReadFileStoreRange's. A folder renamed
// after the first read is still the one read. Thread-safe; `env` must
// outlive the reader.
class LocalRangeReader {
 public:
  LocalRangeReader(std::string_view url, Env* env = Env::Default());
  Result<uint64_t> ReadInto(const std::string& key, uint64_t offset, uint64_t length,
                            const ObjectVersion& version, char* into) const;
  // The file's last `length` bytes (all of a shorter file) into `into`;
  // how many came is returned. No version is checked: the size and
  // LocalFileTag of the descriptor read (its fstat) are what `stated`
  // (required) is told, so that a caller that listed the name alone
  // (ListFileStoreNames) takes its version from this read.
  Result<uint64_t> ReadTailInto(const std::string& key, uint64_t length, ObjectStated* stated,
                                char* into) const;

 private:
  std::string url_, root_;
  Status bad_url_ = Status::Ok();  // FileUrlToPath's error, answered by each read
  Env* env_;
  mutable std::once_flag opened_;
  mutable OwnedFd folder_;  // set once, under opened_; invalid when it cannot be opened
};

}  // namespace sluice
