// The files of a shard on disk: whether it is present, the bytes it keeps
// or reserves, deleting it, and its fetchers' temporaries.

#include "engine/cache/shard_cache.h"

#include <sys/stat.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <unordered_set>

#include "base/file.h"
#include "engine/cache/shard_cache_internal.h"

namespace sluice {
namespace cl = cache_layout;
using cache_internal::Load;
using cache_internal::ParentOf;
using cache_internal::Store;

int ShardCache::FileState(size_t shard) const {
  return cache_internal::FileStateOf(root_dir_.Stat(spec(shard).name, /*follow_links=*/!options_.evictable),
                                     spec(shard).bytes);
}

uint64_t ShardCache::KeptBytes(size_t shard) const {
  uint64_t kept = spec(shard).bytes;
  if (!spec(shard).companion.empty() && root_dir_.Stat(spec(shard).companion).ok()) {
    kept += spec(shard).companion_bytes;
  }
  return kept;
}

uint64_t ShardCache::FetchBytes(size_t shard) const {
  return spec(shard).bytes + std::max(spec(shard).fetch_extra, spec(shard).companion_bytes);
}

Status ShardCache::DeleteFiles(size_t shard, int state) {
  if (state != 0) SLUICE_RETURN_IF_ERROR(root_dir_.Remove(spec(shard).name));
  if (!spec(shard).companion.empty()) (void)root_dir_.Remove(spec(shard).companion);
  return Status::Ok();
}

std::string ShardCache::TempName(size_t shard, const TempOwner& owner, uint32_t seq) const {
  return TempPathFor(spec(shard).name, owner, seq);
}

void ShardCache::SweepDeadTemps() const {
  for (std::string_view folder : facts_.folders) (void)root_dir_.SweepDeadTemps(folder);
}

void ShardCache::RemoveStaleTemp(size_t shard) {
  cl::CacheShardRecord& r = records_[shard];
  const TempOwner owner{Load(r.temp_pid), Load(r.temp_start)};
  if (owner.pid == 0) return;
  const std::string tmp = TempName(shard, owner, Load(r.temp_seq));
  (void)root_dir_.Remove(tmp);
  (void)root_dir_.Remove(ScratchPath(tmp));
  Store(r.temp_pid, uint32_t{0});
  Store(r.temp_seq, uint32_t{0});
  Store(r.temp_start, uint64_t{0});
}

}  // namespace sluice
