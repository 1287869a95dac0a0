#include "engine/dataset/stream_index.h"

#include <unistd.h>

#include <cstdio>
#include <thread>

#include "base/file.h"
#include "engine/cache/cache_layout.h"
#include "engine/cache/ofd_lock.h"

namespace sluice {
namespace {

constexpr uint64_t kMaxIndexBytes = uint64_t{1} << 30;

Status CheckNames(const Index& index, const std::string& path) {
  if (index.shards.empty()) return CorruptError(path + ": lists no shards");
  for (size_t i = 0; i < index.shards.size(); ++i) {
    const ShardEntry& e = index.shards[i];
    for (const FileInfo* f : {&e.raw_data, e.zip_data ? &*e.zip_data : nullptr,
                              e.raw_meta ? &*e.raw_meta : nullptr,
                              e.zip_meta ? &*e.zip_meta : nullptr}) {
      if (f && !IsSafeBasename(f->basename)) {
        return CorruptError(path + ": shard " + std::to_string(i) + ": unsafe file name '" +
                            f->basename + "'");
      }
      if (f && f->basename.find("/.sluice") != std::string::npos) {
        return CorruptError(path + ": shard " + std::to_string(i) + ": file name '" +
                            f->basename + "' collides with the cache state folder");
      }
    }
  }
  return Status::Ok();
}

Result<Index> ReadIndex(const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN(std::string text, ReadFile(path, kMaxIndexBytes));
  SLUICE_ASSIGN_OR_RETURN(Index index, ParseIndex(text, path));
  SLUICE_RETURN_IF_ERROR(CheckNames(index, path));
  return index;
}

}  // namespace

std::string StreamRoot(const StreamOptions& stream) {
  return stream.split.empty() ? stream.local : JoinPath(stream.local, stream.split);
}

std::string RemoteKey(const StreamOptions& stream, const std::string& basename) {
  return stream.split.empty() ? basename : stream.split + "/" + basename;
}

Result<Index> LoadStreamIndex(const StreamOptions& stream, RemoteSource* remote,
                              std::chrono::milliseconds wait_timeout) {
  std::string root = StreamRoot(stream);
  std::string path = JoinPath(root, "index.json");
  if (!remote || FileExists(path)) return ReadIndex(path);

  std::string state_dir = JoinPath(root, cache_layout::kStateDir);
  SLUICE_RETURN_IF_ERROR(MakeDirs(state_dir));
  SLUICE_ASSIGN_OR_RETURN(cache_internal::UniqueFd fd,
                          cache_internal::OpenLockFile(JoinPath(state_dir, "index.lock")));
  auto deadline = std::chrono::steady_clock::now() + wait_timeout;
  while (true) {
    SLUICE_ASSIGN_OR_RETURN(bool got, cache_internal::TryLockByte(fd.get(), 0, true));
    if (got) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      return DeadlineExceededError(
                    path + ": timed out after " + std::to_string(wait_timeout.count()) +
                        " ms waiting for another process to download it");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  // Holding the lock: another process may have finished meanwhile.
  if (!FileExists(path)) {
    std::string tmp = TempPathFor(path);
    std::string key = RemoteKey(stream, "index.json");
    auto fetched = remote->Fetch(key, tmp, std::nullopt);
    if (!fetched.ok()) {
      std::remove(tmp.c_str());
      return fetched.status().WithContext("downloading " + remote->Describe() + "/" + key +
                                          " to " + path);
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
      std::remove(tmp.c_str());
      return IoError("rename " + tmp + " -> " + path + " failed");
    }
  }
  (void)cache_internal::UnlockByte(fd.get(), 0);
  return ReadIndex(path);
}

}  // namespace sluice
