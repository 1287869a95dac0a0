// File-system helpers built on an Env (base/env.h), with errors that name
// the path: whole-file reads, writes and copies, the one naming scheme of
// temporary files, and folders that confine paths beneath them. Each takes
// the Env to use, Env::Default() unless a test gives its own.
//
// All functions are thread-safe (the only shared state is an atomic counter
// of temporary names). Paths are used as given; callers confine untrusted
// names (see formats/index/ for basenames, ConfinedDir below for folders that
// may hold symbolic links).
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "base/env.h"
#include "base/fd.h"
#include "base/mapped_file.h"
#include "base/status.h"

namespace sluice {

// ------------------------------------------------------ temporary files
//
// Every temporary file Sluice writes is named, beside the file it becomes,
//   <folder>/.<final name>.sluice-tmp.<pid>.<start>.<seq>[.<tag>]
// hidden (listings and dataset indexing skip dot files), in the final file's
// folder (so the rename is atomic), owned by process <pid> started at
// <start> (clock ticks after boot, /proc/<pid>/stat field 22; 0 when
// unknown), unique in that process by <seq> (a process-wide counter). A
// <tag> of lower-case letters marks a second file of the same writer
// (TaggedTempPath; the shard cache's scratch file is ScratchPath). Whoever finds a temporary whose owner is gone
// may delete it (ConfinedDir::SweepDeadTemps); only its owner renames it.
//
// Limits of "gone": a recycled pid is told apart by its start time (when
// /proc is readable); a process in another pid namespace writing into the
// same folder looks gone, so folders must not be shared across pid
// namespaces while both sides write temporaries.

struct TempOwner {
  uint32_t pid = 0;
  uint64_t start = 0;  // clock ticks after boot; 0 = unknown
  bool operator==(const TempOwner&) const = default;
};

struct TempName {
  TempOwner owner;
  uint32_t seq = 0;
};

// This process (recomputed after fork).
TempOwner ThisProcessTempOwner();
// True when `owner` no longer runs: no such pid, a zombie (ended, not yet
// reaped), or that pid now belongs to a process started at another time.
bool TempOwnerGone(const TempOwner& owner);
// The next value of this process's counter of temporary names.
uint32_t NextTempSeq();

// The temporary for `final_path` (a path or a relative name) of `owner`
// with sequence `seq`. The final name is cut to 128 bytes in it, so the
// name stays within NAME_MAX.
std::string TempPathFor(std::string_view final_path, const TempOwner& owner, uint32_t seq);
// A fresh temporary of this process for `final_path`.
std::string TempPathFor(std::string_view final_path);
// The owner and sequence of a temporary's file name (no folder), or nothing
// when `file_name` is not one.
std::optional<TempName> ParseTempName(std::string_view file_name);
// True when the last component of `path` is a temporary of this process.
bool IsTempOfThisProcess(std::string_view path);
// A second file of the writer of the temporary `temp_path`: the same name
// with ".<tag>" appended, so ParseTempName gives it the same owner and a
// sweep deletes it once that owner is gone. `tag` is lower-case letters.
std::string TaggedTempPath(std::string_view temp_path, std::string_view tag);
// The scratch file a writer of `temp_path` may use beside it (the shard
// cache's fetch writes a zip there before extracting the shard from it).
inline std::string ScratchPath(std::string_view temp_path) {
  return TaggedTempPath(temp_path, "scratch");
}

// A file written under a temporary name and renamed onto its final path by
// Commit(); deleted on destruction unless committed. Move-only; one thread.
class TempFile {
 public:
  // Creates a fresh temporary for `final_path` in its folder (which must
  // exist), write-only, O_EXCL, with `perms`, through `env` (which must
  // outlive the TempFile). When `final_path` is itself a temporary of this
  // process (another writer named it and renames it, e.g. the shard cache's
  // fetch), that file is written in place: created or truncated, deleted on
  // error like any temporary, and Commit() renames nothing, so a fetch makes
  // one temporary, not two.
  static Result<TempFile> Create(const std::string& final_path, Env* env = Env::Default(),
                                 mode_t perms = kNewFileMode);

  TempFile(TempFile&& other) noexcept;
  TempFile& operator=(TempFile&&) = delete;
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile();

  int fd() const { return fd_.get(); }
  const std::string& path() const { return path_; }
  Env* env() const { return env_; }
  // Appends `data` (Env::WriteAll); the error names the temporary.
  Status Write(std::string_view data) { return env_->WriteAll(fd_.get(), path_, data); }
  // Hands the descriptor to the caller (e.g. an asio file that closes it
  // itself): Commit() and the destructor then leave it alone.
  int ReleaseFd() { return fd_.Release(); }
  // Closes the descriptor if still held and renames the temporary onto the
  // final path. On error the temporary is deleted and the error names it.
  Status Commit();

 private:
  TempFile(Env* env, std::string path, std::string final_path, OwnedFd fd)
      : env_(env), path_(std::move(path)), final_path_(std::move(final_path)), fd_(std::move(fd)) {}
  Env* env_;
  std::string path_;
  std::string final_path_;  // == path_ when written in place
  OwnedFd fd_;
  bool done_ = false;
};

// Reads the whole file. Refuses files larger than `max_bytes` with
// kOutOfRange so a hostile path cannot force an unbounded allocation.
Result<std::string> ReadFile(const std::string& path,
                             uint64_t max_bytes = uint64_t{1} << 40, Env* env = Env::Default());

// Writes `data` to `path` through a TempFile (created with `perms`) and an
// atomic rename: readers see either the old file or the whole new one, and
// after an error no temporary is left.
Status WriteFileAtomic(const std::string& path, std::string_view data, Env* env = Env::Default(),
                       mode_t perms = kNewFileMode);

// Copies the file `from` (read to its end) onto `to` through a TempFile and
// an atomic rename (written in place when `to` is a temporary of this
// process, as TempFile::Create says), in writes of kPageCacheWriteBlock at
// aligned offsets; `to`'s folder must exist. Returns the bytes copied.
// Errors name the file that failed; nothing is left at `to` after one.
Result<uint64_t> CopyFileAtomic(const std::string& from, const std::string& to,
                                Env* env = Env::Default());

// Size in bytes, kNotFound when the file does not exist.
Result<uint64_t> FileSize(const std::string& path, Env* env = Env::Default());

bool FileExists(const std::string& path, Env* env = Env::Default());

// Sets the access and modification times of the file open as `fd` to now,
// as touch does (Env::Touch); errors as ErrnoStatus("cannot touch", path).
// For files whose use leaves no time behind (a lock file that is only
// locked), so that age-based cleaners of temporary folders
// (systemd-tmpfiles, tmpreaper) see them in use.
Status TouchFile(int fd, std::string_view path, Env* env = Env::Default());

// How many bytes to hand the kernel per write call when filling a file
// that will be read back through the page cache (downloads, cache copies).
// The kernel sizes the page-cache folio by the write call. On VMs whose
// balloon reports free memory to the host (this one), a large new folio
// tends to land on memory the host has taken back and costs many times the
// copy; small ones are served from recently freed pages. Measured on
// `bench/http/http_bench --schemes=http`, 1000 x 4 MiB from loopback nginx,
// CPU s/GB (median of 5): 2.16 with 512 KiB writes, 1.51 with 64 KiB, 1.14
// with 16 KiB (curl, which writes 16 KiB: 1.36-1.66); one 1 GiB object: 0.51,
// 0.48, 0.65. A 2 MiB write cost 10-15x a 512 KiB one. Readers that map the
// file take more, smaller page faults, which the engine's prefetch thread
// pays (MADV_POPULATE_READ).
inline constexpr uint64_t kPageCacheWriteBlock = uint64_t{16} << 10;

// Creates `path` and its missing parents (like mkdir -p), kNewFolderMode.
Status MakeDirs(const std::string& path, Env* env = Env::Default());

// "a/b" + "c" -> "a/b/c"; an empty `dir` yields `name`.
std::string JoinPath(std::string_view dir, std::string_view name);
// JoinPath(dir, name) into `*out` (overwritten), reusing its buffer: for a
// path made a file of a million (a reader's, for its errors).
void JoinPathInto(std::string* out, std::string_view dir, std::string_view name);

// ------------------------------------------------------ confined folders
//
// A folder beneath which relative paths are resolved one component at a
// time with openat(O_NOFOLLOW): nothing beneath it is reached through a
// symbolic link, so nothing is read, written, renamed or deleted outside it
// through one. The folder itself may be reached through links (its path is
// the user's choice). A link met beneath it is kInvalidArgument naming it.
// Resolution is per call: a folder swapped for a link between a call and a
// later write by path (a fetch writing its temporary) is not defended.
// Movable; const methods are thread-safe.
class ConfinedDir {
 public:
  // Opens the folder `root`, which must exist; every call then goes
  // through `env`, which must outlive the ConfinedDir.
  static Result<ConfinedDir> Open(const std::string& root, Env* env = Env::Default());

  const std::string& path() const { return root_; }
  // root/rel, for messages and for writers that open by path.
  std::string PathOf(std::string_view rel) const;

  // The folder `rel` beneath the root ("" = the root), creating it and its
  // missing parents (kNewFolderMode) when `create`; else kNotFound when
  // missing.
  Result<OwnedFd> OpenFolder(std::string_view rel, bool create) const;
  // lstat of `rel` (a link is reported as one, never followed); kNotFound
  // when it or a folder on its way is missing. With `follow_links`, a plain
  // stat of root/rel instead, for folders whose links are the user's own (a
  // dataset read in place, never written through them).
  Result<struct stat> Stat(std::string_view rel, bool follow_links = false) const;
  // Opens the file `rel` in `mode` without following a link, created with
  // kNewFileMode when the mode creates.
  Result<OwnedFd> OpenFile(std::string_view rel, OpenMode mode) const;
  // Renames `from` onto `to` (both beneath the root; `to`'s folder must exist).
  Status Rename(std::string_view from, std::string_view to) const;
  // Deletes the file `rel`; a missing one (or missing folder) is OK.
  Status Remove(std::string_view rel) const;
  // Deletes every temporary (see TempPathFor) directly in folder `rel` whose
  // owner is gone; returns how many. Best effort: a missing or unreadable
  // folder deletes nothing.
  size_t SweepDeadTemps(std::string_view rel) const;

 private:
  // The folder holding `rel` and rel's last component.
  Result<std::pair<OwnedFd, std::string>> Parent(std::string_view rel, bool create) const;
  Env* env_ = nullptr;
  std::string root_;
  OwnedFd fd_;
};

}  // namespace sluice
