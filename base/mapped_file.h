// A read-only memory map of a whole file, made by an Env (base/env.h), and
// the hints that tell the kernel how it will be read.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/env.h"
#include "base/status.h"

namespace sluice {

// A read-only memory map of a whole file. Movable, not copyable. The view
// stays valid until the object is destroyed or moved from. Reading it from
// several threads is safe.
class MappedFile {
 public:
  // Opens and maps the file `path` through `env`.
  static Result<MappedFile> Open(const std::string& path, Env* env = Env::Default());
  // Maps the whole file open at `fd` (which the caller keeps and may close
  // right after: the mapping stays) through `env`; `path` names it in
  // errors.
  static Result<MappedFile> Map(int fd, const std::string& path, Env* env = Env::Default());
  // Takes over the mapping of `size` bytes at `data` (unmapped on
  // destruction): how an Env hands out what it mapped.
  static MappedFile Adopt(const char* data, uint64_t size);

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

// A read-write map of a file's first bytes, shared with every process that
// maps the file (MAP_SHARED), made by Env::MapShared: what one process
// writes through it the others see. Movable, not copyable; the bytes stay
// mapped until the object is destroyed or moved from. Writers agree among
// themselves how they share it (the shard cache: under its locks).
class SharedMap {
 public:
  // Takes over the mapping of `size` bytes at `data` (unmapped on
  // destruction).
  static SharedMap Adopt(char* data, uint64_t size);

  SharedMap() = default;
  SharedMap(SharedMap&& other) noexcept;
  SharedMap& operator=(SharedMap&& other) noexcept;
  SharedMap(const SharedMap&) = delete;
  SharedMap& operator=(const SharedMap&) = delete;
  ~SharedMap();

  char* data() const { return data_; }
  uint64_t size() const { return size_; }

 private:
  char* data_ = nullptr;
  uint64_t size_ = 0;
};

}  // namespace sluice
