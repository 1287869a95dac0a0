// Env: the one owner of Sluice's file-system calls. Every open, read, write,
// sync, truncate, stat, rename, delete, folder creation, listing and map of a
// file that the engine makes goes through an Env, so a test can put a double
// in its place (tests/base/fault_env.h fails a chosen call at a chosen
// point: a full disk, an I/O error, a short write, a failed rename or sync).
// LevelDB's Env is the model; this one holds only what Sluice uses.
//
// Env::Default() is the real one, over POSIX. Components that write files
// take an `Env*` (defaulting to it); base/file.h's helpers (temporary files,
// whole-file reads and writes, copies, confined folders) are built on it.
//
// Every failure is an ErrnoStatus (base/fd.h): "<what> <path>: <strerror>",
// with the errno as os_error(). The verbs: "cannot open" (reading, or opening
// to update or append), "cannot create" (creating or truncating), "cannot
// read", "cannot write", "cannot sync", "cannot truncate", "cannot stat",
// "cannot map", "cannot rename <from> onto <to>", "cannot delete", "cannot
// create folder", "cannot open folder", "cannot list", "cannot lock",
// "cannot unlock". EINTR is retried inside every call.
//
// Thread safety: an Env's methods may be called from any number of threads
// at once. An Env must outlive everything that was given it.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/fd.h"
#include "base/status.h"

namespace sluice {

class MappedFile;  // base/mapped_file.h
class SharedMap;   // base/mapped_file.h

// A file or folder as an Env call names it: `name` relative to the open
// folder `dir` (AT_FDCWD: `name` is a path, absolute or relative to the
// working folder), and `path`, what errors say and what a test double
// matches: the whole path. A path converts to one implicitly. It only views
// the strings it was made from: build it in the call's argument list, or
// from strings that outlive it.
struct FsPath {
  FsPath(const std::string& p) : name(p.c_str()), path(p) {}  // NOLINT: implicit
  FsPath(const char* p) : name(p), path(p) {}                 // NOLINT: implicit
  FsPath(int dir_fd, const std::string& name_in_dir, std::string_view whole_path)
      : dir(dir_fd), name(name_in_dir.c_str()), path(whole_path) {}
  FsPath(int dir_fd, const char* name_in_dir, std::string_view whole_path)
      : dir(dir_fd), name(name_in_dir), path(whole_path) {}

  int dir = AT_FDCWD;
  const char* name;  // NUL-terminated
  std::string_view path;
};

// How Env::Open opens a file (always close-on-exec).
enum class OpenMode {
  kRead,           // read only; the file must exist
  kReadWrite,      // read and write; created when missing, kept otherwise
  kWriteTruncate,  // write only; created when missing, emptied otherwise
  kWriteNew,       // write only; created, EEXIST when it exists (O_EXCL)
  kAppend,         // write only at the end; created when missing
};

struct OpenOptions {
  // Permissions of a created file, masked by the umask.
  mode_t perms = kNewFileMode;
  // False: a symbolic link as the last component is refused (ELOOP).
  bool follow_links = true;
};

class Env {
 public:
  virtual ~Env() = default;

  // The real file system. Never destroyed; thread-safe.
  static Env* Default();
  // Whether this is Default(). A caller with a faster path of its own than
  // these calls (the HTTP client's io_uring writes of a download) takes it
  // only for the real file system, and goes through the Env otherwise, so
  // that a test double sees (and can fail) every call.
  bool IsDefault() const { return this == Default(); }

  // ------------------------------------------------------------ files
  virtual Result<OwnedFd> Open(const FsPath& file, OpenMode mode,
                               const OpenOptions& options = {}) = 0;
  // One read(2) (pread(2) at `offset`): the bytes read, 0 at the end.
  virtual Result<size_t> Read(int fd, std::string_view path, char* buf, size_t size) = 0;
  virtual Result<size_t> PRead(int fd, std::string_view path, char* buf, size_t size,
                               uint64_t offset) = 0;
  // One write(2) (pwrite(2) at `offset`): the bytes written, which may be
  // fewer than `data` holds. Use WriteAll/PWriteAll.
  virtual Result<size_t> Write(int fd, std::string_view path, std::string_view data) = 0;
  virtual Result<size_t> PWrite(int fd, std::string_view path, std::string_view data,
                                uint64_t offset) = 0;
  // fsync(2), or fdatasync(2) with `data_only`.
  virtual Status Sync(int fd, std::string_view path, bool data_only = false) = 0;
  // ftruncate(2).
  virtual Status Truncate(int fd, std::string_view path, uint64_t size) = 0;
  // fstat(2).
  virtual Result<struct stat> StatOpen(int fd, std::string_view path) = 0;
  // Sets the file's access and modification times to now (futimens), as
  // touch does; the verb is "cannot touch".
  virtual Status Touch(int fd, std::string_view path) = 0;
  // Maps the whole file open at `fd` read-only (the caller may close `fd`
  // right after). An empty file gives an empty map.
  virtual Result<MappedFile> Map(int fd, std::string_view path) = 0;
  // Maps the first `size` (> 0) bytes of the file open at `fd` read-write,
  // shared with every process that maps it (MAP_SHARED): the shard cache's
  // state. The verb is "cannot map".
  virtual Result<SharedMap> MapShared(int fd, std::string_view path, uint64_t size) = 0;

  // ------------------------------------------------------------ locks
  // Byte-range locks on open file descriptions (fcntl F_OFD_SETLK; see
  // engine/cache/ofd_lock.h for why these). Tries to take a shared or an
  // exclusive lock on byte `byte` of the file open at `fd`: true when
  // taken, false when another open file description holds a conflicting
  // one. Never blocks.
  virtual Result<bool> TryLockByte(int fd, std::string_view path, off_t byte, bool exclusive) = 0;
  // Releases what `fd`'s open file description holds on `byte`.
  virtual Status UnlockByte(int fd, std::string_view path, off_t byte) = 0;

  // ------------------------------------------------------------ names
  // stat(2), or lstat(2) without `follow_links`.
  virtual Result<struct stat> Stat(const FsPath& file, bool follow_links = true) = 0;
  // rename(2): atomic replacement of `to`.
  virtual Status Rename(const FsPath& from, const FsPath& to) = 0;
  // unlink(2); a missing file is kNotFound.
  virtual Status Remove(const FsPath& file) = 0;
  // mkdir(2) of one folder; OK when the name exists already (callers that
  // care what it is stat it).
  virtual Status MakeFolder(const FsPath& folder, mode_t perms = kNewFolderMode) = 0;
  // Opens a folder (O_DIRECTORY) for naming files in it by FsPath's `dir`.
  virtual Result<OwnedFd> OpenFolder(const FsPath& folder, bool follow_links = true) = 0;
  // The names in a folder, without "." and "..", in the order the file
  // system gives them.
  virtual Result<std::vector<std::string>> ListFolder(const FsPath& folder) = 0;
  // Calls `each` with every name ListFolder gives (NUL-terminated, valid
  // during the call), in the same order, without keeping them: a folder of a
  // million files costs no million strings. Stops at the first error. The
  // default goes through ListFolder, so a test double that fails listings
  // fails this too.
  virtual Status ForEachInFolder(const FsPath& folder,
                                 const std::function<void(const char* name)>& each);
  // A folder's name and what its directory entry says it is (readdir's
  // d_type: DT_REG, DT_DIR, DT_LNK, ...; DT_UNKNOWN where the file system
  // does not say), so that a caller can leave a name it need not stat.
  struct FolderEntry {
    std::string name;
    unsigned char type;
  };
  // ListFolder's names with their types, in the same order. The default
  // goes through ListFolder, every type DT_UNKNOWN: a test double's
  // listing (or its failure) is this one's too.
  virtual Result<std::vector<FolderEntry>> ListFolderTyped(const FsPath& folder);

  // --------------------------------------- loops over the calls above
  // Writes all of `data`, continuing after short writes.
  Status WriteAll(int fd, std::string_view path, std::string_view data);
  Status PWriteAll(int fd, std::string_view path, std::string_view data, uint64_t offset);
  // Reads into `buf` until `size` bytes or the end of the file; the count.
  Result<size_t> PReadFull(int fd, std::string_view path, char* buf, size_t size, uint64_t offset);
};

}  // namespace sluice
