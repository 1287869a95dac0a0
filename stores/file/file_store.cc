#include "stores/file/file_store.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include "base/asio/co_status.h"
#include "base/file.h"
#include "stores/common/object_listing.h"
#include "stores/common/store_keys.h"
#include "stores/http/http_client.h"

namespace sluice {
namespace {

std::string ParentDir(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return "";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

Status WriteAll(int fd, const char* data, size_t size, const std::string& path) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("cannot write", path, errno);
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return Status::Ok();
}

// Copies file `from` to `to` through a TempFile and a rename, creating
// `to`'s folder.
Status CopyFileAtomic(const std::string& from, const std::string& to) {
  OwnedFd in(::open(from.c_str(), O_RDONLY | O_CLOEXEC));
  if (!in.valid()) return ErrnoStatus("cannot open", from, errno);
  struct stat st;
  if (::fstat(in.get(), &st) != 0) return ErrnoStatus("cannot stat", from, errno);
  if (!S_ISREG(st.st_mode)) return NotFoundError(from + " is not a regular file");
  std::string dir = ParentDir(to);
  if (!dir.empty()) SLUICE_RETURN_IF_ERROR(MakeDirs(dir));
  SLUICE_ASSIGN_OR_RETURN(TempFile out, TempFile::Create(to));
  std::string buf(1 << 20, '\0');
  while (true) {
    ssize_t n = ::read(in.get(), buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("cannot read", from, errno);
    }
    if (n == 0) break;
    SLUICE_RETURN_IF_ERROR(WriteAll(out.fd(), buf.data(), static_cast<size_t>(n), out.path()));
  }
  return out.Commit();
}

// Appends every regular file under `dir` (key prefix `rel`) to `out`.
Status Walk(const std::string& dir, const std::string& rel, std::vector<ObjectInfo>* out,
            int depth) {
  if (depth > 64) return IoError("folder nesting deeper than 64 at " + dir);
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) {
    if (errno == ENOENT || errno == ENOTDIR) return Status::Ok();
    return ErrnoStatus("cannot list", dir, errno);
  }
  Status status;
  while (true) {
    errno = 0;
    struct dirent* e = ::readdir(d);
    if (e == nullptr) {
      if (errno != 0) status = ErrnoStatus("cannot list", dir, errno);
      break;
    }
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    std::string path = dir + "/" + name;
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) continue;  // vanished or dangling link
    std::string key = rel.empty() ? name : rel + "/" + name;
    if (S_ISDIR(st.st_mode)) {
      status = Walk(path, key, out, depth + 1);
      if (!status.ok()) break;
    } else if (S_ISREG(st.st_mode)) {
      out->push_back({key, static_cast<uint64_t>(st.st_size)});
    }
  }
  ::closedir(d);
  return status;
}

class FileStore final : public Store {
 public:
  explicit FileStore(std::string url, std::string root) : url_(std::move(url)), root_(std::move(root)) {}

  std::string root() const override { return url_; }

  boost::asio::awaitable<Result<ObjectInfo>> Head(std::string key) override {
    co_return HeadNow(key);
  }

  boost::asio::awaitable<Result<std::string>> GetRange(std::string key, uint64_t offset,
                                                       uint64_t length) override {
    co_return ReadRange(key, offset, length);
  }

  boost::asio::awaitable<Result<std::string>> Get(std::string key) override {
    SLUICE_CO_RETURN_IF_ERROR(ValidateKey(key, url_));
    co_return ReadFile(PathOf(key));
  }

  boost::asio::awaitable<Status> GetToFile(std::string key, std::string path,
                                           std::optional<uint64_t> expected_size) override {
    SLUICE_CO_RETURN_IF_ERROR(ValidateKey(key, url_));
    if (expected_size) {
      Result<uint64_t> size = FileSize(PathOf(key));
      if (!size.ok()) co_return size.status();
      if (*size != *expected_size) {
        co_return ObjectSizeChangedError(PathOf(key), *size, *expected_size);
      }
    }
    co_return CopyFileAtomic(PathOf(key), path);
  }

  boost::asio::awaitable<Status> PutFile(std::string key, std::string path) override {
    SLUICE_CO_RETURN_IF_ERROR(ValidateKey(key, url_));
    co_return CopyFileAtomic(path, PathOf(key));
  }

  boost::asio::awaitable<Status> Put(std::string key, std::string bytes) override {
    SLUICE_CO_RETURN_IF_ERROR(ValidateKey(key, url_));
    std::string path = PathOf(key);
    std::string dir = ParentDir(path);
    if (!dir.empty()) SLUICE_CO_RETURN_IF_ERROR(MakeDirs(dir));
    co_return WriteFileAtomic(path, bytes);
  }

  boost::asio::awaitable<Result<std::vector<ObjectInfo>>> List(std::string prefix) override {
    SLUICE_CO_RETURN_IF_ERROR(ValidatePrefix(prefix, url_));
    // Walk only the folder the prefix's complete components name.
    size_t slash = prefix.rfind('/');
    std::string rel = slash == std::string::npos ? "" : prefix.substr(0, slash);
    std::vector<ObjectInfo> all;
    Status status = Walk(rel.empty() ? root_ : PathOf(rel), rel, &all, 0);
    if (!status.ok()) co_return status;
    std::vector<ObjectInfo> out;
    for (ObjectInfo& info : all) {
      if (info.key.compare(0, prefix.size(), prefix) == 0) out.push_back(std::move(info));
    }
    SortByKey(&out);
    co_return out;
  }

 private:
  std::string PathOf(const std::string& key) const { return JoinPath(root_, key); }

  Result<ObjectInfo> HeadNow(const std::string& key) const {
    SLUICE_RETURN_IF_ERROR(ValidateKey(key, url_));
    std::string path = PathOf(key);
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return ErrnoStatus("cannot stat", path, errno);
    if (!S_ISREG(st.st_mode)) return NotFoundError(path + " is not a regular file");
    return ObjectInfo{key, static_cast<uint64_t>(st.st_size)};
  }

  Result<std::string> ReadRange(const std::string& key, uint64_t offset, uint64_t length) const {
    SLUICE_RETURN_IF_ERROR(ValidateKey(key, url_));
    std::string path = PathOf(key);
    OwnedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd.valid()) return ErrnoStatus("cannot open", path, errno);
    struct stat st;
    if (::fstat(fd.get(), &st) != 0) return ErrnoStatus("cannot stat", path, errno);
    if (!S_ISREG(st.st_mode)) return NotFoundError(path + " is not a regular file");
    uint64_t size = static_cast<uint64_t>(st.st_size);
    if (offset > size) {
      return OutOfRangeError("range at offset " + std::to_string(offset) + " past the end of " +
                             path + " (size " + std::to_string(size) + ")");
    }
    uint64_t n = std::min(length, size - offset);
    std::string out(n, '\0');
    uint64_t done = 0;
    while (done < n) {
      ssize_t r = ::pread(fd.get(), out.data() + done, n - done, static_cast<off_t>(offset + done));
      if (r < 0) {
        if (errno == EINTR) continue;
        return ErrnoStatus("cannot read", path, errno);
      }
      if (r == 0) break;  // shrank meanwhile
      done += static_cast<uint64_t>(r);
    }
    out.resize(done);
    return out;
  }

  std::string url_;
  std::string root_;
};

}  // namespace

Result<std::string> FileUrlToPath(std::string_view url) {
  std::string path;
  if (url.substr(0, 7) == "file://") {
    std::string_view rest = url.substr(7);
    size_t slash = rest.find('/');
    std::string_view host = rest.substr(0, slash);
    if (!host.empty() && host != "localhost") {
      return InvalidArgumentError("malformed file URL '" + std::string(url) +
                                  "': names host '" + std::string(host) +
                                  "' (only local paths: file:///path)");
    }
    if (slash == std::string_view::npos) {
      return InvalidArgumentError("malformed file URL '" + std::string(url) + "': no path");
    }
    SLUICE_ASSIGN_OR_RETURN(path, StrictPercentDecode(rest.substr(slash)));
  } else {
    path = std::string(url);
  }
  if (path.empty()) return InvalidArgumentError("empty local path");
  if (path.find('\0') != std::string::npos) {
    return InvalidArgumentError("local path holds a NUL byte");
  }
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

Result<std::unique_ptr<Store>> OpenFileStore(std::string_view url) {
  SLUICE_ASSIGN_OR_RETURN(std::string path, FileUrlToPath(url));
  return std::unique_ptr<Store>(std::make_unique<FileStore>(std::string(url), std::move(path)));
}

}  // namespace sluice
