#include "engine/dataset/stream_index.h"

#include <unistd.h>

#include <cstdio>

#include "base/file.h"
#include "engine/cache/state_dir.h"
#include "engine/dataset/file_listing_index.h"
#include "engine/dataset/node_file.h"
#include "engine/dataset/parquet_stream_index.h"
#include "engine/planner/mosaic_error.h"
#include "formats/dataset/format_descriptor.h"
#include "formats/parquet/parquet_shard_reader.h"
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

namespace {

// Where a stream's index comes from when its options say: "files" is a
// listing, "parquet" footers, neither an index.json (or, failing that,
// footers: see LoadStreamIndex).
IndexSource SourceOf(const StreamOptions& stream) {
  if (stream.files) return FindShardFormat(kRawFormat)->index_source;
  if (stream.parquet) return FindShardFormat(parquet::kParquetFormat)->index_source;
  return IndexSource::kIndexJson;
}

// A stream without an index.json, whose `missing` said so: a stream of the
// Parquet files its root holds, or `missing` when it holds none or cannot
// be listed (an https:// store, say).
Result<Index> ParquetUnlessNone(const StreamOptions& stream, RemoteSource* remote,
                                std::chrono::milliseconds wait_timeout, const Status& missing) {
  bool found = false;
  auto index = LoadParquetStreamIndex(stream, FileDatasetOptions{}, remote, wait_timeout, &found);
  if (!found) return missing;
  return index;
}

}  // namespace

Result<Index> LoadStreamIndex(const StreamOptions& stream, RemoteSource* remote,
                              std::chrono::milliseconds wait_timeout, uint64_t* index_json_bytes) {
  if (index_json_bytes) *index_json_bytes = 0;
  // The one place that asks where a stream's index comes from. A stream
  // that names no source has an index.json; where there is none, its
  // Parquet files (the first process of a node to look asks the remote for
  // index.json; every process does, once per run, as it cannot know the
  // answer another got: "parquet" in the options saves the request).
  switch (SourceOf(stream)) {
    case IndexSource::kFileListing:
      return LoadFileListingIndex(stream, remote, wait_timeout);
    case IndexSource::kFileFooters:
      return LoadParquetStreamIndex(stream, *stream.parquet, remote, wait_timeout);
    case IndexSource::kIndexJson:
      break;
  }
  std::string root = StreamRoot(stream);
  std::string path = JoinPath(root, "index.json");
  if (!remote) {
    if (!FileExists(path)) {
      // Mosaic's error and text (users match it).
      Status missing = planner::MosaicError("RuntimeError",
                                            "No `remote` provided, but local file " + path +
                                                " does not exist either",
                                            StatusCode::kNotFound);
      return ParquetUnlessNone(stream, nullptr, wait_timeout, missing);
    }
    return ReadIndex(path, index_json_bytes);
  }
  SLUICE_RETURN_IF_ERROR(MakeDirs(root));
  SLUICE_ASSIGN_OR_RETURN(std::string state_dir, CacheStateDir(root));
  Status made = MakeOncePerNode(
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
      });
  // Only the download of index.json can be missing an object.
  if (made.code() == StatusCode::kNotFound) return ParquetUnlessNone(stream, remote, wait_timeout, made);
  SLUICE_RETURN_IF_ERROR(made);
  return ReadIndex(path, index_json_bytes);
}

}  // namespace sluice
