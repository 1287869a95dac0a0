#include "stores/file/file_store.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <optional>

#include "base/asio/co_status.h"
#include "base/file.h"
#include "base/parallel_claims.h"
#include "stores/common/object_listing.h"
#include "stores/common/store_keys.h"
#include "stores/signing/uri_encoding.h"
#include "stores/http/http_client.h"

namespace sluice {
namespace {

// `v`'s decimal digits written backwards, two a step, ending at `end`;
// answers where they begin. std::to_chars first counted the digits, then
// wrote them: ~200 instructions a 19-digit mtime, twice a file (the
// listing's tag, the read's check).
char* DecimalEndingAt(uint64_t v, char* end) {
  static constexpr char kPairs[] =
      "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
      "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
      "8081828384858687888990919293949596979899";
  while (v >= 100) {
    const uint64_t rest = v / 100;
    end -= 2;
    std::memcpy(end, kPairs + 2 * (v - rest * 100), 2);
    v = rest;
  }
  if (v >= 10) {
    end -= 2;
    std::memcpy(end, kPairs + 2 * v, 2);
  } else {
    *--end = static_cast<char>('0' + v);
  }
  return end;
}

// LocalFileTag's text, "<inode>-<mtime in ns>", made on the stack: the
// listing makes one a file and a versioned read compares one, a million
// times for a large folder, where two to_string and their joins
// allocated up to three times.
class LocalTagText {
 public:
  explicit LocalTagText(const struct stat& st) {
    const uint64_t ns = static_cast<uint64_t>(st.st_mtim.tv_sec) * 1000000000u +
                        static_cast<uint64_t>(st.st_mtim.tv_nsec);
    char* const end = text_ + sizeof(text_);
    char* begin = DecimalEndingAt(ns, end);
    *--begin = '-';
    begin_ = DecimalEndingAt(static_cast<uint64_t>(st.st_ino), begin);
    size_ = static_cast<size_t>(end - begin_);
  }
  LocalTagText(const LocalTagText&) = delete;  // begin_ points into text_
  LocalTagText& operator=(const LocalTagText&) = delete;
  std::string_view view() const { return {begin_, size_}; }

 private:
  char text_[41];  // two uint64 (20 digits each) and the dash, written from the end
  const char* begin_ = text_;
  size_t size_ = 0;
};

std::string ParentDir(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return "";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// Copies the regular file `from` onto `to` (CopyFileAtomic), creating `to`'s
// folder.
Status CopyRegularFile(const std::string& from, const std::string& to, Env* env) {
  SLUICE_ASSIGN_OR_RETURN(struct stat st, env->Stat(from));
  if (!S_ISREG(st.st_mode)) return NotFoundError(from + " is not a regular file");
  std::string dir = ParentDir(to);
  if (!dir.empty()) SLUICE_RETURN_IF_ERROR(MakeDirs(dir, env));
  return CopyFileAtomic(from, to, env).status();
}

// A folder's stats are taken a round of kStatRound names at a time (only
// one round's stats are held), kStatClaim names a claim of a thread, on up
// to kStatThreads threads (ParallelClaims).
constexpr size_t kStatRound = size_t{1} << 15;
constexpr size_t kStatClaim = 256;
constexpr size_t kStatThreads = 8;

// The stats of names[start, start + n) in the folder open at `dir_fd`
// (`dir` its path, for errors and test doubles) into (*stats)[0, n), on
// several threads for a large folder: a folder of a million files was
// listed a stat by path at a time, each waiting on the kernel's lookup.
// Each is an fstatat of the name readdir gave on the folder's descriptor,
// so the kernel walks no path. A failed stat (vanished, dangling link) is
// left empty, as the serial walk skipped it; an exception (e.g.
// bad_alloc) is rethrown here, as serially.
void StatRound(Env* env, int dir_fd, const std::string& dir,
               const std::vector<std::string>& names, size_t start, size_t n,
               std::vector<std::optional<struct stat>>* stats) {
  stats->assign(n, std::nullopt);
  ParallelClaims(n, kStatClaim, kStatThreads, [&](size_t begin, size_t end) {
    std::string path = dir + "/";  // reused: only the name changes
    const size_t keep = path.size();
    for (size_t j = begin; j < end; ++j) {
      const std::string& name = names[start + j];
      path.resize(keep);
      path += name;
      auto st = env->Stat(FsPath(dir_fd, name, path));
      if (st.ok()) (*stats)[j] = *st;
    }
  });
}

// Appends every regular file under `dir` (key prefix `rel`) to `out`, in the
// order the folder lists them. `dir` is opened once (`at`: relative to its
// parent's descriptor), then listed and its names stat'ed through that
// descriptor. With `names_only`, a name the folder's entry says is a
// regular file is not stat'ed (ListFileStoreNames): its size is 0 and its
// etag "".
Status Walk(Env* env, const FsPath& at, const std::string& dir, const std::string& rel,
            std::vector<ObjectInfo>* out, int depth, bool names_only) {
  if (depth > 64) return IoError("folder nesting deeper than 64 at " + dir);
  auto folder = env->OpenFolder(at);
  if (!folder.ok()) {
    const int err = folder.status().os_error();
    return err == ENOENT || err == ENOTDIR ? Status::Ok() : folder.status();
  }
  std::vector<std::string> names;
  std::vector<unsigned char> types;  // names_only's: each name's d_type
  const FsPath listed(folder->get(), ".", dir);
  if (names_only) {
    SLUICE_ASSIGN_OR_RETURN(std::vector<Env::FolderEntry> entries, env->ListFolderTyped(listed));
    names.reserve(entries.size());
    types.reserve(entries.size());
    for (Env::FolderEntry& e : entries) {
      names.push_back(std::move(e.name));
      types.push_back(e.type);
    }
  } else {
    SLUICE_ASSIGN_OR_RETURN(names, env->ListFolder(listed));
  }
  // The names to stat: all, or those of no type or a link's (which is
  // followed, as a stat'ed walk follows it) and subfolders (a stat tells
  // a folder that vanished; it is walked then).
  std::vector<std::string> to_stat;
  std::vector<size_t> stat_of;  // names_only's: names[k]'s in to_stat, or kNoStat
  constexpr size_t kNoStat = SIZE_MAX;
  if (names_only) {
    stat_of.assign(names.size(), kNoStat);
    for (size_t k = 0; k < names.size(); ++k) {
      if (types[k] == DT_REG) continue;
      if (types[k] != DT_UNKNOWN && types[k] != DT_LNK && types[k] != DT_DIR) continue;
      stat_of[k] = to_stat.size();
      to_stat.push_back(names[k]);
    }
  }
  const std::vector<std::string>& stated = names_only ? to_stat : names;
  out->reserve(out->size() + names.size());  // grown by doubling, up to half was spare
  std::vector<std::optional<struct stat>> stats;
  for (size_t k = 0; k < names.size(); ++k) {
    std::string& name = names[k];
    if (names_only && types[k] == DT_REG) {
      out->push_back({rel.empty() ? std::move(name) : rel + "/" + name, 0, ""});
      continue;
    }
    const size_t s = names_only ? stat_of[k] : k;
    if (s == kNoStat) continue;  // a fifo, socket or device: not a file
    const size_t i = s % kStatRound;
    if (i == 0) {
      StatRound(env, folder->get(), dir, stated, s, std::min(kStatRound, stated.size() - s),
                &stats);
    }
    if (!stats[i]) continue;  // vanished or dangling link
    const struct stat* st = &*stats[i];
    if (S_ISDIR(st->st_mode)) {
      const std::string path = dir + "/" + name;
      SLUICE_RETURN_IF_ERROR(Walk(env, FsPath(folder->get(), name, path), path,
                                  rel.empty() ? name : rel + "/" + name, out, depth + 1,
                                  names_only));
    } else if (S_ISREG(st->st_mode)) {
      // The root's names become the keys (its round's stats are taken):
      // an allocation a file fewer, and no name held twice.
      out->push_back({rel.empty() ? std::move(name) : rel + "/" + name,
                      static_cast<uint64_t>(st->st_size), LocalFileTag(*st)});
    }
  }
  return Status::Ok();
}

// Every regular file under `prefix` of the folder at `root` (OpenFileStore's
// List; `url` names it in errors), sorted by key; Walk's `names_only`.
Result<std::vector<ObjectInfo>> ListFolderFiles(const std::string& url, const std::string& root,
                                                const std::string& prefix, Env* env,
                                                bool names_only) {
  SLUICE_RETURN_IF_ERROR(ValidatePrefix(prefix, url));
  // Walk only the folder the prefix's complete components name.
  size_t slash = prefix.rfind('/');
  std::string rel = slash == std::string::npos ? "" : prefix.substr(0, slash);
  std::vector<ObjectInfo> all;
  const std::string dir = rel.empty() ? root : JoinPath(root, rel);
  SLUICE_RETURN_IF_ERROR(Walk(env, dir, dir, rel, &all, 0, names_only));
  // Filtered in place: a copy held a second list beside the first (at a
  // million files, 80 MB).
  std::erase_if(all, [&](const ObjectInfo& info) {
    return info.key.compare(0, prefix.size(), prefix) != 0;
  });
  SortByKey(&all);
  return all;
}

// The store's ranged read of the file at `path`, the one owner of its
// checks: `version.etag` (LocalFileTag; "" = any version) must be the
// file's tag, `version.size` (0 = any) its size. The n bytes read (fewer
// than `length` at the file's end) go into `room(n)`, which gives room for
// n bytes; how many came is returned.
// `file` names the file (by its whole path, or relative to an open folder:
// LocalRangeReader); errors name its whole path.
// `offset` kFromEnd: the file's last `length` bytes (all of a shorter
// file), where its size is the fstat's of the descriptor read.
constexpr uint64_t kFromEnd = UINT64_MAX;
template <typename Room>
Result<uint64_t> ReadLocalRangeWith(const FsPath& file, uint64_t offset, uint64_t length,
                                    const ObjectVersion& version, Env* env, Room&& room) {
  const std::string_view path = file.path;
  const std::string& etag = version.etag;
  SLUICE_ASSIGN_OR_RETURN(OwnedFd fd, env->Open(file, OpenMode::kRead));
  SLUICE_ASSIGN_OR_RETURN(struct stat st, env->StatOpen(fd.get(), path));
  if (!S_ISREG(st.st_mode)) return NotFoundError(std::string(path) + " is not a regular file");
  const LocalTagText tag(st);
  if (!etag.empty() && tag.view() != etag) {
    return ObjectVersionChangedError(path, etag, std::string(tag.view()), offset, length);
  }
  uint64_t size = static_cast<uint64_t>(st.st_size);
  if (offset == kFromEnd) {
    length = std::min(length, size);
    offset = size - length;
  }
  if (version.size > 0 && size != version.size) {
    return ObjectSizeChangedError(path, size, version.size);
  }
  if (offset > size) {
    return OutOfRangeError("range at offset " + std::to_string(offset) + " past the end of " +
                           std::string(path) + " (size " + std::to_string(size) + ")");
  }
  uint64_t n = std::min(length, size - offset);
  // A file that shrank meanwhile is read to its new end.
  SLUICE_ASSIGN_OR_RETURN(size_t done, env->PReadFull(fd.get(), path, room(n), n, offset));
  if (version.stated != nullptr) *version.stated = ObjectStated{size, std::string(tag.view())};
  return uint64_t{done};
}

Result<std::string> ReadLocalRange(const std::string& path, uint64_t offset, uint64_t length,
                                   const ObjectVersion& version, Env* env) {
  std::string out;
  SLUICE_ASSIGN_OR_RETURN(uint64_t done,
                          ReadLocalRangeWith(path, offset, length, version, env, [&](uint64_t n) {
                            out.resize(n);
                            return out.data();
                          }));
  out.resize(done);
  return out;
}

class FileStore final : public Store {
 public:
  FileStore(std::string url, std::string root, Env* env)
      : url_(std::move(url)), root_(std::move(root)), env_(env) {}

  std::string root() const override { return url_; }

  boost::asio::awaitable<Result<ObjectInfo>> Head(std::string key) override {
    co_return HeadNow(key);
  }

  boost::asio::awaitable<Result<std::string>> GetRange(std::string key, uint64_t offset,
                                                       uint64_t length) override {
    co_return ReadRange(key, offset, length);
  }

  // The version is the file's LocalFileTag, read from the descriptor the
  // bytes are then read from: a file replaced by a rename is never read as
  // the listed one; so is its size, when `version.size` is given. Both are
  // what `version.stated` is told.
  boost::asio::awaitable<Result<std::string>> GetRangeOnlyOfVersion(
      std::string key, uint64_t offset, uint64_t length, ObjectVersion version) override {
    co_return ReadRange(key, offset, length, version);
  }

  boost::asio::awaitable<Result<std::string>> Get(std::string key) override {
    SLUICE_CO_RETURN_IF_ERROR(ValidateKey(key, url_));
    co_return ReadFile(PathOf(key), uint64_t{1} << 40, env_);
  }

  boost::asio::awaitable<Status> GetToFile(std::string key, std::string path,
                                           std::optional<uint64_t> expected_size) override {
    SLUICE_CO_RETURN_IF_ERROR(ValidateKey(key, url_));
    if (expected_size) {
      Result<uint64_t> size = FileSize(PathOf(key), env_);
      if (!size.ok()) co_return size.status();
      if (*size != *expected_size) {
        co_return ObjectSizeChangedError(PathOf(key), *size, *expected_size);
      }
    }
    co_return CopyRegularFile(PathOf(key), path, env_);
  }

  boost::asio::awaitable<Status> PutFile(std::string key, std::string path) override {
    SLUICE_CO_RETURN_IF_ERROR(ValidateKey(key, url_));
    co_return CopyRegularFile(path, PathOf(key), env_);
  }

  boost::asio::awaitable<Status> Put(std::string key, std::string bytes) override {
    SLUICE_CO_RETURN_IF_ERROR(ValidateKey(key, url_));
    std::string path = PathOf(key);
    std::string dir = ParentDir(path);
    if (!dir.empty()) SLUICE_CO_RETURN_IF_ERROR(MakeDirs(dir, env_));
    co_return WriteFileAtomic(path, bytes, env_);
  }

  boost::asio::awaitable<Result<std::vector<ObjectInfo>>> List(std::string prefix) override {
    co_return ListFolderFiles(url_, root_, prefix, env_, /*names_only=*/false);
  }

 private:
  std::string PathOf(const std::string& key) const { return JoinPath(root_, key); }

  Result<ObjectInfo> HeadNow(const std::string& key) const {
    SLUICE_RETURN_IF_ERROR(ValidateKey(key, url_));
    std::string path = PathOf(key);
    SLUICE_ASSIGN_OR_RETURN(struct stat st, env_->Stat(path));
    if (!S_ISREG(st.st_mode)) return NotFoundError(path + " is not a regular file");
    return ObjectInfo{key, static_cast<uint64_t>(st.st_size), LocalFileTag(st)};
  }

  Result<std::string> ReadRange(const std::string& key, uint64_t offset, uint64_t length,
                                const ObjectVersion& version = {}) const {
    SLUICE_RETURN_IF_ERROR(ValidateKey(key, url_));
    return ReadLocalRange(PathOf(key), offset, length, version, env_);
  }

  std::string url_;
  std::string root_;
  Env* env_;
};

}  // namespace

Result<std::string> FileUrlToPath(std::string_view url) {
  const std::string scheme = StoreUrlScheme(url);
  if (!scheme.empty() && scheme != "file") {
    return InvalidArgumentError("'" + std::string(url) + "' is a store URL, not a local path");
  }
  std::string path;
  if (scheme == "file") {
    // StoreUrlScheme: "file" is followed by "://".
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

std::string LocalFileTag(const struct stat& st) {
  LocalTagText text(st);
  return std::string(text.view());
}

Result<std::string> ReadFileStoreRange(std::string_view url, const std::string& key,
                                       uint64_t offset, uint64_t length,
                                       const ObjectVersion& version, Env* env) {
  SLUICE_ASSIGN_OR_RETURN(std::string root, FileUrlToPath(url));
  SLUICE_RETURN_IF_ERROR(ValidateKey(key, url));
  return ReadLocalRange(JoinPath(root, key), offset, length, version,
                        env != nullptr ? env : Env::Default());
}

LocalRangeReader::LocalRangeReader(std::string_view url, Env* env)
    : url_(url), env_(env != nullptr ? env : Env::Default()) {
  auto root = FileUrlToPath(url);
  if (root.ok()) {
    root_ = std::move(*root);
  } else {
    bad_url_ = root.status();
  }
}

Result<uint64_t> LocalRangeReader::ReadInto(const std::string& key, uint64_t offset,
                                            uint64_t length, const ObjectVersion& version,
                                            char* into) const {
  SLUICE_RETURN_IF_ERROR(bad_url_);
  SLUICE_RETURN_IF_ERROR(ValidateKey(key, url_));
  std::call_once(opened_, [&] {
    auto folder = env_->OpenFolder(root_);
    if (folder.ok()) folder_ = std::move(*folder);
  });
  // The whole path, for errors and the Env, in a buffer of the thread's:
  // made a file, it was two allocations of a million reads' ~1.4k
  // instructions beside the open and pread.
  thread_local std::string path;
  JoinPathInto(&path, root_, key);
  auto room = [into](uint64_t) { return into; };
  // A folder that could not be opened: each file by its whole path, which
  // fails (or not) as ReadFileStoreRange's read does.
  if (!folder_.valid()) return ReadLocalRangeWith(path, offset, length, version, env_, room);
  return ReadLocalRangeWith(FsPath(folder_.get(), key, path), offset, length, version, env_,
                            room);
}

Result<uint64_t> LocalRangeReader::ReadTailInto(const std::string& key, uint64_t length,
                                                ObjectStated* stated, char* into) const {
  ObjectVersion any;
  any.stated = stated;
  return ReadInto(key, kFromEnd, length, any, into);
}

Result<std::vector<ObjectInfo>> ListFileStoreNames(std::string_view url, const std::string& prefix,
                                                   Env* env) {
  SLUICE_ASSIGN_OR_RETURN(std::string root, FileUrlToPath(url));
  return ListFolderFiles(std::string(url), root, prefix, env != nullptr ? env : Env::Default(),
                         /*names_only=*/true);
}

Result<std::unique_ptr<Store>> OpenFileStore(std::string_view url, Env* env) {
  SLUICE_ASSIGN_OR_RETURN(std::string path, FileUrlToPath(url));
  return std::unique_ptr<Store>(std::make_unique<FileStore>(
      std::string(url), std::move(path), env != nullptr ? env : Env::Default()));
}

}  // namespace sluice
