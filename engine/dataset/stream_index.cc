#include "engine/dataset/stream_index.h"

#include <unistd.h>

#include <cstdio>

#include "base/file.h"
#include "engine/cache/state_dir.h"
#include "engine/dataset/file_listing_index.h"
#include "engine/dataset/node_file.h"
#include "engine/planner/mosaic_error.h"
#include "formats/dataset/format_descriptor.h"
#include "formats/raw/raw_file_reader.h"

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

Result<Index> ReadIndex(const std::string& path, uint64_t* index_json_bytes) {
  SLUICE_ASSIGN_OR_RETURN(std::string text, ReadFile(path, kMaxIndexBytes));
  if (index_json_bytes) *index_json_bytes = text.size();
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
                              std::chrono::milliseconds wait_timeout, uint64_t* index_json_bytes) {
  if (index_json_bytes) *index_json_bytes = 0;
  // The one place that asks where a stream's index comes from.
  const IndexSource source =
      stream.files ? FindShardFormat(kRawFormat)->index_source : IndexSource::kIndexJson;
  if (source == IndexSource::kFileListing) return LoadFileListingIndex(stream, remote, wait_timeout);
  if (source != IndexSource::kIndexJson) {
    return UnimplementedError(StreamRoot(stream) + ": no index builder for this format yet");
  }
  std::string root = StreamRoot(stream);
  std::string path = JoinPath(root, "index.json");
  if (!remote) {
    if (!FileExists(path)) {
      // Mosaic's error and text (users match it).
      return planner::MosaicError("RuntimeError",
                                  "No `remote` provided, but local file " + path +
                                      " does not exist either",
                                  StatusCode::kNotFound);
    }
    return ReadIndex(path, index_json_bytes);
  }
  SLUICE_RETURN_IF_ERROR(MakeDirs(root));
  SLUICE_ASSIGN_OR_RETURN(std::string state_dir, CacheStateDir(root));
  SLUICE_RETURN_IF_ERROR(MakeOncePerNode(
      path, state_dir, "index.lock", wait_timeout, [&]() -> Status {
        std::string tmp = TempPathFor(path);
        std::string key = RemoteKey(stream, "index.json");
        auto fetched = remote->Fetch(key, tmp, std::nullopt);
        Env* env = Env::Default();
        if (!fetched.ok()) {
          (void)env->Remove(tmp);
          return fetched.status().WithContext("downloading " + remote->Describe() + "/" + key +
                                              " to " + path);
        }
        Status renamed = env->Rename(tmp, path);
        if (!renamed.ok()) (void)env->Remove(tmp);
        return renamed;
      }));
  return ReadIndex(path, index_json_bytes);
}

}  // namespace sluice
