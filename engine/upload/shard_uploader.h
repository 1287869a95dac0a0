// ShardUploader: uploads the files a dataset writer finishes (shards, then
// index.json) from a local folder to a remote folder, in the background, as
// Mosaic's writers do with `out=remote` or `out=(local, remote)`.
//
// Each Enqueue(basename) uploads <local_dir>/<basename> to
// <remote>/<basename> through the remote's Store (stores/store.h: PutFile,
// which does multipart for large files where the service has it). At most
// `max_workers` uploads run at once; the rest wait in a FIFO queue. When
// keep_local is false, each local file is deleted once its upload succeeded
// (Mosaic's clear_local), so a writer never holds more than the unuploaded
// shards on disk.
//
// Errors: the first failed upload is kept; it is returned by every later
// Enqueue (as Mosaic's write raises once an upload thread failed) and by
// Wait(). It names the local file and the redacted remote URL, never a
// secret. Queued uploads are not started after a failure.
//
// Thread safety: Enqueue and Wait may be called from any thread but not on
// this process's event loop thread (they block on it). Uploads run on
// EventLoop::ForThisProcess(). Fork safety: use an uploader only in the
// process that opened it (a forked child must open its own).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "stores/store.h"

namespace sluice {

struct ShardUploaderOptions {
  // Folder holding the files to upload.
  std::string local_dir;
  // Remote folder: any URL OpenStore accepts (s3://, gs://, azure://,
  // file://, dbfs:/Volumes/...) or a plain local path.
  std::string remote;
  // Keep each local file after its upload (Mosaic's keep_local).
  bool keep_local = false;
  // Concurrent uploads; 0 = Mosaic's default, min(32, cpus + 4).
  unsigned max_workers = 0;
  // Retries and timeouts of each request (StoreOptions::download_retry is
  // Mosaic's `retry`, default 2).
  StoreOptions store;
};

class ShardUploader {
 public:
  // Opens the remote's store. kInvalidArgument for an unknown scheme or a
  // malformed URL; kPermissionDenied for missing credentials.
  static Result<std::unique_ptr<ShardUploader>> Open(ShardUploaderOptions options);

  // Drops queued uploads and waits for those in flight.
  ~ShardUploader();
  ShardUploader(const ShardUploader&) = delete;
  ShardUploader& operator=(const ShardUploader&) = delete;

  // Queues <local_dir>/<basename> (a safe relative name) for upload and
  // returns at once; the first upload error so far, if any, instead.
  Status Enqueue(std::string basename);

  // Blocks until every queued upload finished; returns the first error.
  Status Wait();

  // The remote root as the store reports it (secrets redacted).
  std::string remote() const;
  // Files and bytes uploaded so far.
  uint64_t files_uploaded() const;
  uint64_t bytes_uploaded() const;
  unsigned max_workers() const { return max_workers_; }

 private:
  struct Upload {
    std::string basename;
    uint64_t bytes = 0;
  };
  explicit ShardUploader(ShardUploaderOptions options);
  // Takes queued uploads off the queue while fewer than max_workers run,
  // counting them in flight. mu_ held.
  std::vector<Upload> TakeStartableLocked();
  // Starts `uploads` on the event loop. mu_ not held.
  void Launch(std::vector<Upload> uploads);
  void OnDone(const std::string& basename, uint64_t bytes, Status status);

  const ShardUploaderOptions options_;
  unsigned max_workers_ = 1;
  std::unique_ptr<Store> store_;
  mutable std::mutex mu_;
  std::condition_variable idle_cv_;
  std::deque<std::string> queue_;  // guarded by mu_
  unsigned in_flight_ = 0;         // guarded by mu_
  Status error_;                   // first failure, guarded by mu_
  uint64_t files_uploaded_ = 0;    // guarded by mu_
  uint64_t bytes_uploaded_ = 0;    // guarded by mu_
};

// Mosaic's default number of upload threads: min(32, cpus + 4).
unsigned DefaultUploadWorkers();

}  // namespace sluice
