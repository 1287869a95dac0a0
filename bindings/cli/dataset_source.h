// The dataset argument of inspect, verify, cat and convert: a folder or any
// store URL (s3://, oci://, gs://, azure://, azure-dl://, dbfs:/,
// http(s)://, file://).
//
// A folder (or file:// URL) is read in place. For any other URL, Open()
// downloads index.json into a private temporary folder, and Fetch() brings
// in the files of one shard when a command needs it (the compressed file of
// a compressed shard, as Mosaic's remotes hold; the raw file when only it is
// stored). The temporary folder is deleted by the destructor. Credentials
// come from the environment as for every store (stores/store.h); they never
// appear in name() nor in errors.
//
// Thread safety: Fetch() and Drop() may run on two threads at once for
// different shards; everything else from one thread.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "bindings/cli/temp_folder.h"
#include "engine/dataset/remote_source.h"
#include "formats/index/index.h"

namespace sluice::cli {

class DatasetSource {
 public:
  // A missing index.json fails here, naming the URL and the store's answer.
  static Result<std::unique_ptr<DatasetSource>> Open(const std::string& folder_or_url);

  // The folder holding index.json (and the fetched shards): give it to
  // DatasetReader::Open.
  const std::string& folder() const { return folder_; }
  // The dataset as the user named it (a URL without its query): for output.
  const std::string& name() const { return name_; }
  bool is_remote() const { return remote_ != nullptr; }

  // Brings the files of `shard` into folder(); nothing to do for a folder
  // or a shard already fetched. Errors name the object's URL.
  Status Fetch(const ShardEntry& shard);
  // Deletes the fetched files of `shard` (bounds the disk used by verify).
  void Drop(const ShardEntry& shard);

  // `status` with the temporary folder in its message replaced by name(),
  // so that errors name the remote object and not a path that is gone.
  Status Explain(const Status& status) const;

 private:
  DatasetSource() = default;
  Status FetchFile(const FileInfo& raw, const std::optional<FileInfo>& zip, bool compressed);
  // Fetches `key` unless present; a remote object of another size than
  // the index's `expected_size` fails (the remote changed).
  Status FetchKey(const std::string& key, std::optional<uint64_t> expected_size);

  std::string folder_, name_;
  std::unique_ptr<TempFolder> temp_;      // remote only
  std::unique_ptr<RemoteSource> remote_;  // remote only
};

// Downloads the object a store URL names ("s3://b/data.jsonl") into
// `folder` under its last path component, and returns the local path.
// Errors name the URL (without its query).
Result<std::string> FetchRemoteFile(const std::string& url, const std::string& folder);

}  // namespace sluice::cli
