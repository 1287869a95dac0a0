#include "bindings/cli/dataset_source.h"

#include <unistd.h>

#include "base/file.h"
#include "stores/common/store_keys.h"
#include "stores/file/file_store.h"
#include "stores/store.h"

namespace sluice::cli {
namespace {

// Replaces every occurrence of `from` in `text` by `to`.
std::string ReplaceAll(std::string text, const std::string& from, const std::string& to) {
  if (from.empty()) return text;
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

}  // namespace

Result<std::string> FetchRemoteFile(const std::string& url, const std::string& folder) {
  std::string base = UrlForErrors(url);
  std::string query = url.substr(base.size());
  size_t slash = base.rfind('/');
  // The object's name follows the last '/' past "<scheme>://" (or "dbfs:"),
  // as the store layer reads the scheme.
  const std::string scheme = StoreUrlScheme(base);
  const size_t path_start =
      scheme.empty() ? 0 : scheme.size() + (base.compare(scheme.size(), 3, "://") == 0 ? 3 : 1);
  if (slash == std::string::npos || slash + 1 == base.size() || slash < path_start) {
    return InvalidArgumentError(base + " names no object");
  }
  std::string name = base.substr(slash + 1);
  SLUICE_ASSIGN_OR_RETURN(auto remote, OpenRemoteSource(base.substr(0, slash) + query));
  std::string path = JoinPath(folder, name);
  auto fetched = remote->Fetch(name, path, std::nullopt);
  if (!fetched.ok()) return fetched.status();
  return path;
}

Result<std::unique_ptr<DatasetSource>> DatasetSource::Open(const std::string& folder_or_url) {
  std::unique_ptr<DatasetSource> source(new DatasetSource());
  if (!IsStoreUrl(folder_or_url)) {
    SLUICE_ASSIGN_OR_RETURN(source->folder_, FileUrlToPath(folder_or_url));
    source->name_ = folder_or_url;
    return source;
  }
  source->name_ = UrlForErrors(folder_or_url);
  while (source->name_.size() > 1 && source->name_.back() == '/') source->name_.pop_back();
  SLUICE_ASSIGN_OR_RETURN(source->remote_, OpenRemoteSource(folder_or_url));
  SLUICE_ASSIGN_OR_RETURN(source->temp_, TempFolder::Create());
  source->folder_ = source->temp_->path();
  SLUICE_RETURN_IF_ERROR(source->FetchKey("index.json", std::nullopt));
  return source;
}

Status DatasetSource::Fetch(const ShardEntry& shard) {
  if (!is_remote()) return Status::Ok();
  bool compressed = shard.compression.has_value();
  SLUICE_RETURN_IF_ERROR(FetchFile(shard.raw_data, shard.zip_data, compressed));
  if (shard.raw_meta) SLUICE_RETURN_IF_ERROR(FetchFile(*shard.raw_meta, shard.zip_meta, compressed));
  return Status::Ok();
}

void DatasetSource::Drop(const ShardEntry& shard) {
  if (!is_remote()) return;
  for (const std::optional<FileInfo>& f :
       {std::optional<FileInfo>(shard.raw_data), shard.zip_data, shard.raw_meta, shard.zip_meta}) {
    if (f) (void)Env::Default()->Remove(JoinPath(folder_, f->basename));
  }
}

Status DatasetSource::FetchFile(const FileInfo& raw, const std::optional<FileInfo>& zip,
                                bool compressed) {
  if (!compressed || !zip) return FetchKey(raw.basename, raw.bytes);
  Status packed = FetchKey(zip->basename, zip->bytes);
  if (packed.code() != StatusCode::kNotFound) return packed;
  // A remote may hold the shard uncompressed only (the reader takes either).
  Status plain = FetchKey(raw.basename, raw.bytes);
  return plain.code() == StatusCode::kNotFound ? packed : plain;
}

Status DatasetSource::FetchKey(const std::string& key, std::optional<uint64_t> expected_size) {
  if (!IsSafeBasename(key)) {
    return CorruptError(name_ + "/index.json names the unsafe file '" + key + "'");
  }
  std::string path = JoinPath(folder_, key);
  if (FileExists(path)) return Status::Ok();
  size_t slash = path.rfind('/');
  SLUICE_RETURN_IF_ERROR(MakeDirs(path.substr(0, slash)));
  auto fetched = remote_->Fetch(key, path, expected_size);
  if (!fetched.ok()) {
    (void)Env::Default()->Remove(path);
    return Explain(fetched.status());
  }
  return Status::Ok();
}

Status DatasetSource::Explain(const Status& status) const {
  if (!is_remote() || status.ok()) return status;
  return Status(status.code(), ReplaceAll(status.message(), folder_, name_), status.os_error());
}

}  // namespace sluice::cli
