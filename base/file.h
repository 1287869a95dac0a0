// File-system access over POSIX, with errors that name the path: whole-file
// helpers, the one naming scheme of temporary files, and folders that
// confine paths beneath them.
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

#include "base/status.h"

namespace sluice {

// "<what> <path>: <strerror(err)>" with the code errno implies: ENOENT and
// ENOTDIR kNotFound, EACCES and EPERM kPermissionDenied, anything else
// kIoError. The project's one errno-to-Status rule.
Status ErrnoStatus(std::string_view what, std::string_view path, int err);

// Modes of what Sluice creates: files 0666 and folders 0777, both masked by
// the process's umask as cp, curl -o and Python's open() do (0644 and 0755
// under the usual umask 022, 0640 and 0750 under 027). Data files are never
// executable.
inline constexpr mode_t kNewFileMode = 0666;
inline constexpr mode_t kNewFolderMode = 0777;

// An owned file descriptor, closed on destruction. Move-only.
class OwnedFd {
 public:
  OwnedFd() = default;
  explicit OwnedFd(int fd) : fd_(fd) {}
  OwnedFd(OwnedFd&& other) noexcept : fd_(other.Release()) {}
  OwnedFd& operator=(OwnedFd&& other) noexcept;
  OwnedFd(const OwnedFd&) = delete;
  OwnedFd& operator=(const OwnedFd&) = delete;
  ~OwnedFd();

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int Release() { int fd = fd_; fd_ = -1; return fd; }
  // Closes now; the close(2) error as ErrnoStatus("cannot close", path).
  Status Close(std::string_view path);

 private:
  int fd_ = -1;
};

// ------------------------------------------------------ temporary files
//
// Every temporary file Sluice writes is named, beside the file it becomes,
//   <folder>/.<final name>.sluice-tmp.<pid>.<start>.<seq>[.<tag>]
// hidden (listings and dataset indexing skip dot files), in the final file's
// folder (so the rename is atomic), owned by process <pid> started at
// <start> (clock ticks after boot, /proc/<pid>/stat field 22; 0 when
// unknown), unique in that process by <seq> (a process-wide counter). A
// <tag> of lower-case letters marks a second file of the same writer (the
// shard cache's ".scratch"). Whoever finds a temporary whose owner is gone
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
// True when `owner` no longer runs: no such pid, or that pid now belongs to
// a process started at another time.
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

// A file written under a temporary name and renamed onto its final path by
// Commit(); deleted on destruction unless committed. Move-only; one thread.
class TempFile {
 public:
  // Creates a fresh temporary for `final_path` in its folder (which must
  // exist), write-only, O_EXCL, kNewFileMode. When `final_path` is itself a
  // temporary of this process (another writer named it and renames it, e.g.
  // the shard cache's fetch), that file is written in place: created or
  // truncated, deleted on error like any temporary, and Commit() renames
  // nothing, so a fetch makes one temporary, not two.
  static Result<TempFile> Create(const std::string& final_path);

  TempFile(TempFile&& other) noexcept;
  TempFile& operator=(TempFile&&) = delete;
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile();

  int fd() const { return fd_.get(); }
  const std::string& path() const { return path_; }
  // Hands the descriptor to the caller (e.g. an asio file that closes it
  // itself): Commit() and the destructor then leave it alone.
  int ReleaseFd() { return fd_.Release(); }
  // Closes the descriptor if still held and renames the temporary onto the
  // final path. On error the temporary is deleted and the error names it.
  Status Commit();

 private:
  TempFile(std::string path, std::string final_path, OwnedFd fd)
      : path_(std::move(path)), final_path_(std::move(final_path)), fd_(std::move(fd)) {}
  std::string path_;
  std::string final_path_;  // == path_ when written in place
  OwnedFd fd_;
  bool done_ = false;
};

// Reads the whole file. Refuses files larger than `max_bytes` with
// kOutOfRange so a hostile path cannot force an unbounded allocation.
Result<std::string> ReadFile(const std::string& path,
                             uint64_t max_bytes = uint64_t{1} << 40);

// Writes `data` to `path` through a TempFile and an atomic rename: readers
// see either the old file or the whole new one.
Status WriteFileAtomic(const std::string& path, std::string_view data);

// Size in bytes, kNotFound when the file does not exist.
Result<uint64_t> FileSize(const std::string& path);

bool FileExists(const std::string& path);

// Sets the access and modification times of the file open as `fd` to now,
// as touch does (futimens); errors as ErrnoStatus("cannot touch", path). For
// files whose use leaves no time behind (a lock file that is only locked),
// so that age-based cleaners of temporary folders (systemd-tmpfiles,
// tmpreaper) see them in use.
Status TouchFile(int fd, std::string_view path);

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
Status MakeDirs(const std::string& path);

// "a/b" + "c" -> "a/b/c"; an empty `dir` yields `name`.
std::string JoinPath(std::string_view dir, std::string_view name);

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
  // Opens the folder `root`, which must exist.
  static Result<ConfinedDir> Open(const std::string& root);

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
  // Opens the file `rel` with open(2) `flags` plus O_CLOEXEC | O_NOFOLLOW,
  // created with kNewFileMode when `flags` has O_CREAT.
  Result<OwnedFd> OpenFile(std::string_view rel, int flags) const;
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
  std::string root_;
  OwnedFd fd_;
};

// A read-only memory map of a whole file. Movable, not copyable. The view
// stays valid until the object is destroyed or moved from. Reading it from
// several threads is safe.
class MappedFile {
 public:
  static Result<MappedFile> Open(const std::string& path);
  // Maps the whole file open at `fd` (which the caller keeps and may close
  // right after: the mapping stays); `path` names it in errors.
  static Result<MappedFile> Map(int fd, const std::string& path);

  MappedFile() = default;
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::string_view data() const { return {data_, size_}; }
  uint64_t size() const { return size_; }

  // Maps every page now (MADV_POPULATE_READ, reading the file in where the
  // page cache lacks it, with the kernel's read-around: it calls
  // AdviseReadAround), so later reads do not stop on page faults: call it from
  // a thread that can afford the wait. Best effort: a kernel without it
  // or a failing read leaves the mapping as it was (reads then fault lazily)
  // and returns false.
  bool Populate() const;

  // True when the file is in the page cache, judged from 17 pages spread
  // over it, its first and last among them (mincore); also when that
  // cannot be told, and for an empty map.
  bool Resident() const;
  // Page faults on this map read only the pages they touch (MADV_RANDOM,
  // and no huge-page hint, under which a fault reads 2-4 MiB), instead of
  // the kernel's read-around window (read_ahead_kb: megabytes on some
  // disks): for a file on disk read a few bytes at a time. Pair it with
  // WillNeed for the bytes about to be read. Best effort.
  void AdviseRandom() const;
  // Takes back AdviseRandom: faults read around them again, as Map left
  // them. Best effort.
  void AdviseReadAround() const;
  // Starts reading the pages under `part` (a view into data(); anything
  // else is ignored) into the page cache without waiting (MADV_WILLNEED).
  // Best effort.
  void WillNeed(std::string_view part) const;

 private:
  const char* data_ = nullptr;
  uint64_t size_ = 0;
};

}  // namespace sluice
