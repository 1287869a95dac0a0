#include "engine/dataset/stream_index.h"

#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <cstdio>
#include <functional>
#include <optional>
#include <vector>

#include "base/file.h"
#include "base/mapped_file.h"
#include "base/page_cache_write.h"
#include "engine/cache/cache_layout.h"
#include "engine/cache/state_dir.h"
#include "engine/dataset/file_listing_index.h"
#include "engine/dataset/node_file.h"
#include "engine/dataset/parquet_footer_store.h"
#include "engine/dataset/parquet_stream_index.h"
#include "engine/planner/mosaic_error.h"
#include "formats/dataset/format_descriptor.h"
#include "formats/parquet/parquet_shard_reader.h"
#include "formats/raw/raw_file_reader.h"

namespace sluice {
namespace {

constexpr uint64_t kMaxIndexBytes = uint64_t{1} << 30;

Status CheckNames(const ShardTable& table, const std::string& path) {
  if (table.empty()) return CorruptError(path + ": lists no shards");
  for (size_t i = 0; i < table.size(); ++i) {
    const ShardRef e = table.ref(i);
    for (const std::optional<FileRef>& f : {std::optional<FileRef>(e.raw_data), e.zip_data,
                                            e.raw_meta, e.zip_meta}) {
      if (f && !IsSafeBasename(f->basename)) {
        return CorruptError(path + ": shard " + std::to_string(i) + ": unsafe file name '" +
                            std::string(f->basename) + "'");
      }
      if (f && f->basename.find("/.sluice") != std::string_view::npos) {
        return CorruptError(path + ": shard " + std::to_string(i) + ": file name '" +
                            std::string(f->basename) + "' collides with the cache state folder");
      }
    }
  }
  return Status::Ok();
}

// An index a builder made (a listing's, footers'): checked by its builder.
Result<ShardTable> TableOf(const Index& index) { return ShardTable::FromIndex(index); }

// index.json straight into a table. Mapped, not read, when it can be: the
// parser reads the page cache in place (the rest of the last page is its
// padding), so the node's first process holds no copy of an index of
// hundreds of MB; ReadFile (and its errors) otherwise.
Result<ShardTable> ParseIndexFile(const std::string& path, Env* env) {
  Result<MappedFile> map = MappedFile::Open(path, env);
  std::optional<ShardTable> table;
  if (map.ok() && map->size() > 0 && map->size() <= kMaxIndexBytes) {
    const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
    const uint64_t readable = (map->size() + page - 1) / page * page;
    SLUICE_ASSIGN_OR_RETURN(table, ShardTable::FromIndexJson(map->data(), path, readable));
  } else {
    SLUICE_ASSIGN_OR_RETURN(std::string text, ReadFile(path, kMaxIndexBytes, env));
    SLUICE_ASSIGN_OR_RETURN(table, ShardTable::FromIndexJson(text, path));
  }
  SLUICE_RETURN_IF_ERROR(CheckNames(*table, path));
  return std::move(*table);
}

// What a binary index was made from: the index.json's identity and
// version (a new download is a new inode; an edit, a new time).
uint64_t SourceKeyOf(const struct stat& st) {
  const uint64_t parts[] = {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
                            static_cast<uint64_t>(st.st_size),
                            static_cast<uint64_t>(st.st_mtim.tv_sec),
                            static_cast<uint64_t>(st.st_mtim.tv_nsec)};
  return XXH3_64bits(parts, sizeof(parts));
}

Result<ShardTable> MapBinaryIndex(const std::string& bin, uint64_t key, Env* env) {
  SLUICE_ASSIGN_OR_RETURN(MappedFile map, MappedFile::Open(bin, env));
  auto owner = std::make_shared<MappedFile>(std::move(map));
  const std::string_view bytes = owner->data();
  return ShardTable::FromBytes(std::move(owner), bytes, key, bin);
}

// `table` into the file `bin` (atomically), written from its own arrays
// (no serialized copy of it in memory) in page-cache-sized writes: every
// process maps the file.
Status WriteBinaryIndex(const std::string& bin, const ShardTable& table, uint64_t key, Env* env) {
  SLUICE_ASSIGN_OR_RETURN(TempFile tmp, TempFile::Create(bin, env));
  std::string scratch;
  uint64_t offset = 0;
  for (std::string_view piece : table.SerializedPieces(key, &scratch)) {
    SLUICE_RETURN_IF_ERROR(WriteInPageCacheBlocks(tmp, piece, &offset));
  }
  return tmp.Commit();
}

// The table of the index.json at `path` in folder `root` through the
// node's binary index (stream_index.h); nullopt when there is no state
// folder to keep one in.
Result<std::optional<ShardTable>> BinaryIndexOf(const std::string& root, const std::string& path,
                                                const struct stat& st,
                                                std::chrono::milliseconds wait_timeout, Env* env) {
  auto state_dir = CacheStateDir(root, env);
  if (!state_dir.ok()) return std::optional<ShardTable>();
  const std::string bin = JoinPath(*state_dir, "index.bin");
  const uint64_t key = SourceKeyOf(st);
  std::optional<ShardTable> table;
  auto current = [&] {
    auto mapped = MapBinaryIndex(bin, key, env);
    if (mapped.ok()) table = std::move(*mapped);
    return mapped.ok();
  };
  auto make = [&]() -> Status {
    SLUICE_ASSIGN_OR_RETURN(ShardTable built, ParseIndexFile(path, env));
    // Unwritable (a full disk): this process keeps what it parsed.
    if (WriteBinaryIndex(bin, built, key, env).ok()) {
      auto mapped = MapBinaryIndex(bin, key, env);
      if (mapped.ok()) {
        table = std::move(*mapped);
        return Status::Ok();
      }
    }
    table = std::move(built);
    return Status::Ok();
  };
  SLUICE_RETURN_IF_ERROR(
      MakeOncePerNode(bin, *state_dir, "index.bin.lock", wait_timeout, make, current, env));
  return table;
}

void AppendKeyPart(std::string_view part, std::string* out) {
  const uint64_t n = part.size();
  out->append(reinterpret_cast<const char*>(&n), sizeof(n));
  out->append(part);
}

std::function<void()>& ListedBuildHook() {
  static std::function<void()> hook;
  return hook;
}

// The binary index of a listed table: its state folder, name and path.
struct ListedBinary {
  std::string state_dir, name, path;
};

ListedBinary ListedBinaryOf(const StreamOptions& stream, bool parquet,
                            const FileDatasetOptions& options) {
  ListedBinary b;
  b.state_dir = JoinPath(StreamRoot(stream), cache_layout::kStateDir);
  const std::string set = ColumnSetTag(options.columns);
  b.name = parquet ? "parquet_index" + (set.empty() ? "" : "." + set) + ".bin" : "listing_index.bin";
  b.path = JoinPath(b.state_dir, b.name);
  return b;
}

// The binary index's key, or none: `inputs` (when given) tells whether the
// files it is made from were all there (none when they were, but below
// `binary_from` bytes).
std::optional<uint64_t> ListedTableKey(const StreamOptions& stream, bool parquet,
                                       const FileDatasetOptions& options,
                                       const std::string& state_dir, const RemoteSource* remote,
                                       uint64_t binary_from, Env* env, bool* inputs = nullptr) {
  if (inputs) *inputs = false;
  std::string recipe;
  // How the table is made from those files: a Sluice that makes it
  // otherwise (other pieces, say) changes this, so no table of the old
  // recipe is read.
  // 2: a piece holds its file's listed etag (a fetch reads its footer
  // from the file where the node keeps no footer store).
  AppendKeyPart("listed table 2", &recipe);
  AppendKeyPart(parquet ? "parquet" : "files", &recipe);
  AppendKeyPart(stream.remote, &recipe);
  AppendKeyPart(stream.split, &recipe);
  AppendKeyPart(options.manifest, &recipe);
  AppendKeyPart(std::to_string(options.selection.globs.size()), &recipe);
  for (const std::string& g : options.selection.globs) AppendKeyPart(g, &recipe);
  AppendKeyPart(std::to_string(options.columns.size()), &recipe);
  for (const std::string& c : options.columns) AppendKeyPart(c, &recipe);
  uint64_t bytes = 0;
  std::vector<std::string> inputs_paths = {StreamListingPath(state_dir)};
  if (parquet && remote != nullptr && KeepsParquetFooterStore(*remote)) {
    inputs_paths.push_back(ParquetFooterStorePath(state_dir));
  }
  for (const std::string& input : inputs_paths) {
    auto st = env->Stat(input);
    if (!st.ok()) return std::nullopt;
    const uint64_t parts[] = {static_cast<uint64_t>(st->st_dev), static_cast<uint64_t>(st->st_ino),
                              static_cast<uint64_t>(st->st_size),
                              static_cast<uint64_t>(st->st_mtim.tv_sec),
                              static_cast<uint64_t>(st->st_mtim.tv_nsec)};
    recipe.append(reinterpret_cast<const char*>(parts), sizeof(parts));
    bytes += static_cast<uint64_t>(st->st_size);
  }
  if (inputs) *inputs = true;
  if (bytes < binary_from) return std::nullopt;
  return XXH3_64bits(recipe.data(), recipe.size());
}

// The node's binary index of the table, when it is there and current:
// nothing read from the listing or the footers, nothing asked of the remote.
std::optional<ShardTable> MappedListedTable(const StreamOptions& stream, bool parquet,
                                            const FileDatasetOptions& options,
                                            const RemoteSource* remote, uint64_t binary_from,
                                            Env* env) {
  const ListedBinary b = ListedBinaryOf(stream, parquet, options);
  const std::optional<uint64_t> key =
      ListedTableKey(stream, parquet, options, b.state_dir, remote, binary_from, env);
  if (!key) return std::nullopt;
  auto mapped = MapBinaryIndex(b.path, *key, env);
  if (!mapped.ok()) return std::nullopt;
  return std::move(*mapped);
}

// The table of a remote stream indexed from its listing (raw files) or its
// files' footers (Parquet), through a binary index beside the node's
// listing and footer store (where the node keeps one: KeepsParquetFooterStore;
// a folder on a local disk's is keyed by the listing alone, its footers
// read from the files): `build` makes the table from them (each made
// once per node by its own loader); the binary index is keyed by the
// options that shape the table and the identity (device, inode, size,
// modification time) of the files it was made from, so a new listing or
// footer store (each written under a new name and renamed) is a new key.
// Without a remote (the folder walked each time) or below `binary_from`
// bytes of those files: `build` alone.
//
// Once per node: the first opener builds the table and writes the binary
// index while holding the node lock <bin>.lock (node_file.h's
// MakeOncePerNode); the others wait for it, then map what it wrote. Past
// `wait_timeout` of waiting a process builds alone rather than hang. The
// builder keys the index by those files as they are after `build`
// (a cold node has none before it: `build` makes them) and writes it only
// when they were absent before or unchanged across `build`: the files are
// made once per node and replaced only when made for another source,
// which is part of the key, so the table is never keyed by files of
// another recipe than the one it was made from.
Result<ShardTable> ListedTable(const StreamOptions& stream, bool parquet,
                               const FileDatasetOptions& options, RemoteSource* remote,
                               uint64_t binary_from, std::chrono::milliseconds wait_timeout, Env* env,
                               const std::function<Result<ShardTable>()>& build_table) {
  auto build = [&] {
    if (const auto& hook = ListedBuildHook()) hook();
    return build_table();
  };
  if (!remote) return build();
  const ListedBinary names = ListedBinaryOf(stream, parquet, options);
  const std::string& state_dir = names.state_dir;
  const std::string& bin_name = names.name;
  const std::string& bin = names.path;
  auto key_of = [&](bool* inputs = nullptr) {
    return ListedTableKey(stream, parquet, options, state_dir, remote, binary_from, env, inputs);
  };
  bool inputs = false;
  const std::optional<uint64_t> before = key_of(&inputs);
  if (before) {
    auto mapped = MapBinaryIndex(bin, *before, env);
    if (mapped.ok()) return std::move(*mapped);
  } else if (inputs) {
    return build();  // too small to keep a binary index of
  }
  std::optional<ShardTable> table;
  auto current = [&] {
    const std::optional<uint64_t> key = key_of();
    if (!key) return false;
    auto mapped = MapBinaryIndex(bin, *key, env);
    if (mapped.ok()) table = std::move(*mapped);
    return mapped.ok();
  };
  auto make = [&]() -> Status {
    const std::optional<uint64_t> start = key_of();
    SLUICE_ASSIGN_OR_RETURN(ShardTable built, build());
    const std::optional<uint64_t> after = key_of();
    if (after && (!start || start == after) && WriteBinaryIndex(bin, built, *after, env).ok()) {
      auto mapped = MapBinaryIndex(bin, *after, env);
      if (mapped.ok()) {
        table = std::move(*mapped);
        return Status::Ok();
      }
    }
    // Unwritable (a full disk) or too small: this process keeps what it built.
    table = std::move(built);
    return Status::Ok();
  };
  Status made = MakeOncePerNode(bin, state_dir, bin_name + ".lock", wait_timeout, make, current, env);
  if (made.code() == StatusCode::kDeadlineExceeded) return build();
  SLUICE_RETURN_IF_ERROR(made);
  return std::move(*table);
}

// `root`'s index.json.
Result<ShardTable> ReadIndex(const std::string& root, uint64_t* index_json_bytes,
                             uint64_t binary_from, std::chrono::milliseconds wait_timeout,
                             Env* env) {
  const std::string path = JoinPath(root, "index.json");
  auto stat = env->Stat(path);
  if (!stat.ok()) return ReadFile(path, kMaxIndexBytes, env).status();
  const struct stat st = *stat;
  if (index_json_bytes) *index_json_bytes = static_cast<uint64_t>(st.st_size);
  if (static_cast<uint64_t>(st.st_size) >= binary_from) {
    SLUICE_ASSIGN_OR_RETURN(std::optional<ShardTable> table,
                            BinaryIndexOf(root, path, st, wait_timeout, env));
    if (table) {
      SLUICE_RETURN_IF_ERROR(CheckNames(*table, path));
      return std::move(*table);
    }
  }
  return ParseIndexFile(path, env);
}

}  // namespace

void SetListedTableBuildHookForTesting(std::function<void()> hook) { ListedBuildHook() = std::move(hook); }

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
// be listed (an https:// store, say). A remote one keeps its binary index
// whatever its size: it is also the node's memory of the probe's answer
// (ParquetFoundBefore).
Result<ShardTable> ParquetUnlessNone(const StreamOptions& stream, RemoteSource* remote,
                                     std::chrono::milliseconds wait_timeout,
                                     const Status& missing, Env* env,
                                     std::unique_ptr<GuessedPieceHead>* piece_guess) {
  bool found = true;
  const FileDatasetOptions options;
  auto table = ListedTable(stream, true, options, remote, /*binary_from=*/0, wait_timeout, env,
                           [&]() -> Result<ShardTable> {
                             return LoadParquetStreamTable(stream, options, remote, wait_timeout,
                                                           &found, env, piece_guess);
                           });
  if (!found) return missing;
  return table;
}

// The table ParquetUnlessNone kept when a process of the node found no
// index.json for this stream before (none: never, or it held no rows).
std::optional<ShardTable> ParquetFoundBefore(const StreamOptions& stream,
                                             const RemoteSource* remote, Env* env) {
  std::optional<ShardTable> table =
      MappedListedTable(stream, true, FileDatasetOptions(), remote, /*binary_from=*/0, env);
  if (table && table->size() == 0) table.reset();
  return table;
}

}  // namespace

Result<ShardTable> LoadStreamIndex(const StreamOptions& stream, RemoteSource* remote,
                                   std::chrono::milliseconds wait_timeout,
                                   uint64_t* index_json_bytes, uint64_t binary_index_from_bytes,
                                   Env* env, std::unique_ptr<GuessedHead>* guess,
                                   std::unique_ptr<GuessedPieceHead>* piece_guess) {
  if (index_json_bytes) *index_json_bytes = 0;
  if (guess) guess->reset();
  if (piece_guess) piece_guess->reset();
  // The one place that asks where a stream's index comes from. A stream
  // that names no source has an index.json; where there is none, its
  // Parquet files (the first process of a node to look asks the remote for
  // index.json; every process does, once per run, as it cannot know the
  // answer another got: "parquet" in the options saves the request).
  switch (SourceOf(stream)) {
    case IndexSource::kFileListing:
      return ListedTable(stream, false, *stream.files, remote, binary_index_from_bytes, wait_timeout, env,
                         [&]() -> Result<ShardTable> {
                           SLUICE_ASSIGN_OR_RETURN(
                               Index index, LoadFileListingIndex(stream, remote, wait_timeout, env));
                           return TableOf(index);
                         });
    case IndexSource::kFileFooters:
      return ListedTable(stream, true, *stream.parquet, remote, binary_index_from_bytes, wait_timeout, env,
                         [&]() -> Result<ShardTable> {
                           return LoadParquetStreamTable(stream, *stream.parquet, remote,
                                                         wait_timeout, nullptr, env, piece_guess);
                         });
    case IndexSource::kIndexJson:
      break;
  }
  std::string root = StreamRoot(stream);
  std::string path = JoinPath(root, "index.json");
  if (!remote) {
    if (!FileExists(path, env)) {
      // Mosaic's error and text (users match it).
      Status missing = planner::MosaicError("RuntimeError",
                                            "No `remote` provided, but local file " + path +
                                                " does not exist either",
                                            StatusCode::kNotFound);
      return ParquetUnlessNone(stream, nullptr, wait_timeout, missing, env, nullptr);
    }
    return ReadIndex(root, index_json_bytes, binary_index_from_bytes, wait_timeout, env);
  }
  // Warm Parquet: a node that found no index.json before keeps the table it
  // made then, as a warm MDS node keeps its index.json: no index.json is
  // asked for (a round trip in every process's construction), and an
  // index.json the remote gets later is not seen, as an MDS stream's newer
  // index.json is not.
  const bool indexed = FileExists(path, env);
  if (!indexed) {
    if (std::optional<ShardTable> parquet = ParquetFoundBefore(stream, remote, env)) return std::move(*parquet);
  }
  // Cold: the index's answer and the first shard's head, one round trip.
  if (guess && !indexed) {
    *guess = std::make_unique<GuessedHead>(*remote, RemoteKey(stream, GuessedFirstShard()));
  }
  SLUICE_RETURN_IF_ERROR(MakeDirs(root, env));
  SLUICE_ASSIGN_OR_RETURN(std::string state_dir, CacheStateDir(root, env));
  Status made = MakeOncePerNode(
      path, state_dir, "index.lock", wait_timeout, [&]() -> Status {
        std::string tmp = TempPathFor(path);
        std::string key = RemoteKey(stream, "index.json");
        auto fetched = remote->Fetch(key, tmp, std::nullopt);
        if (!fetched.ok()) {
          (void)env->Remove(tmp);
          return fetched.status().WithContext("downloading " + remote->Describe() + "/" + key +
                                              " to " + path);
        }
        Status renamed = env->Rename(tmp, path);
        if (!renamed.ok()) (void)env->Remove(tmp);
        return renamed;
      },
      nullptr, env);
  // Only the download of index.json can be missing an object.
  if (made.code() == StatusCode::kNotFound) {
    return ParquetUnlessNone(stream, remote, wait_timeout, made, env, piece_guess);
  }
  SLUICE_RETURN_IF_ERROR(made);
  return ReadIndex(root, index_json_bytes, binary_index_from_bytes, wait_timeout, env);
}

}  // namespace sluice
