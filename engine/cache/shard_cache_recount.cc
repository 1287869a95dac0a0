// Every shard's FileState at once, for the recount of a folder's first user:
// at a million shards a path walked per shard (a dup, an fstatat, a close,
// and openat per folder on the way) cost seconds in every job's first
// process (issue 38), though a cache holds few of them. Each folder holding
// shards is listed once instead, and only the names listed are stat'ed,
// relative to it.

#include <bit>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/file.h"
#include "engine/cache/shard_cache.h"
#include "engine/cache/shard_cache_internal.h"

namespace sluice {
using cache_internal::BaseOf;
using cache_internal::FileStateOf;
using cache_internal::ParentOf;

namespace {

// A shard's number in the tables below; 0 in BaseNameTable's slots is
// empty, so the largest is UINT32_MAX - 1.
using ShardNumber = uint32_t;

// The shards whose names lie directly in one folder.
struct FolderShards {
  std::string_view folder;
  std::vector<ShardNumber> shards;
};

// Only for a list CheckRecountShardCount let through.
std::vector<FolderShards> GroupByFolder(const ShardSpecList& list) {
  std::vector<FolderShards> groups;
  std::unordered_map<std::string_view, size_t> index;
  size_t last = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string_view folder = ParentOf(list.at(i).name);
    // A name's folder is most often its predecessor's: no hashing then.
    if (groups.empty() || groups[last].folder != folder) {
      auto [it, fresh] = index.try_emplace(folder, groups.size());
      if (fresh) groups.push_back(FolderShards{folder, {}});
      last = it->second;
    }
    groups[last].shards.push_back(static_cast<ShardNumber>(i));
  }
  return groups;
}

// The shards of one folder by their last name component: open addressing
// over their numbers, no string kept (the list holds the names).
class BaseNameTable {
 public:
  BaseNameTable(const ShardSpecList& list, const std::vector<ShardNumber>& shards)
      : list_(list), slots_(std::bit_ceil(2 * shards.size() + 1), 0) {
    for (ShardNumber shard : shards) {
      size_t at = Hash(BaseOf(list_.at(shard).name));
      while (slots_[at] != 0) at = (at + 1) & (slots_.size() - 1);
      slots_[at] = shard + 1;
    }
  }
  // The shard named `base` in the folder, or -1.
  int64_t Find(std::string_view base) const {
    for (size_t at = Hash(base);; at = (at + 1) & (slots_.size() - 1)) {
      if (slots_[at] == 0) return -1;
      const ShardNumber shard = slots_[at] - 1;
      if (BaseOf(list_.at(shard).name) == base) return shard;
    }
  }

 private:
  size_t Hash(std::string_view s) const {
    return std::hash<std::string_view>{}(s) & (slots_.size() - 1);
  }
  const ShardSpecList& list_;
  std::vector<ShardNumber> slots_;  // a shard's number + 1; 0 = empty
};

}  // namespace

Status cache_internal::CheckRecountShardCount(uint64_t count) {
  constexpr uint64_t kMost = std::numeric_limits<ShardNumber>::max();
  if (count <= kMost) return Status::Ok();
  return InvalidArgumentError(std::to_string(count) + " shards: a cache's recount numbers at most " +
                              std::to_string(kMost));
}

Result<std::vector<int8_t>> ShardCache::FileStates() const {
  const ShardSpecList& list = *shards_;
  std::vector<int8_t> states(list.size(), 0);
  // Lists `folder` and sets the state of each shard `find` names (-1: none)
  // among its names; falls back on FileState for each of its `members`
  // where the folder cannot be listed as FileState would reach it: a link
  // on the way is not followed here, so anything but a plain missing folder
  // (a link the user's own folder may follow, an unreadable folder) is left
  // to it. A missing folder leaves its shards missing, as FileState says.
  auto recount = [&](std::string_view folder, const auto& find, const auto& members) {
    auto slow = [&] { members([&](size_t shard) { states[shard] = static_cast<int8_t>(FileState(shard)); }); };
    Result<OwnedFd> fd = root_dir_.OpenFolder(folder, /*create=*/false);
    if (!fd.ok()) {
      if (fd.status().code() != StatusCode::kNotFound) slow();
      return;
    }
    Env* env = options_.env;
    const std::string folder_path = root_dir_.PathOf(folder);
    Status listed = env->ForEachInFolder(FsPath(fd->get(), ".", folder_path), [&](const char* name) {
      const int64_t shard = find(std::string_view(name));
      if (shard < 0) return;
      const std::string path = JoinPath(folder_path, name);
      states[shard] = static_cast<int8_t>(FileStateOf(
          env->Stat(FsPath(fd->get(), name, path), /*follow_links=*/!options_.evictable),
          spec(shard).bytes));
    });
    if (!listed.ok()) slow();
  };

  if (facts_.ascending) {
    // A listed name is looked up in the sorted list: a folder of k names
    // costs k log n calls of at(), nothing a shard.
    std::string whole;
    for (std::string_view folder : facts_.folders) {
      auto find = [&](std::string_view base) -> int64_t {
        whole.assign(folder);
        if (!folder.empty()) whole += '/';
        whole += base;
        size_t lo = 0, hi = list.size();
        while (lo < hi) {
          const size_t mid = lo + (hi - lo) / 2;
          if (list.at(mid).name < whole) lo = mid + 1; else hi = mid;
        }
        return lo < list.size() && list.at(lo).name == whole ? static_cast<int64_t>(lo) : -1;
      };
      auto members = [&](const auto& each) {
        for (size_t i = 0; i < list.size(); ++i) {
          if (ParentOf(list.at(i).name) == folder) each(i);
        }
      };
      recount(folder, find, members);
    }
    return states;
  }
  SLUICE_RETURN_IF_ERROR(
      cache_internal::CheckRecountShardCount(list.size()).WithContext(Prefix()));
  for (const FolderShards& group : GroupByFolder(list)) {
    const BaseNameTable table(list, group.shards);
    auto find = [&](std::string_view base) { return table.Find(base); };
    auto members = [&](const auto& each) {
      for (ShardNumber shard : group.shards) each(shard);
    };
    recount(group.folder, find, members);
  }
  return states;
}

}  // namespace sluice
