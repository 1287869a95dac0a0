// Opening a cache folder: checking the shard list, mapping the shared state
// file (initialising it for a new shard list), and recovering from
// processes that died in it.

#include "engine/cache/shard_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <unordered_set>

#include "base/binary_file.h"
#include "base/file.h"
#include "engine/cache/shard_cache_internal.h"
#include "engine/cache/state_dir.h"

namespace sluice {
namespace cl = cache_layout;
using cache_internal::Load;
using cache_internal::LockFile;
using cache_internal::Store;
using cache_internal::TryLockByte;
using cache_internal::UnlockByte;

namespace {

// FNV-1a 64 of the shard count, then each name's length, name and size: the
// state file's fingerprint of a shard list, taken shard by shard.
class Fingerprint {
 public:
  explicit Fingerprint(uint64_t count) { Mix(&count, sizeof(count)); }
  void Add(const ShardSpecView& s) {
    uint64_t len = s.name.size();
    Mix(&len, sizeof(len));
    Mix(s.name.data(), s.name.size());
    Mix(&s.bytes, sizeof(s.bytes));
  }
  uint64_t value() const { return h_; }

 private:
  void Mix(const void* data, size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) { h_ ^= p[i]; h_ *= 1099511628211ull; }
  }
  uint64_t h_ = 14695981039346656037ull;
};

Status ValidateName(size_t index, std::string_view name) {
  auto bad = [&](const char* why) {
    return InvalidArgumentError("shard " + std::to_string(index) + " name '" + std::string(name) +
                                "' " + why);
  };
  if (name.empty()) return bad("is empty");
  if (name.front() == '/') return bad("is absolute; shard names are relative to the cache folder");
  size_t start = 0;
  for (;;) {
    size_t end = name.find('/', start);
    std::string_view part(name.data() + start,
                          (end == std::string_view::npos ? name.size() : end) - start);
    if (part.empty()) return bad("has an empty path component");
    if (part == "." || part == "..") return bad("has a '.' or '..' path component");
    if (start == 0 && part == cl::kStateDir) return bad("is inside the cache's state folder");
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return Status::Ok();
}

}  // namespace

namespace {

class OwnedShardSpecs final : public ShardSpecList {
 public:
  explicit OwnedShardSpecs(std::vector<ShardSpec> specs) : specs_(std::move(specs)) {}
  size_t size() const override { return specs_.size(); }
  ShardSpecView at(size_t i) const override {
    const ShardSpec& s = specs_[i];
    return ShardSpecView{s.name, s.bytes, s.fetch_extra, s.companion, s.companion_bytes};
  }

 private:
  std::vector<ShardSpec> specs_;
};

}  // namespace

std::shared_ptr<const ShardSpecList> ShardSpecsOf(std::vector<ShardSpec> specs) {
  return std::make_shared<OwnedShardSpecs>(std::move(specs));
}

Result<std::unique_ptr<ShardCache>> ShardCache::Open(CacheOptions options,
                                                     std::vector<ShardSpec> shards) {
  return Open(std::move(options), ShardSpecsOf(std::move(shards)));
}

Result<std::unique_ptr<ShardCache>> ShardCache::Open(CacheOptions options,
                                                     std::shared_ptr<const ShardSpecList> list) {
  if (options.root.empty()) return InvalidArgumentError("shard cache: the cache folder is empty");
  if (options.wait_timeout.count() < 0) {
    return InvalidArgumentError("shard cache '" + options.root + "': wait_timeout is negative");
  }
  const ShardSpecList& shards = *list;
  // One pass over the list learns all Open and Init need of it (a million
  // calls of at() a pass): the names' checks, their order, their folders,
  // the fingerprint. Names in strictly ascending order cannot repeat: a list
  // sorted as listings and indexes mostly are is checked against its
  // predecessor, with no set of a million names. The set starts where the
  // order first breaks, holding the names before it, so the first repeat is
  // still the one named.
  std::unordered_set<std::string_view> names;
  bool ascending = true;
  std::string_view previous;
  ListFacts facts;
  Fingerprint fingerprint(shards.size());
  std::unordered_set<std::string_view> folders{std::string_view()};
  facts.folders.push_back(std::string_view());
  std::string_view last_folder;
  auto add_folder = [&](std::string_view name) {
    // A name's folder is most often its predecessor's: no hashing then.
    const std::string_view folder = cache_internal::ParentOf(name);
    if (folder == last_folder) return;
    last_folder = folder;
    if (folders.insert(folder).second) facts.folders.push_back(folder);
  };
  size_t largest = 0;
  auto fetch_bytes = [&](const ShardSpecView& s) {
    return s.bytes + std::max(s.fetch_extra, s.companion_bytes);
  };
  uint64_t largest_bytes = 0;
  for (size_t i = 0; i < shards.size(); ++i) {
    const ShardSpecView s = shards.at(i);
    SLUICE_RETURN_IF_ERROR(ValidateName(i, s.name)
                               .WithContext("shard cache '" + options.root + "'"));
    if (!s.companion.empty()) {
      SLUICE_RETURN_IF_ERROR(ValidateName(i, s.companion)
                                 .WithContext("shard cache '" + options.root + "': companion"));
    }
    if (ascending && (i == 0 || previous < s.name)) {
      previous = s.name;
    } else {
      if (ascending) {
        ascending = false;
        names.reserve(shards.size());
        for (size_t j = 0; j < i; ++j) names.insert(shards.at(j).name);
      }
      if (!names.insert(s.name).second) {
        return InvalidArgumentError("shard cache '" + options.root + "': shard " +
                                    std::to_string(i) + " name '" + std::string(s.name) +
                                    "' is used by an earlier shard too");
      }
    }
    fingerprint.Add(s);
    add_folder(s.name);
    if (!s.companion.empty()) add_folder(s.companion);
    if (fetch_bytes(s) > largest_bytes) {
      largest = i;
      largest_bytes = fetch_bytes(s);
    }
  }
  if (options.cache_limit != 0 && shards.size() > 0 && options.cache_limit < largest_bytes) {
    return InvalidArgumentError(
        "shard cache '" + options.root + "': cache_limit " + std::to_string(options.cache_limit) +
        " bytes is smaller than the largest shard's fetch, shard " + std::to_string(largest) +
        " '" + std::string(shards.at(largest).name) + "' (" + std::to_string(largest_bytes) +
        " bytes with its scratch or companion file)");
  }
  facts.fingerprint = fingerprint.value();
  facts.ascending = ascending;
  std::unique_ptr<ShardCache> cache(new ShardCache(std::move(options), std::move(list)));
  cache->facts_ = std::move(facts);
  SLUICE_RETURN_IF_ERROR(cache->Init());
  return cache;
}

Status ShardCache::Init() {
  pid_ = ::getpid();
  if (options_.env == nullptr) options_.env = Env::Default();
  Env* env = options_.env;
  SLUICE_RETURN_IF_ERROR(MakeDirs(options_.root, env).WithContext(Prefix()));
  SLUICE_ASSIGN_OR_RETURN(root_dir_, ConfinedDir::Open(options_.root, env));
  auto state_dir = CacheStateDir(options_.root, env);
  if (!state_dir.ok()) return state_dir.status().WithContext(Prefix());
  const std::string& part = options_.partition;
  if (part.size() > 64 || part.find_first_not_of("abcdefghijklmnopqrstuvwxyz"
                                                 "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") !=
                              std::string::npos) {
    return InvalidArgumentError(Prefix() + ": the cache partition \"" + part.substr(0, 64) +
                                "\" is not a name of up to 64 letters, digits, '_' or '-'");
  }
  const std::string suffix = part.empty() ? "" : "." + part;
  lock_path_ = JoinPath(*state_dir, cl::kLockFile + suffix);
  state_path_ = JoinPath(*state_dir, cl::kStateFile + suffix);
  SLUICE_ASSIGN_OR_RETURN(pin_file_, LockFile::Open(options_.env, lock_path_));
  // Nothing writes the lock file (only its locks matter) and the state file
  // may go unwritten for long: an age-based /tmp cleaner would delete them
  // under a running job, and processes opening the cache afterwards would
  // lock and count in new files, apart from those still using the old ones.
  // Each open marks them in use. Only opens do: a job that keeps one cache
  // open for longer than such a cleaner's age (persistent DataLoader
  // workers) is still exposed (docs/migration.rst says to spare sluice-*).
  SLUICE_RETURN_IF_ERROR(TouchFile(pin_file_.fd(), lock_path_, env).WithContext(Prefix()));

  SLUICE_ASSIGN_OR_RETURN(GlobalLock global, LockGlobal(Clock::now() + options_.wait_timeout));
  // The state folder is this user's alone (CacheStateDir checks it); a link
  // planted as the file is still refused.
  auto opened = env->Open(state_path_, OpenMode::kReadWrite,
                          OpenOptions{kOwnerOnlyFileMode, /*follow_links=*/false});
  if (!opened.ok()) return opened.status().WithContext(Prefix());
  OwnedFd state_fd = std::move(opened).value();
  SLUICE_RETURN_IF_ERROR(TouchFile(state_fd.get(), state_path_, env).WithContext(Prefix()));
  auto stat = env->StatOpen(state_fd.get(), state_path_);
  if (!stat.ok()) return stat.status().WithContext(Prefix());
  const struct stat st = *stat;
  const uint64_t map_size =
      sizeof(cl::CacheStateHeader) + shards_->size() * sizeof(cl::CacheShardRecord);
  const uint64_t fingerprint = facts_.fingerprint;
  auto map = [&]() -> Status {
    auto mapped = env->MapShared(state_fd.get(), state_path_, map_size);
    if (!mapped.ok()) return mapped.status().WithContext(Prefix());
    state_map_ = std::move(mapped).value();
    header_ = reinterpret_cast<cl::CacheStateHeader*>(state_map_.data());
    records_ = reinterpret_cast<cl::CacheShardRecord*>(state_map_.data() +
                                                       sizeof(cl::CacheStateHeader));
    return Status::Ok();
  };

  bool valid = false;
  if (static_cast<uint64_t>(st.st_size) == map_size) {
    SLUICE_RETURN_IF_ERROR(map());
    valid = CheckBinaryTag(std::string_view(state_map_.data(), state_map_.size()), cl::kStateKind,
                           state_path_)
                .ok() &&
            Load(header_->record_size) == sizeof(cl::CacheShardRecord) &&
            Load(header_->shard_count) == shards_->size() &&
            Load(header_->fingerprint) == fingerprint && Load(header_->initialized) == 1;
  }
  if (!valid) {
    // Re-initialising is only safe when no other ShardCache uses the folder.
    SLUICE_ASSIGN_OR_RETURN(bool alone, TryLockByte(global.file(), cl::kUsersByte, true));
    if (!alone) {
      return InvalidArgumentError(Prefix() + ": the folder is in use by another process with a "
                                  "different shard list (" + std::to_string(shards_->size()) +
                                  " shards here)");
    }
    SLUICE_RETURN_IF_ERROR(UnlockByte(global.file(), cl::kUsersByte));
    state_map_ = SharedMap();
    header_ = nullptr;
    records_ = nullptr;
    Status sized = env->Truncate(state_fd.get(), state_path_, 0);
    if (sized.ok()) sized = env->Truncate(state_fd.get(), state_path_, map_size);
    if (!sized.ok()) return sized.WithContext(Prefix());
    SLUICE_RETURN_IF_ERROR(map());
    header_->tag = TagOf(cl::kStateKind);
    Store(header_->record_size, static_cast<uint32_t>(sizeof(cl::CacheShardRecord)));
    Store(header_->shard_count, static_cast<uint64_t>(shards_->size()));
    Store(header_->fingerprint, fingerprint);
    SLUICE_RETURN_IF_ERROR(RecomputeLocked(global.file(), /*alone=*/true));
    Store(header_->initialized, uint64_t{1});
  } else {
    // The first user recounts from the files (the truth): the state outlives
    // the processes, and files may have been deleted or copied in between.
    SLUICE_ASSIGN_OR_RETURN(bool alone, TryLockByte(global.file(), cl::kUsersByte, true));
    if (alone) SLUICE_RETURN_IF_ERROR(UnlockByte(global.file(), cl::kUsersByte));
    if (alone || Load(header_->dirty) != 0) SLUICE_RETURN_IF_ERROR(RecomputeLocked(global.file(), alone));
  }
  SLUICE_RETURN_IF_ERROR(ReclaimDeadFetchesLocked(global.file()));
  SweepDeadTemps();
  // Only exclusive holders can conflict, and they hold global too.
  SLUICE_ASSIGN_OR_RETURN(bool user, TryLockByte(pin_file_, cl::kUsersByte, false));
  if (!user) return InternalError(Prefix() + ": users lock conflicts while holding the cache lock");
  return Status::Ok();
}

}  // namespace sluice
