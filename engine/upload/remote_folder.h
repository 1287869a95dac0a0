// RemoteFolder: blocking whole-object reads, writes and listings under one
// remote folder, for small control files such as index.json (merge_index
// over remote sub-datasets: read each sub-folder's index.json, write the
// merged one). Large files go through ShardUploader.
//
// Thread safety: calls block on this process's event loop, so they must not
// be made on the loop thread; one call at a time per RemoteFolder. Fork
// safety: use it only in the process that opened it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "stores/store.h"

namespace sluice {

class RemoteFolder {
 public:
  // `url`: any URL OpenStore accepts, or a plain local path.
  static Result<std::unique_ptr<RemoteFolder>> Open(const std::string& url,
                                                    const StoreOptions& options = {});
  ~RemoteFolder();

  // The whole object `key` (relative to the folder). kNotFound if missing.
  Result<std::string> Read(const std::string& key);
  // Streams the whole object `key` into local file `path` (its folder must
  // exist) through the store's GetToFile: under base/file.h's temporary name
  // beside `path`, renamed onto it when whole, so `path` is the old file or
  // the whole object, never part of it. kNotFound if missing.
  Status ReadToFile(const std::string& key, const std::string& path);
  // Writes `bytes` as `key`, replacing it.
  Status Write(const std::string& key, std::string bytes);
  // Keys of every object under `prefix` ("" = all), sorted.
  Result<std::vector<std::string>> List(const std::string& prefix);
  // The folder's URL (secrets redacted).
  std::string root() const { return store_->root(); }

 private:
  RemoteFolder() = default;
  std::unique_ptr<Store> store_;
};

}  // namespace sluice
