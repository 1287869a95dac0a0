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
  std::vector<Upload> start;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!error_.ok()) return error_;
    queue_.push_back(std::move(basename));
    start = TakeStartableLocked();
  }
  if (!start.empty()) Launch(std::move(start));
  return Status();
}

Status ShardUploader::Wait() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_cv_.wait(lock, [&] { return in_flight_ == 0 && (queue_.empty() || !error_.ok()); });
  return error_;
}

std::vector<ShardUploader::Upload> ShardUploader::TakeStartableLocked() {
  std::vector<Upload> out;
  while (error_.ok() && in_flight_ < max_workers_ && !queue_.empty()) {
    Upload up;
    up.basename = std::move(queue_.front());
    queue_.pop_front();
    const std::string path = JoinPath(options_.local_dir, up.basename);
    auto size = FileSize(path);
    if (!size.ok()) {
      error_ = size.status().WithContext("upload of " + path);
      queue_.clear();
      idle_cv_.notify_all();
      break;
    }
    up.bytes = *size;
    ++in_flight_;
    out.push_back(std::move(up));
  }
  return out;
}

// Outside mu_: Spawn may run the completion at once (on a shut-down loop).
void ShardUploader::Launch(std::vector<Upload> uploads) {
  for (Upload& up : uploads) {
    std::string path = JoinPath(options_.local_dir, up.basename);
    EventLoop::ForThisProcess().Spawn<Status>(
        store_->PutFile(up.basename, std::move(path)),
        [this, basename = up.basename, bytes = up.bytes](Status status) {
          OnDone(basename, bytes, std::move(status));
        });
  }
}

void ShardUploader::OnDone(const std::string& basename, uint64_t bytes, Status status) {
  const std::string path = JoinPath(options_.local_dir, basename);
  if (status.ok() && !options_.keep_local) {
    Status removed = Env::Default()->Remove(path);
    if (!removed.ok() && removed.os_error() != ENOENT) {
      status = removed.WithContext("after uploading " + basename);
    }
  }
  std::vector<Upload> start;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (status.ok()) {
      ++files_uploaded_;
      bytes_uploaded_ += bytes;
    } else if (error_.ok()) {
      error_ = status.WithContext("upload of " + path + " to " + store_->root() + "/" + basename);
      queue_.clear();
    }
    --in_flight_;
    start = TakeStartableLocked();
    idle_cv_.notify_all();
  }
  // Once idle, the destructor may already be running: touch nothing then.
  // Uploads taken above are counted in flight, which keeps `this` alive.
  if (!start.empty()) Launch(std::move(start));
}

}  // namespace sluice
