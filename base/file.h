// Whole-file helpers over POSIX, with errors that name the path.
//
// All functions are thread-safe (they share no state). Paths are used as
// given; callers confine untrusted names (see formats/index/ for basenames).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace sluice {

// Reads the whole file. Refuses files larger than `max_bytes` with
// kOutOfRange so a hostile path cannot force an unbounded allocation.
Result<std::string> ReadFile(const std::string& path,
                             uint64_t max_bytes = uint64_t{1} << 40);

// Writes `data` to `path` through a temporary file in the same folder and an
// atomic rename: readers see either the old file or the whole new one.
Status WriteFileAtomic(const std::string& path, std::string_view data);

// Size in bytes, kNotFound when the file does not exist.
Result<uint64_t> FileSize(const std::string& path);

bool FileExists(const std::string& path);

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

// Creates `path` and its missing parents (like mkdir -p).
Status MakeDirs(const std::string& path);

// "a/b" + "c" -> "a/b/c"; an empty `dir` yields `name`.
std::string JoinPath(std::string_view dir, std::string_view name);

// A read-only memory map of a whole file. Movable, not copyable. The view
// stays valid until the object is destroyed or moved from. Reading it from
// several threads is safe.
class MappedFile {
 public:
  static Result<MappedFile> Open(const std::string& path);

  MappedFile() = default;
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::string_view data() const { return {data_, size_}; }
  uint64_t size() const { return size_; }

  // Maps every page now (MADV_POPULATE_READ, reading the file in where the
  // page cache lacks it), so later reads do not stop on page faults: call it
  // from a thread that can afford the wait. Best effort: a kernel without it
  // or a failing read leaves the mapping as it was (reads then fault lazily)
  // and returns false.
  bool Populate() const;

 private:
  const char* data_ = nullptr;
  uint64_t size_ = 0;
};

}  // namespace sluice
