#include "engine/dataset/remote_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include "base/file.h"
#include "engine/runtime/event_loop.h"
#include "formats/index/index.h"
#include "stores/common/part_uploads.h"
#include "stores/common/ranged_parts.h"
#include "stores/file/file_store.h"
#include "stores/http/http_client.h"

namespace sluice {
namespace {

// `*room` with at least `length` bytes (its content, when it grows, lost).
Status RoomFor(uint64_t length, UninitializedBuffer* room) {
  if (room->size() >= length) return Status::Ok();
  SLUICE_ASSIGN_OR_RETURN(*room, UninitializedBuffer::Allocate(length, "a ranged read's room"));
  return Status::Ok();
}

// Runs a local-file coroutine (no network: the file store does plain POSIX
// I/O) to its end on the calling thread.
template <typename T>
Result<T> RunOnThisThread(boost::asio::awaitable<Result<T>> task) {
  boost::asio::io_context ctx;
  std::optional<Result<T>> out;
  auto run = [](boost::asio::awaitable<Result<T>> task,
                std::optional<Result<T>>* out) -> boost::asio::awaitable<void> {
    out->emplace(co_await std::move(task));
  };
  boost::asio::co_spawn(ctx, run(std::move(task), &out), [&](std::exception_ptr e) {
    if (e) out.emplace(InternalError("local listing ended by an exception"));
  });
  ctx.run();
  if (!out) return InternalError("local listing did not finish");
  return std::move(*out);
}

// The one check of an object received into memory as the range of its
// index's `expected` bytes and one past it (FetchToMemory): `got` bytes
// came from `where`. More than `expected` says only that the object has at
// least that many.
Status CheckReceivedSize(const std::string& where, uint64_t got, uint64_t expected) {
  if (got == expected) return Status::Ok();
  return ObjectSizeChangedError(where, got, expected, /*at_least=*/got > expected);
}

// Passes a store's progress on to `to`, noting whether the store told the
// answer's head (the HTTP stores do; others tell nothing, and their caller
// tells it once the read returns).
class TellsOnce final : public IntoProgress {
 public:
  explicit TellsOnce(IntoProgress& to) : to_(to) {}
  Status Answered(const ObjectStated& stated) override {
    answered_ = true;
    return to_.Answered(stated);
  }
  void Received(uint64_t n) override { to_.Received(n); }
  // Read once the read has returned (the store's calls happened before).
  bool answered() const { return answered_; }

 private:
  IntoProgress& to_;
  bool answered_ = false;
};

// Whether `root` (a folder, or a path under one that exists) lies on one
// of the local disk file systems OnLocalDisk names; false when it cannot
// be told.
bool IsLocalDiskFileSystem(const std::string& root) {
  struct statfs fs;
  if (::statfs(root.c_str(), &fs) != 0) return false;
  // The kernel's magic numbers (linux/magic.h; zfs's own).
  constexpr unsigned long kLocal[] = {0xEF53,      // ext2/3/4
                                      0x58465342,  // xfs
                                      0x9123683E,  // btrfs
                                      0x2FC12FC1,  // zfs
                                      0xF2F52010,  // f2fs
                                      0x01021994,  // tmpfs
                                      0x794C7630}; // overlayfs
  const auto type = static_cast<unsigned long>(fs.f_type);
  return std::find(std::begin(kLocal), std::end(kLocal), type) != std::end(kLocal);
}

// A local folder: copies through CopyFileAtomic (bounded memory).
class FolderSource final : public RemoteSource {
 public:
  FolderSource(std::string root, Env* env)
      : root_(std::move(root)), env_(env), footers_(root_, env) {}

  // Asked once, when first needed (the folder may be made after the open).
  bool OnLocalDisk() const override {
    std::call_once(disk_asked_, [&] { on_local_disk_ = IsLocalDiskFileSystem(root_); });
    return on_local_disk_;
  }

  Result<uint64_t> Fetch(const std::string& key, const std::string& path,
                         std::optional<uint64_t> expected_size) override {
    if (!IsSafeBasename(key)) {
      return InvalidArgumentError(root_ + ": refusing unsafe key '" + key + "'");
    }
    std::string src = JoinPath(root_, key);
    auto st = env_->Stat(src);
    if (!st.ok()) {
      if (st.status().os_error() == ENOENT) return NotFoundError(src + ": no such object");
      return st.status();
    }
    // Regular files only: a FIFO or device states no size.
    if (expected_size && S_ISREG(st->st_mode) &&
        static_cast<uint64_t>(st->st_size) != *expected_size) {
      return ObjectSizeChangedError(src, static_cast<uint64_t>(st->st_size), *expected_size);
    }
    return CopyFileAtomic(src, path, env_);
  }

  Result<ShardBytes> FetchToMemory(const std::string& key, uint64_t expected_size,
                                   uint64_t part_size, ArrivedBytes* arrived,
                                   ShardBufferPool* pool, ObjectStated* stated) override {
    (void)part_size;  // a local file: one read
    (void)arrived;    // told nothing: the bytes come whole
    (void)pool;       // read whole into a string
    (void)stated;     // states nothing: the size is the check
    if (!IsSafeBasename(key)) {
      return InvalidArgumentError(root_ + ": refusing unsafe key '" + key + "'");
    }
    std::string src = JoinPath(root_, key);
    if (!FileExists(src, env_)) return NotFoundError(src + ": no such object");
    // One byte more than the index says may be read: a longer file shows.
    SLUICE_ASSIGN_OR_RETURN(std::string bytes, ReadFile(src, UINT64_MAX, env_));
    if (bytes.size() != expected_size) {
      return ObjectSizeChangedError(src, bytes.size(), expected_size);
    }
    return ShardBytes::Of(std::move(bytes));
  }

  Result<std::string> GetRangeOnly(const std::string& key, uint64_t offset, uint64_t length,
                                   std::stop_token) override {
    SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<Store> store, OpenFileStore(root_, env_));
    return RunOnThisThread(store->GetRangeOnly(key, offset, length));
  }

  Result<std::string> GetRangeOnlyOfVersion(const std::string& key, uint64_t offset,
                                            uint64_t length, const ObjectVersion& version,
                                            std::stop_token) override {
    // Plain reads on this thread: no store or loop made for each (a
    // million footers are read this way, one small range a file).
    return ReadFileStoreRange(root_, key, offset, length, version, env_);
  }

  Result<uint64_t> GetRangeOnlyOfVersionInRoom(const std::string& key, uint64_t offset,
                                               uint64_t length, const ObjectVersion& version,
                                               UninitializedBuffer* room) override {
    SLUICE_RETURN_IF_ERROR(RoomFor(length, room));
    return footers_.ReadInto(key, offset, length, version, room->data());
  }

  Result<std::vector<ObjectInfo>> List(const std::string& prefix) override {
    SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<Store> store, OpenFileStore(root_, env_));
    return RunOnThisThread(store->List(prefix));
  }

  Result<std::vector<ObjectInfo>> ListNames(const std::string& prefix) override {
    return ListFileStoreNames(root_, prefix, env_);
  }

  Result<uint64_t> GetTailInRoom(const std::string& key, uint64_t length, ObjectStated* stated,
                                 UninitializedBuffer* room) override {
    SLUICE_RETURN_IF_ERROR(RoomFor(length, room));
    return footers_.ReadTailInto(key, length, stated, room->data());
  }

  Result<std::vector<uint64_t>> Sizes(const std::vector<std::string>& keys) override {
    std::vector<uint64_t> sizes;
    sizes.reserve(keys.size());
    for (const std::string& key : keys) {
      if (!IsSafeBasename(key)) {
        return InvalidArgumentError(root_ + ": refusing unsafe key '" + key + "'");
      }
      std::string path = JoinPath(root_, key);
      auto st = env_->Stat(path);
      if (!st.ok()) {
        if (st.status().os_error() == ENOENT) return NotFoundError(path + ": no such object");
        return st.status();
      }
      if (!S_ISREG(st->st_mode)) return NotFoundError(path + ": not a regular file");
      sizes.push_back(static_cast<uint64_t>(st->st_size));
    }
    return sizes;
  }

  std::string Describe() const override { return root_; }

 private:
  std::string root_;
  Env* env_;
  LocalRangeReader footers_;  // GetRangeOnlyOfVersionInRoom's: many small reads
  mutable std::once_flag disk_asked_;
  mutable bool on_local_disk_ = false;  // under disk_asked_
};

// Any store, driven from the calling thread through this process's loop.
class StoreSource final : public RemoteSource {
 public:
  StoreSource(std::string url, StoreOptions options, std::string described)
      : url_(std::move(url)), options_(std::move(options)), described_(std::move(described)) {}

  ~StoreSource() override {
    // A store opened by a parent process belongs to the parent's loop.
    if (pid_ != ::getpid()) (void)store_.release();
  }

  Result<uint64_t> Fetch(const std::string& key, const std::string& path,
                         std::optional<uint64_t> expected_size) override {
    SLUICE_ASSIGN_OR_RETURN(Store* store, ThisProcessStore());
    SLUICE_RETURN_IF_ERROR(EventLoop::ForThisProcess().Run(store->GetToFile(key, path, expected_size)));
    return FileSize(path, options_.env);
  }

  Result<uint64_t> FetchFilling(const std::string& key, const std::string& path,
                                std::optional<uint64_t> expected_size,
                                FillWatermark& fill) override {
    SLUICE_ASSIGN_OR_RETURN(Store* store, ThisProcessStore());
    SLUICE_RETURN_IF_ERROR(EventLoop::ForThisProcess().Run(
        store->GetToFileFilling(key, path, expected_size, &fill)));
    return FileSize(path, options_.env);
  }

  Result<ShardBytes> FetchToMemory(const std::string& key, uint64_t expected_size,
                                   uint64_t part_size, ArrivedBytes* arrived,
                                   ShardBufferPool* pool, ObjectStated* stated) override {
    if (expected_size == 0) return RemoteSource::FetchToMemory(key, expected_size, part_size);
    SLUICE_ASSIGN_OR_RETURN(Store* store, ThisProcessStore());
    const std::string where = described_ + "/" + key;
    // The room is allocated here, on the reader's thread, not on the loop's
    // where it would hold up the other downloads, and never zero-filled:
    // the parts are received into it at their places, no part copied into
    // another, and only the bytes that came are readable.
    SLUICE_ASSIGN_OR_RETURN(ShardBytes out,
                            ShardBytes::Allocate(expected_size + 1, "receiving " + where, pool));
    if (arrived != nullptr) arrived->Attach(out.SharedRoom());
    // Of the index's size: each part's answer states the object's size
    // (a 206's Content-Range total), and one of another size fails before
    // any of its bytes is passed on, so no part of it is reported arrived
    // (served in flight).
    ObjectVersion of_index("", expected_size);
    of_index.stated = stated;
    Result<uint64_t> got = EventLoop::ForThisProcess().Run(GetRangeInPartsInto(
        *store, key, 0, expected_size + 1, out.Room(), part_size, of_index, arrived));
    if (!got.ok()) return got.status().WithContext("downloading " + where);
    SLUICE_RETURN_IF_ERROR(CheckReceivedSize(where, *got, expected_size));
    out.Received(expected_size);
    return out;
  }

  bool ReportsFills() override {
    Result<Store*> store = ThisProcessStore();
    return store.ok() && (*store)->ReportsFills();
  }

  Result<std::string> GetRangeOnly(const std::string& key, uint64_t offset, uint64_t length,
                                   std::stop_token stop) override {
    SLUICE_ASSIGN_OR_RETURN(Store* store, ThisProcessStore());
    return EventLoop::ForThisProcess().Run(store->GetRangeOnly(key, offset, length),
                                           std::move(stop));
  }

  std::vector<Result<std::string>> GetRangesOnlyOfVersion(const std::string& key,
                                                          const std::vector<DataSpan>& spans,
                                                          const ObjectVersion& version,
                                                          std::stop_token stop,
                                                          std::vector<ObjectStated>* stated) override {
    if (spans.size() <= 1) {
      return RemoteSource::GetRangesOnlyOfVersion(key, spans, version, std::move(stop), stated);
    }
    Result<Store*> store = ThisProcessStore();
    if (!store.ok()) return std::vector<Result<std::string>>(spans.size(), store.status());
    // Each answer is kept by its span; the parts never fail, so none stops
    // another from starting. A span whose read never ended (the loop shut
    // down, or stopped) keeps this.
    std::vector<Result<std::string>> out(
        spans.size(), CancelledError(described_ + "/" + key + ": ranged read cancelled"));
    const int in_flight = SpansInFlight(spans.size());
    auto read_all = [](Store* store, const std::string* key, const std::vector<DataSpan>* spans,
                       const ObjectVersion* version, int in_flight,
                       std::vector<Result<std::string>>* out,
                       std::vector<ObjectStated>* stated) -> boost::asio::awaitable<Status> {
      co_return co_await ForEachPartConcurrently(
          spans->size(), in_flight,
          [store, key, spans, version, out, stated](uint64_t i) -> boost::asio::awaitable<Status> {
            const DataSpan& span = (*spans)[i];
            // Each read states into its own (the reads interleave).
            ObjectVersion asked = *version;
            asked.stated = stated ? &(*stated)[i] : nullptr;
            // Not a conditional expression of two co_awaits: GCC miscompiles
            // those (a heap corruption here).
            if (asked.Unchecked() && !asked.stated) {
              (*out)[i] = co_await store->GetRangeOnly(*key, span.offset, span.length);
            } else {
              (*out)[i] =
                  co_await store->GetRangeOnlyOfVersion(*key, span.offset, span.length, asked);
            }
            co_return Status::Ok();
          });
    };
    (void)EventLoop::ForThisProcess().Run(
        read_all(*store, &key, &spans, &version, in_flight, &out, stated), std::move(stop));
    return out;
  }

  std::vector<Result<uint64_t>> GetRangesOnlyOfVersionInto(const std::string& key,
                                                           const std::vector<DataSpan>& spans,
                                                           const ObjectVersion& version, char* into,
                                                           std::stop_token stop) override {
    Result<Store*> store = ThisProcessStore();
    if (!store.ok()) return std::vector<Result<uint64_t>>(spans.size(), store.status());
    // As GetRangesOnlyOfVersion's: each answer kept by its span.
    std::vector<Result<uint64_t>> out(
        spans.size(), CancelledError(described_ + "/" + key + ": ranged read cancelled"));
    std::vector<char*> at(spans.size());
    for (size_t i = 0; i < spans.size(); ++i) {
      at[i] = i == 0 ? into : at[i - 1] + spans[i - 1].length;
    }
    auto read_all = [](Store* store, const std::string* key, const std::vector<DataSpan>* spans,
                       const ObjectVersion* version, const std::vector<char*>* at, int in_flight,
                       std::vector<Result<uint64_t>>* out) -> boost::asio::awaitable<Status> {
      co_return co_await ForEachPartConcurrently(
          spans->size(), in_flight,
          [store, key, spans, version, at, out](uint64_t i) -> boost::asio::awaitable<Status> {
            const DataSpan& span = (*spans)[i];
            ObjectVersion asked = *version;
            asked.stated = nullptr;  // each read would state into it at once
            (*out)[i] =
                co_await store->GetRangeOnlyInto(*key, span.offset, span.length, asked, (*at)[i]);
            co_return Status::Ok();
          });
    };
    (void)EventLoop::ForThisProcess().Run(
        read_all(*store, &key, &spans, &version, &at, SpansInFlight(spans.size()), &out),
        std::move(stop));
    return out;
  }

  uint64_t PartSize() const override { return std::max<uint64_t>(1, options_.part_size); }

  Result<std::string> GetRangeOnlyOfVersion(const std::string& key, uint64_t offset,
                                            uint64_t length, const ObjectVersion& version,
                                            std::stop_token stop) override {
    SLUICE_ASSIGN_OR_RETURN(Store* store, ThisProcessStore());
    return EventLoop::ForThisProcess().Run(
        store->GetRangeOnlyOfVersion(key, offset, length, version), std::move(stop));
  }

  Result<uint64_t> GetRangeOnlyOfVersionInto(const std::string& key, uint64_t offset,
                                             uint64_t length, const ObjectVersion& version,
                                             char* into, IntoProgress& progress,
                                             std::stop_token stop) override {
    SLUICE_ASSIGN_OR_RETURN(Store* store, ThisProcessStore());
    ObjectStated stated;
    ObjectVersion asked = version;
    asked.stated = &stated;
    TellsOnce tells(progress);
    Result<uint64_t> got = EventLoop::ForThisProcess().Run(
        store->GetRangeOnlyInto(key, offset, length, asked, into, &tells), std::move(stop));
    if (!got.ok()) return got.status();
    // A store that tells no progress (its answer came whole): told now.
    if (!tells.answered()) {
      SLUICE_RETURN_IF_ERROR(progress.Answered(stated));
      progress.Received(*got);
    }
    if (version.stated != nullptr) *version.stated = std::move(stated);
    return got;
  }

  // Straight into the room: the store's ranged read into a buffer, with
  // no one to tell of its progress.
  Result<uint64_t> GetRangeOnlyOfVersionInRoom(const std::string& key, uint64_t offset,
                                               uint64_t length, const ObjectVersion& version,
                                               UninitializedBuffer* room) override {
    struct Unheard final : IntoProgress {
      Status Answered(const ObjectStated&) override { return Status::Ok(); }
      void Received(uint64_t) override {}
    } unheard;
    SLUICE_RETURN_IF_ERROR(RoomFor(length, room));
    return GetRangeOnlyOfVersionInto(key, offset, length, version, room->data(), unheard, {});
  }

  Result<std::vector<ObjectInfo>> List(const std::string& prefix) override {
    SLUICE_ASSIGN_OR_RETURN(Store* store, ThisProcessStore());
    return EventLoop::ForThisProcess().Run(store->List(prefix));
  }

  Result<std::vector<uint64_t>> Sizes(const std::vector<std::string>& keys) override {
    SLUICE_ASSIGN_OR_RETURN(Store* store, ThisProcessStore());
    std::vector<uint64_t> sizes(keys.size());
    auto head_all = [](Store* store, const std::vector<std::string>* keys,
                       std::vector<uint64_t>* sizes) -> boost::asio::awaitable<Status> {
      co_return co_await ForEachPartConcurrently(
          keys->size(), kConcurrentSizeLookups,
          [store, keys, sizes](uint64_t i) -> boost::asio::awaitable<Status> {
            Result<ObjectInfo> info = co_await store->Head((*keys)[i]);
            if (!info.ok()) co_return info.status();
            (*sizes)[i] = info->size;
            co_return Status::Ok();
          });
    };
    SLUICE_RETURN_IF_ERROR(EventLoop::ForThisProcess().Run(head_all(store, &keys, &sizes)));
    return sizes;
  }

  std::string Describe() const override { return described_; }
  bool RetriesItself() const override { return true; }

 private:
  // At most the store's parts in flight per object, as a whole download
  // of it: a row group's piece read in parts (StreamShards::ReadPiece)
  // has as many parts as its size allows, and each would be a connection.
  int SpansInFlight(size_t spans) const {
    return static_cast<int>(
        std::min<size_t>(spans, static_cast<size_t>(std::max(1, options_.concurrency))));
  }
  // The store of this process, opened on first use (a forked child opens
  // its own; the parent's belongs to the parent's loop).
  Result<Store*> ThisProcessStore() {
    std::lock_guard<std::mutex> lock(mu_);
    if (pid_ != ::getpid()) {
      (void)store_.release();
      pid_ = ::getpid();
      StoreOptions options = options_;
      options.write_pool = &EventLoop::ForThisProcess().cpu_pool();
      auto opened = OpenStore(url_, EventLoop::ForThisProcess().executor(), options);
      if (!opened.ok()) {
        pid_ = 0;
        return opened.status();
      }
      store_ = std::move(*opened);
    }
    return store_.get();
  }

  const std::string url_;
  const StoreOptions options_;
  const std::string described_;
  std::mutex mu_;
  pid_t pid_ = 0;
  std::unique_ptr<Store> store_;
};

}  // namespace

Result<ShardBytes> RemoteSource::FetchToMemory(const std::string& key, uint64_t expected_size,
                                               uint64_t part_size, ArrivedBytes* arrived,
                                               ShardBufferPool* pool, ObjectStated* stated) {
  (void)part_size;  // one ranged read here
  (void)arrived;    // told nothing: the bytes come whole
  (void)pool;       // its answer is a string already
  (void)stated;     // nor what the answer stated
  const std::string where = Describe() + "/" + key;
  if (expected_size == 0) {
    // No range holds an empty object's bytes: its size says it all.
    SLUICE_ASSIGN_OR_RETURN(std::vector<uint64_t> sizes, Sizes({key}));
    if (sizes.at(0) != 0) return ObjectSizeChangedError(where, sizes[0], 0);
    return ShardBytes::Of(std::string());
  }
  // One range, one byte past the end (a longer object answers it, an
  // equal one not): its answer is the shard's memory, no part copied into
  // another (in parts of PartSize(), the epoch of workload B cost 1.5 CPU
  // s/GB against the cached mode's 0.9-1.0: BENCHMARKS.md, flight41e).
  // Several shards are received at once (fetch_concurrency), as curl's
  // parallel transfers are, each on a connection.
  std::vector<DataSpan> spans{DataSpan{0, expected_size + 1}};
  std::vector<Result<std::string>> got = GetRangesOnly(key, spans);
  if (!got.at(0).ok()) return got[0].status().WithContext("downloading " + where);
  std::string out = std::move(*got[0]);
  SLUICE_RETURN_IF_ERROR(CheckReceivedSize(where, out.size(), expected_size));
  return ShardBytes::Of(std::move(out));
}

Result<uint64_t> RemoteSource::GetRangeOnlyOfVersionInto(const std::string& key, uint64_t offset,
                                                         uint64_t length,
                                                         const ObjectVersion& version, char* into,
                                                         IntoProgress& progress,
                                                         std::stop_token stop) {
  ObjectStated stated;
  ObjectVersion asked = version;
  asked.stated = &stated;
  SLUICE_ASSIGN_OR_RETURN(std::string got,
                          GetRangeOnlyOfVersion(key, offset, length, asked, std::move(stop)));
  SLUICE_RETURN_IF_ERROR(progress.Answered(stated));
  const uint64_t n = std::min<uint64_t>(got.size(), length);
  std::memcpy(into, got.data(), n);
  progress.Received(n);
  if (version.stated != nullptr) *version.stated = std::move(stated);
  return n;
}

Result<uint64_t> RemoteSource::GetTailInRoom(const std::string& key, uint64_t length,
                                             ObjectStated* stated, UninitializedBuffer* room) {
  (void)length;
  (void)stated;
  (void)room;
  return UnimplementedError(Describe() + "/" + key + ": a read of an unstated object's tail");
}

Result<uint64_t> RemoteSource::GetRangeOnlyOfVersionInRoom(const std::string& key,
                                                           uint64_t offset, uint64_t length,
                                                           const ObjectVersion& version,
                                                           UninitializedBuffer* room) {
  SLUICE_ASSIGN_OR_RETURN(std::string got, GetRangeOnlyOfVersion(key, offset, length, version));
  SLUICE_RETURN_IF_ERROR(RoomFor(got.size(), room));
  std::memcpy(room->data(), got.data(), got.size());
  return uint64_t{got.size()};
}

std::vector<Result<std::string>> RemoteSource::GetRangesOnlyOfVersion(
    const std::string& key, const std::vector<DataSpan>& spans, const ObjectVersion& version,
    std::stop_token stop, std::vector<ObjectStated>* stated) {
  std::vector<Result<std::string>> out;
  out.reserve(spans.size());
  for (size_t i = 0; i < spans.size(); ++i) {
    const DataSpan& span = spans[i];
    ObjectVersion asked = version;
    asked.stated = stated ? &(*stated)[i] : nullptr;
    if (stop.stop_requested()) {
      out.push_back(CancelledError(Describe() + "/" + key + ": ranged read cancelled"));
    } else {
      out.push_back(asked.Unchecked() && !asked.stated
                        ? GetRangeOnly(key, span.offset, span.length, stop)
                        : GetRangeOnlyOfVersion(key, span.offset, span.length, asked, stop));
    }
  }
  return out;
}

std::vector<Result<uint64_t>> RemoteSource::GetRangesOnlyOfVersionInto(
    const std::string& key, const std::vector<DataSpan>& spans, const ObjectVersion& version,
    char* into, std::stop_token stop) {
  std::vector<Result<std::string>> got =
      GetRangesOnlyOfVersion(key, spans, version, std::move(stop));
  std::vector<Result<uint64_t>> out;
  out.reserve(spans.size());
  for (size_t i = 0; i < spans.size(); ++i) {
    if (got[i].ok()) {
      const uint64_t n = std::min<uint64_t>(got[i]->size(), spans[i].length);
      std::memcpy(into, got[i]->data(), n);
      out.emplace_back(n);
    } else {
      out.emplace_back(got[i].status());
    }
    into += spans[i].length;
  }
  return out;
}

Result<std::unique_ptr<RemoteSource>> OpenRemoteSource(std::string_view url,
                                                       const StoreOptions& options) {
  std::string u(url);
  if (StoreUrlScheme(u).empty()) return std::unique_ptr<RemoteSource>(
        new FolderSource(u, options.env != nullptr ? options.env : Env::Default()));
  // Check the scheme now, without starting a loop: OpenStore (credentials,
  // the URL's shape) runs only in the fetching process. Strip query text
  // from errors.
  SLUICE_RETURN_IF_ERROR(CheckStoreScheme(u));
  std::string described = u.substr(0, u.find('?'));
  return std::unique_ptr<RemoteSource>(new StoreSource(std::move(u), options, std::move(described)));
}

}  // namespace sluice
