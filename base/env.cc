// Env::Default(): the POSIX file system, and the loops every Env shares.
#include "base/env.h"

#include <dirent.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/mapped_file.h"

namespace sluice {
namespace {

int OpenFlags(OpenMode mode) {
  switch (mode) {
    case OpenMode::kRead: return O_RDONLY;
    case OpenMode::kReadWrite: return O_RDWR | O_CREAT;
    case OpenMode::kWriteTruncate: return O_WRONLY | O_CREAT | O_TRUNC;
    case OpenMode::kWriteNew: return O_WRONLY | O_CREAT | O_EXCL;
    case OpenMode::kAppend: return O_WRONLY | O_CREAT | O_APPEND;
  }
  return O_RDONLY;
}

const char* OpenVerb(OpenMode mode) {
  return mode == OpenMode::kWriteTruncate || mode == OpenMode::kWriteNew ? "cannot create"
                                                                         : "cannot open";
}

// One byte for an OFD lock (l_pid must be 0 for those).
struct flock OneByte(short type, off_t byte) {
  struct flock range;
  std::memset(&range, 0, sizeof(range));
  range.l_type = type;
  range.l_whence = SEEK_SET;
  range.l_start = byte;
  range.l_len = 1;
  return range;
}

class PosixEnv final : public Env {
 public:
  Result<OwnedFd> Open(const FsPath& file, OpenMode mode, const OpenOptions& options) override {
    const int flags = OpenFlags(mode) | O_CLOEXEC | (options.follow_links ? 0 : O_NOFOLLOW);
    while (true) {
      const int fd = ::openat(file.dir, file.name, flags, options.perms);
      if (fd >= 0) return OwnedFd(fd);
      if (errno != EINTR) return ErrnoStatus(OpenVerb(mode), file.path, errno);
    }
  }

  Result<size_t> Read(int fd, std::string_view path, char* buf, size_t size) override {
    while (true) {
      const ssize_t n = ::read(fd, buf, size);
      if (n >= 0) return static_cast<size_t>(n);
      if (errno != EINTR) return ErrnoStatus("cannot read", path, errno);
    }
  }

  Result<size_t> PRead(int fd, std::string_view path, char* buf, size_t size,
                       uint64_t offset) override {
    while (true) {
      const ssize_t n = ::pread(fd, buf, size, static_cast<off_t>(offset));
      if (n >= 0) return static_cast<size_t>(n);
      if (errno != EINTR) return ErrnoStatus("cannot read", path, errno);
    }
  }

  Result<size_t> Write(int fd, std::string_view path, std::string_view data) override {
    while (true) {
      const ssize_t n = ::write(fd, data.data(), data.size());
      if (n >= 0) return static_cast<size_t>(n);
      if (errno != EINTR) return ErrnoStatus("cannot write", path, errno);
    }
  }

  Result<size_t> PWrite(int fd, std::string_view path, std::string_view data,
                        uint64_t offset) override {
    while (true) {
      const ssize_t n = ::pwrite(fd, data.data(), data.size(), static_cast<off_t>(offset));
      if (n >= 0) return static_cast<size_t>(n);
      if (errno != EINTR) return ErrnoStatus("cannot write", path, errno);
    }
  }

  Status Sync(int fd, std::string_view path, bool data_only) override {
    while ((data_only ? ::fdatasync(fd) : ::fsync(fd)) != 0) {
      if (errno != EINTR) return ErrnoStatus("cannot sync", path, errno);
    }
    return Status::Ok();
  }

  Status Truncate(int fd, std::string_view path, uint64_t size) override {
    while (::ftruncate(fd, static_cast<off_t>(size)) != 0) {
      if (errno != EINTR) return ErrnoStatus("cannot truncate", path, errno);
    }
    return Status::Ok();
  }

  Result<struct stat> StatOpen(int fd, std::string_view path) override {
    struct stat st;
    if (::fstat(fd, &st) != 0) return ErrnoStatus("cannot stat", path, errno);
    return st;
  }

  Status Touch(int fd, std::string_view path) override {
    if (::futimens(fd, nullptr) != 0) return ErrnoStatus("cannot touch", path, errno);
    return Status::Ok();
  }

  Result<MappedFile> Map(int fd, std::string_view path) override {
    SLUICE_ASSIGN_OR_RETURN(struct stat st, StatOpen(fd, path));
    const uint64_t size = static_cast<uint64_t>(st.st_size);
    if (size == 0) return MappedFile();  // mmap of 0 bytes is an error; an empty view is fine
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) return ErrnoStatus("cannot map", path, errno);
    return MappedFile::Adopt(static_cast<const char*>(p), size);
  }

  Result<SharedMap> MapShared(int fd, std::string_view path, uint64_t size) override {
    void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) return ErrnoStatus("cannot map", path, errno);
    return SharedMap::Adopt(static_cast<char*>(p), size);
  }

  Result<bool> TryLockByte(int fd, std::string_view path, off_t byte, bool exclusive) override {
    struct flock range = OneByte(exclusive ? F_WRLCK : F_RDLCK, byte);
    while (::fcntl(fd, F_OFD_SETLK, &range) != 0) {
      if (errno == EAGAIN || errno == EACCES) return false;
      if (errno != EINTR) {
        return ErrnoStatus("cannot lock byte " + std::to_string(byte) + " of", path, errno);
      }
    }
    return true;
  }

  Status UnlockByte(int fd, std::string_view path, off_t byte) override {
    struct flock range = OneByte(F_UNLCK, byte);
    while (::fcntl(fd, F_OFD_SETLK, &range) != 0) {
      if (errno != EINTR) {
        return ErrnoStatus("cannot unlock byte " + std::to_string(byte) + " of", path, errno);
      }
    }
    return Status::Ok();
  }

  Result<struct stat> Stat(const FsPath& file, bool follow_links) override {
    struct stat st;
    if (::fstatat(file.dir, file.name, &st, follow_links ? 0 : AT_SYMLINK_NOFOLLOW) != 0) {
      return ErrnoStatus("cannot stat", file.path, errno);
    }
    return st;
  }

  Status Rename(const FsPath& from, const FsPath& to) override {
    if (::renameat(from.dir, from.name, to.dir, to.name) != 0) {
      return ErrnoStatus("cannot rename " + std::string(from.path) + " onto", to.path, errno);
    }
    return Status::Ok();
  }

  Status Remove(const FsPath& file) override {
    if (::unlinkat(file.dir, file.name, 0) != 0) {
      return ErrnoStatus("cannot delete", file.path, errno);
    }
    return Status::Ok();
  }

  Status MakeFolder(const FsPath& folder, mode_t perms) override {
    if (::mkdirat(folder.dir, folder.name, perms) != 0 && errno != EEXIST) {
      return ErrnoStatus("cannot create folder", folder.path, errno);
    }
    return Status::Ok();
  }

  Result<OwnedFd> OpenFolder(const FsPath& folder, bool follow_links) override {
    const int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | (follow_links ? 0 : O_NOFOLLOW);
    while (true) {
      const int fd = ::openat(folder.dir, folder.name, flags);
      if (fd >= 0) return OwnedFd(fd);
      if (errno != EINTR) return ErrnoStatus("cannot open folder", folder.path, errno);
    }
  }

  Result<std::vector<std::string>> ListFolder(const FsPath& folder) override {
    std::vector<std::string> names;
    SLUICE_RETURN_IF_ERROR(ForEachInFolder(folder, [&](const char* name) { names.emplace_back(name); }));
    return names;
  }

  Status ForEachInFolder(const FsPath& folder,
                         const std::function<void(const char* name)>& each) override {
    return ForEachEntry(folder, [&](const struct dirent& e) { each(e.d_name); });
  }

  Result<std::vector<FolderEntry>> ListFolderTyped(const FsPath& folder) override {
    std::vector<FolderEntry> entries;
    SLUICE_RETURN_IF_ERROR(ForEachEntry(
        folder, [&](const struct dirent& e) { entries.push_back({e.d_name, e.d_type}); }));
    return entries;
  }

 private:
  // readdir's entries of `folder` but "." and "..", in its order.
  template <typename Each>
  Status ForEachEntry(const FsPath& folder, Each&& each) {
    SLUICE_ASSIGN_OR_RETURN(OwnedFd fd, OpenFolder(folder, true));
    DIR* d = ::fdopendir(fd.get());
    if (d == nullptr) return ErrnoStatus("cannot list", folder.path, errno);
    fd.Release();  // closedir closes it
    Status status;
    while (true) {
      errno = 0;
      const struct dirent* e = ::readdir(d);
      if (e == nullptr) {
        if (errno != 0) status = ErrnoStatus("cannot list", folder.path, errno);
        break;
      }
      const std::string_view name = e->d_name;
      if (name != "." && name != "..") each(*e);
    }
    ::closedir(d);
    return status;
  }
};

}  // namespace

Status Env::ForEachInFolder(const FsPath& folder,
                            const std::function<void(const char* name)>& each) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> names, ListFolder(folder));
  for (const std::string& name : names) each(name.c_str());
  return Status::Ok();
}

Result<std::vector<Env::FolderEntry>> Env::ListFolderTyped(const FsPath& folder) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> names, ListFolder(folder));
  std::vector<FolderEntry> entries;
  entries.reserve(names.size());
  for (std::string& name : names) entries.push_back({std::move(name), DT_UNKNOWN});
  return entries;
}

Env* Env::Default() {
  static PosixEnv* const env = new PosixEnv();  // never destroyed: used until exit
  return env;
}

Status Env::WriteAll(int fd, std::string_view path, std::string_view data) {
  while (!data.empty()) {
    SLUICE_ASSIGN_OR_RETURN(size_t n, Write(fd, path, data));
    if (n == 0) return IoError("cannot write " + std::string(path) + ": the write wrote nothing");
    data.remove_prefix(n);
  }
  return Status::Ok();
}

Status Env::PWriteAll(int fd, std::string_view path, std::string_view data, uint64_t offset) {
  while (!data.empty()) {
    SLUICE_ASSIGN_OR_RETURN(size_t n, PWrite(fd, path, data, offset));
    if (n == 0) return IoError("cannot write " + std::string(path) + ": the write wrote nothing");
    data.remove_prefix(n);
    offset += n;
  }
  return Status::Ok();
}

Result<size_t> Env::PReadFull(int fd, std::string_view path, char* buf, size_t size,
                              uint64_t offset) {
  size_t done = 0;
  while (done < size) {
    SLUICE_ASSIGN_OR_RETURN(size_t n, PRead(fd, path, buf + done, size - done, offset + done));
    if (n == 0) break;
    done += n;
  }
  return done;
}

}  // namespace sluice
