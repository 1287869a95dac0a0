#include "formats/dataset/dataset_reader.h"

#include <algorithm>
#include <functional>
#include <optional>

#include "formats/codec/compression.h"
#include "formats/codec/hashes.h"
#include "formats/dataset/format_descriptor.h"
#include "formats/parquet/parquet_index.h"
#include "formats/raw/file_listing.h"

namespace sluice {
namespace {

constexpr uint64_t kMaxIndexBytes = uint64_t{1} << 30;
constexpr uint64_t kMaxSamples = uint64_t{1} << 48;

std::string JoinNames(const std::vector<std::string>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += ", ";
    out += v[i];
  }
  return out + "]";
}

Status VerifyAll(const FileInfo& info, std::string_view bytes, const std::string& path) {
  for (const auto& [algo, hex] : info.hashes) {
    SLUICE_RETURN_IF_ERROR(VerifyHash(algo, bytes, hex, path));
  }
  return Status::Ok();
}

// Loads one logical file of a shard: the raw file when it is on disk (or the
// shard is not compressed), else the compressed file, decompressed.
Status LoadFile(const std::string& root, const ShardEntry& entry, const FileInfo& raw,
                const std::optional<FileInfo>& zip, bool verify, MappedFile* map,
                std::string* owned, std::string_view* view) {
  std::string raw_path = JoinPath(root, raw.basename);
  bool compressed = entry.compression.has_value() && zip.has_value();
  if (!compressed || FileExists(raw_path)) {
    SLUICE_ASSIGN_OR_RETURN(*map, MappedFile::Open(raw_path));
    if (map->size() != raw.bytes) {
      return CorruptError(raw_path + ": file has " + std::to_string(map->size()) +
                          " bytes, index.json says " + std::to_string(raw.bytes));
    }
    *view = map->data();
    if (verify) SLUICE_RETURN_IF_ERROR(VerifyAll(raw, *view, raw_path));
    return Status::Ok();
  }
  std::string zip_path = JoinPath(root, zip->basename);
  SLUICE_ASSIGN_OR_RETURN(Compression codec, ParseCompression(*entry.compression));
  SLUICE_ASSIGN_OR_RETURN(uint64_t zip_size, FileSize(zip_path));
  if (zip_size != zip->bytes) {
    return CorruptError(zip_path + ": file has " + std::to_string(zip_size) +
                        " bytes, index.json says " + std::to_string(zip->bytes));
  }
  SLUICE_ASSIGN_OR_RETURN(std::string packed, ReadFile(zip_path, zip->bytes));
  if (verify) SLUICE_RETURN_IF_ERROR(VerifyAll(*zip, packed, zip_path));
  SLUICE_ASSIGN_OR_RETURN(*owned, Decompress(codec, packed, raw.bytes, zip_path));
  if (owned->size() != raw.bytes) {
    return CorruptError(zip_path + ": decompresses to " + std::to_string(owned->size()) +
                        " bytes, index.json says " + std::to_string(raw.bytes));
  }
  *view = *owned;
  if (verify) {
    SLUICE_RETURN_IF_ERROR(VerifyAll(raw, *view, zip_path + " (decompressed)"));
  }
  return Status::Ok();
}

// Every regular file under `root`, relative paths and sizes (unsorted).
// Symbolic links to files count; links to folders are not followed (no
// cycles), as std::filesystem's walk did.
Result<std::vector<ListedFile>> ListLocalFiles(const std::string& root) {
  Env* env = Env::Default();
  std::vector<ListedFile> files;
  std::vector<std::string> pending{""};  // folders to list, relative to root
  while (!pending.empty()) {
    const std::string rel = std::move(pending.back());
    pending.pop_back();
    const std::string folder = rel.empty() ? root : JoinPath(root, rel);
    SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> names, env->ListFolder(folder));
    for (const std::string& name : names) {
      const std::string child_rel = rel.empty() ? name : rel + "/" + name;
      const std::string child = JoinPath(root, child_rel);
      SLUICE_ASSIGN_OR_RETURN(struct stat st, env->Stat(child, /*follow_links=*/false));
      if (S_ISDIR(st.st_mode)) {
        pending.push_back(child_rel);
        continue;
      }
      if (S_ISLNK(st.st_mode)) {
        Result<struct stat> target = env->Stat(child);
        if (!target.ok()) continue;  // a dangling link is no file
        st = *target;
      }
      if (S_ISREG(st.st_mode)) files.push_back(ListedFile{child_rel, static_cast<uint64_t>(st.st_size)});
    }
  }
  return files;
}

// A local dataset without an index.json: a Parquet file, or a folder of
// them (the index built from their footers, IndexSource::kFileFooters).
// Sets *root to the folder the entries' paths are relative to. kNotFound
// when `path` is a folder holding no Parquet file.
Result<Index> LocalParquetIndex(const std::string& path, std::string* root) {
  std::vector<ListedFile> files;
  Result<struct stat> st = Env::Default()->Stat(path);
  if (st.ok() && S_ISREG(st->st_mode)) {
    const size_t slash = path.find_last_of('/');
    *root = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
    files.push_back(ListedFile{path.substr(slash == std::string::npos ? 0 : slash + 1),
                               static_cast<uint64_t>(st->st_size)});
  } else {
    *root = path;
    SLUICE_ASSIGN_OR_RETURN(files, ListLocalFiles(path));
    SLUICE_ASSIGN_OR_RETURN(files, SelectFiles(std::move(files), parquet::ParquetFileSelection(), path));
  }
  const std::string base = *root;
  return parquet::IndexOfLocalParquetFiles(base, files);
}

// The index of the dataset at `path`: its index.json, else (a Parquet file
// or a folder of Parquet files) one built from the footers. Sets *root.
Result<Index> LoadLocalIndex(const std::string& path, std::string* root) {
  std::string index_path = JoinPath(path, "index.json");
  Result<struct stat> st = Env::Default()->Stat(path);
  const bool exists = st.ok() && (S_ISREG(st->st_mode) || S_ISDIR(st->st_mode));
  if (exists && !FileExists(index_path) &&
      FindShardFormat("parquet")->index_source == IndexSource::kFileFooters) {
    Result<Index> index = LocalParquetIndex(path, root);
    if (index.status().code() != StatusCode::kNotFound) return index;
  }
  *root = path;
  SLUICE_ASSIGN_OR_RETURN(std::string text, ReadFile(index_path, kMaxIndexBytes));
  SLUICE_ASSIGN_OR_RETURN(Index index, ParseIndex(text, index_path));
  if (index.shards.empty()) return CorruptError(index_path + ": lists no shards");
  return index;
}

// What CheckDatasetShards reads of shard i: its configuration (format and
// columns), a key equal for shards of one configuration (or i: none
// shared), its raw file's name and its samples.
struct ShardFacts {
  const ShardEntry* config;
  uint64_t config_key;
  std::string_view basename;
  uint64_t samples;
};

struct DatasetShards {
  std::vector<std::string> column_names, column_encodings;  // shard 0's
  std::vector<uint64_t> starts;  // 0, then each shard's end: SampleLocator's
};

// DatasetReader::Open's checks of an index's shards, whichever way it is
// held: every shard's columns are known (ColumnsOf) and equal shard 0's,
// the total sample count fits in 2^48. Errors name `index_path`, the shard
// and its raw file.
Result<DatasetShards> CheckDatasetShards(size_t count,
                                         const std::function<ShardFacts(size_t)>& shard_at,
                                         const std::string& index_path,
                                         const CustomEncodings& custom) {
  DatasetShards out;
  SLUICE_RETURN_IF_ERROR(ColumnsOf(*shard_at(0).config, custom, &out.column_names,
                                   &out.column_encodings)
                             .WithContext(index_path + ": shard 0"));
  out.starts.reserve(count + 1);
  out.starts.push_back(0);
  std::vector<std::string> names, encodings;
  std::optional<uint64_t> checked_key;  // a configuration whose columns are shard 0's
  for (size_t i = 0; i < count; ++i) {
    const ShardFacts shard = shard_at(i);
    auto where = [&] {
      return index_path + ": shard " + std::to_string(i) + " (" + std::string(shard.basename) + ")";
    };
    if (shard.config_key != checked_key) {
      SLUICE_RETURN_IF_ERROR(ColumnsOf(*shard.config, custom, &names, &encodings).WithContext(where()));
      if (names != out.column_names || encodings != out.column_encodings) {
        return CorruptError(where() + ": columns " + JoinNames(names) + " with encodings " +
                            JoinNames(encodings) + " differ from shard 0's " +
                            JoinNames(out.column_names) + " " + JoinNames(out.column_encodings));
      }
      checked_key = shard.config_key;
    }
    uint64_t next = out.starts.back() + shard.samples;
    if (next > kMaxSamples) {
      return CorruptError(where() + ": total sample count exceeds 2^48");
    }
    out.starts.push_back(next);
  }
  return out;
}

}  // namespace

Result<std::unique_ptr<DatasetReader>> DatasetReader::Open(const std::string& path,
                                                           DatasetReaderOptions options) {
  std::string root;
  SLUICE_ASSIGN_OR_RETURN(Index index, LoadLocalIndex(path, &root));
  std::string index_path = JoinPath(root, "index.json");

  std::unique_ptr<DatasetReader> r(new DatasetReader());
  r->root_ = root;
  r->options_ = options;
  r->index_ = std::move(index);
  const auto& shards = r->index_.shards;
  SLUICE_ASSIGN_OR_RETURN(DatasetShards checked,
                          CheckDatasetShards(
                              shards.size(),
                              [&shards](size_t i) {
                                return ShardFacts{&shards[i], i, shards[i].raw_data.basename,
                                                  shards[i].samples};
                              },
                              index_path, options.custom_encodings));
  r->column_names_ = std::move(checked.column_names);
  r->column_encodings_ = std::move(checked.column_encodings);
  std::vector<uint64_t> starts = std::move(checked.starts);
  r->locator_ = SampleLocator(std::move(starts));
  r->loaded_.reset(new std::atomic<LoadedShard*>[shards.size()]);
  for (size_t i = 0; i < shards.size(); ++i) r->loaded_[i].store(nullptr);
  r->shard_mutexes_.reset(new std::mutex[shards.size()]);
  return r;
}

Result<DatasetTable> OpenDatasetTable(const std::string& root, const CustomEncodings& custom) {
  const std::string index_path = JoinPath(root, "index.json");
  SLUICE_ASSIGN_OR_RETURN(std::string text,
                          ReadFile(index_path, kMaxIndexBytes));
  DatasetTable out;
  SLUICE_ASSIGN_OR_RETURN(out.table, ShardTable::FromIndexJson(text, index_path));
  text = std::string();
  if (out.table.empty()) return CorruptError(index_path + ": lists no shards");
  const ShardTable& t = out.table;
  SLUICE_ASSIGN_OR_RETURN(DatasetShards checked,
                          CheckDatasetShards(
                              t.size(),
                              [&t](size_t i) {
                                return ShardFacts{&t.config(i), t.config_id(i),
                                                  t.ref(i).raw_data.basename, t.samples(i)};
                              },
                              index_path, custom));
  out.column_names = std::move(checked.column_names);
  out.column_encodings = std::move(checked.column_encodings);
  out.num_samples = checked.starts.back();
  return out;
}

DatasetReader::~DatasetReader() {
  if (!loaded_) return;
  for (size_t i = 0; i < index_.shards.size(); ++i) delete loaded_[i].load();
}

Result<SampleLocation> DatasetReader::Locate(uint64_t sample) const {
  if (sample >= num_samples()) {
    return OutOfRangeError(root_ + ": sample " + std::to_string(sample) +
                           " is past the end (the dataset has " +
                           std::to_string(num_samples()) + " samples)");
  }
  auto [shard, i] = locator_.Locate(sample);
  return SampleLocation{shard, i};
}

Status DatasetReader::LoadShard(size_t i, LoadedShard* out) const {
  const ShardEntry& e = index_.shards[i];
  out->entry_ = &e;
  bool verify = options_.verify_hashes;
  SLUICE_RETURN_IF_ERROR(LoadFile(root_, e, e.raw_data, e.zip_data, verify, &out->data_map_,
                                  &out->data_owned_, &out->data_));
  SLUICE_ASSIGN_OR_RETURN(const FileInfo* meta, RequiredMetaFileOf(e, root_ + "/index.json"));
  if (meta == nullptr) {
    SLUICE_ASSIGN_OR_RETURN(out->view_, ShardView::Open(e, out->data_, {}));
    return Status::Ok();
  }
  SLUICE_RETURN_IF_ERROR(LoadFile(root_, e, *meta, e.zip_meta, verify, &out->meta_map_,
                                  &out->meta_owned_, &out->meta_));
  SLUICE_ASSIGN_OR_RETURN(out->view_, ShardView::Open(e, out->data_, out->meta_));
  return Status::Ok();
}

Result<const LoadedShard*> DatasetReader::Shard(size_t shard) {
  if (shard >= num_shards()) {
    return OutOfRangeError(root_ + ": shard " + std::to_string(shard) + " does not exist (" +
                           std::to_string(num_shards()) + " shards)");
  }
  if (LoadedShard* s = loaded_[shard].load(std::memory_order_acquire)) return s;
  std::lock_guard<std::mutex> lock(shard_mutexes_[shard]);
  if (LoadedShard* s = loaded_[shard].load(std::memory_order_acquire)) return s;
  auto fresh = std::make_unique<LoadedShard>();
  SLUICE_RETURN_IF_ERROR(LoadShard(shard, fresh.get()));
  LoadedShard* s = fresh.release();
  loaded_[shard].store(s, std::memory_order_release);
  return s;
}

Status DatasetReader::Read(uint64_t sample, SampleFields* out) {
  SLUICE_ASSIGN_OR_RETURN(out->where, Locate(sample));
  SLUICE_ASSIGN_OR_RETURN(const LoadedShard* shard, Shard(out->where.shard));
  return shard->view().Read(out->where.index_in_shard, column_names_, out);
}

}  // namespace sluice
