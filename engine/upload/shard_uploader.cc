#include "engine/upload/shard_uploader.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>
#include <utility>

#include "base/file.h"
#include "engine/runtime/event_loop.h"
#include "formats/index/index.h"

namespace sluice {

unsigned DefaultUploadWorkers() {
  unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
  return std::min(32u, cpus + 4);
}

ShardUploader::ShardUploader(ShardUploaderOptions options) : options_(std::move(options)) {
  max_workers_ = options_.max_workers == 0 ? DefaultUploadWorkers() : options_.max_workers;
}

Result<std::unique_ptr<ShardUploader>> ShardUploader::Open(ShardUploaderOptions options) {
  if (options.local_dir.empty()) {
    return InvalidArgumentError("ShardUploader: the local folder is empty");
  }
  std::unique_ptr<ShardUploader> up(new ShardUploader(std::move(options)));
  auto store = OpenStore(up->options_.remote, EventLoop::ForThisProcess().executor(),
                         up->options_.store);
  if (!store.ok()) return store.status().WithContext("opening the upload target");
  up->store_ = std::move(*store);
  return up;
}

ShardUploader::~ShardUploader() {
  std::unique_lock<std::mutex> lock(mu_);
  queue_.clear();
  // The store must outlive every operation started on it.
  idle_cv_.wait(lock, [&] { return in_flight_ == 0; });
}

std::string ShardUploader::remote() const { return store_->root(); }

uint64_t ShardUploader::files_uploaded() const {
  std::lock_guard<std::mutex> lock(mu_);
  return files_uploaded_;
}

uint64_t ShardUploader::bytes_uploaded() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bytes_uploaded_;
}

Status ShardUploader::Enqueue(std::string basename) {
  if (!IsSafeBasename(basename)) {
    return InvalidArgumentError("ShardUploader: refusing unsafe file name '" + basename + "'");
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (!error_.ok()) return error_;
  queue_.push_back(std::move(basename));
  StartMoreLocked();
  return Status();
}

Status ShardUploader::Wait() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_cv_.wait(lock, [&] { return in_flight_ == 0 && (queue_.empty() || !error_.ok()); });
  return error_;
}

void ShardUploader::StartMoreLocked() {
  while (error_.ok() && in_flight_ < max_workers_ && !queue_.empty()) {
    std::string basename = std::move(queue_.front());
    queue_.pop_front();
    const std::string path = JoinPath(options_.local_dir, basename);
    auto size = FileSize(path);
    if (!size.ok()) {
      error_ = size.status().WithContext("upload of " + path);
      queue_.clear();
      idle_cv_.notify_all();
      return;
    }
    ++in_flight_;
    EventLoop::ForThisProcess().Spawn<Status>(
        store_->PutFile(basename, path),
        [this, basename, bytes = *size](Status status) { OnDone(basename, bytes, status); });
  }
}

void ShardUploader::OnDone(const std::string& basename, uint64_t bytes, Status status) {
  const std::string path = JoinPath(options_.local_dir, basename);
  if (status.ok() && !options_.keep_local && ::unlink(path.c_str()) != 0 && errno != ENOENT) {
    status = IoError("cannot remove " + path + " after uploading it: " + std::strerror(errno));
  }
  std::lock_guard<std::mutex> lock(mu_);
  --in_flight_;
  if (status.ok()) {
    ++files_uploaded_;
    bytes_uploaded_ += bytes;
  } else if (error_.ok()) {
    error_ = status.WithContext("upload of " + path + " to " + store_->root() + "/" + basename);
    queue_.clear();
  }
  StartMoreLocked();
  idle_cv_.notify_all();
}

}  // namespace sluice
