#include "base/mapped_file.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

namespace sluice {
namespace {
constexpr uint64_t kHugeHintFrom = uint64_t{2} << 20;  // one huge page
}  // namespace

Result<MappedFile> MappedFile::Open(const std::string& path, Env* env) {
  SLUICE_ASSIGN_OR_RETURN(OwnedFd fd, env->Open(path, OpenMode::kRead));
  return env->Map(fd.get(), path);
}

Result<MappedFile> MappedFile::Map(int fd, const std::string& path, Env* env) {
  return env->Map(fd, path);
}

MappedFile MappedFile::Adopt(const char* data, uint64_t size) {
  MappedFile f;
  f.data_ = size == 0 ? nullptr : data;
  f.size_ = size;
  // Pages read in through this map come as huge folios where the file
  // system allows (2 MiB mapped by one entry). Only a hint: errors ignored.
  if (f.data_ && size >= kHugeHintFrom) {
    (void)::madvise(const_cast<char*>(data), size, MADV_HUGEPAGE);
  }
  return f;
}

bool MappedFile::Populate() const {
  if (!data_) return true;
  // A whole-file read: under AdviseRandom every page would be read on its
  // own (and WillNeed is capped at read_ahead_kb).
  AdviseReadAround();
#ifdef MADV_POPULATE_READ
  return ::madvise(const_cast<char*>(data_), size_, MADV_POPULATE_READ) == 0;
#else
  return false;
#endif
}

bool MappedFile::Resident() const {
  if (!data_) return true;
  // A look at every page of a 64 MiB file costs milliseconds (a page-cache
  // lookup each): probes spread over the file tell a file read back from
  // disk from one still in memory.
  constexpr uint64_t kProbes = 17;
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t pages = (size_ + page - 1) / page;
  for (uint64_t k = 0; k < kProbes; ++k) {
    const uint64_t at = k * (pages - 1) / (kProbes - 1);
    unsigned char in_core = 0;
    if (::mincore(const_cast<char*>(data_) + at * page, 1, &in_core) != 0) return true;
    if ((in_core & 1) == 0) return false;
    if (pages == 1) break;
  }
  return true;
}

void MappedFile::AdviseRandom() const {
  if (!data_) return;
  (void)::madvise(const_cast<char*>(data_), size_, MADV_NOHUGEPAGE);
  (void)::madvise(const_cast<char*>(data_), size_, MADV_RANDOM);
}

void MappedFile::AdviseReadAround() const {
  if (!data_) return;
  (void)::madvise(const_cast<char*>(data_), size_, MADV_NORMAL);
  if (size_ >= kHugeHintFrom) (void)::madvise(const_cast<char*>(data_), size_, MADV_HUGEPAGE);
}

void MappedFile::WillNeed(std::string_view part) const {
  const auto base = reinterpret_cast<uintptr_t>(data_);
  auto begin = reinterpret_cast<uintptr_t>(part.data());
  if (!data_ || part.empty() || begin < base || part.size() > size_ - (begin - base)) return;
  const uintptr_t end = begin + part.size();
  // Rounded down within the map, which starts on a page.
  begin &= ~(static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE)) - 1);
  (void)::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_WILLNEED);
}

MappedFile::MappedFile(MappedFile&& o) noexcept : data_(o.data_), size_(o.size_) {
  o.data_ = nullptr;
  o.size_ = 0;
}

MappedFile& MappedFile::operator=(MappedFile&& o) noexcept {
  if (this != &o) {
    if (data_) ::munmap(const_cast<char*>(data_), size_);
    data_ = o.data_;
    size_ = o.size_;
    o.data_ = nullptr;
    o.size_ = 0;
  }
  return *this;
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(const_cast<char*>(data_), size_);
}

SharedMap SharedMap::Adopt(char* data, uint64_t size) {
  SharedMap m;
  m.data_ = data;
  m.size_ = size;
  return m;
}

SharedMap::SharedMap(SharedMap&& o) noexcept : data_(o.data_), size_(o.size_) {
  o.data_ = nullptr;
  o.size_ = 0;
}

SharedMap& SharedMap::operator=(SharedMap&& o) noexcept {
  if (this != &o) {
    if (data_) ::munmap(data_, size_);
    data_ = o.data_;
    size_ = o.size_;
    o.data_ = nullptr;
    o.size_ = 0;
  }
  return *this;
}

SharedMap::~SharedMap() {
  if (data_) ::munmap(data_, size_);
}

}  // namespace sluice
