// Where a stream's files come from when they are not in the cache yet.
//
// A RemoteSource copies one object (key relative to the stream's remote root)
// into a local file. A plain path is copied directly (no event loop); every
// URL with a scheme (file://, s3://, gs://, azure://, http(s)://, ...) goes
// through stores/ (OpenStore) on this process's event loop.
// Thread safety: Fetch, GetRangeOnly and GetRangesOnly may be called from
// several threads at once.
// Fork safety: the store and its event loop are opened on first Fetch in the
// process that fetches; a forked child opens its own.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "base/arrived_bytes.h"
#include "base/fill_watermark.h"
#include "base/status.h"
#include "base/uninitialized_buffer.h"
#include "engine/dataset/shard_bytes.h"
#include "formats/dataset/format_descriptor.h"
#include "stores/store.h"

namespace sluice {

// HEAD requests in flight at once when a manifest gives no sizes.
inline constexpr int kConcurrentSizeLookups = 32;

class RemoteSource {
 public:
  virtual ~RemoteSource() = default;
  // Writes the whole object `key` into `path` (created or truncated) and
  // returns its size. kNotFound when the object does not exist. With
  // `expected_size` (the index's), an object of another size fails with
  // kCorrupt (ObjectSizeChangedError) having written at most one part of
  // it. On error `path` may hold a partial file: the caller owns and
  // deletes it.
  virtual Result<uint64_t> Fetch(const std::string& key, const std::string& path,
                                 std::optional<uint64_t> expected_size) = 0;
  // Fetch, telling `fill` of the file and its writes as they complete
  // (Store::GetToFileFilling): `path` must be a temporary of this process
  // (the shard cache's), written in place. This default tells it nothing
  // (a plain path is copied whole). The caller calls fill.Finish.
  virtual Result<uint64_t> FetchFilling(const std::string& key, const std::string& path,
                                        std::optional<uint64_t> expected_size,
                                        FillWatermark& fill) {
    (void)fill;
    return Fetch(key, path, expected_size);
  }
  // Whether FetchFilling tells its fill of each write as it completes (a
  // store that does: Store::ReportsFills). False for this default and a
  // plain path, copied whole: their fill moves only at its Finish, so
  // nothing may be served from it in flight. A store not yet opened in
  // this process is opened to ask (an error there: false; Fetch reports it).
  virtual bool ReportsFills() { return false; }
  // The whole object `key` in memory, for the single-pass mode (nothing
  // written: StreamOptions::single_pass): the range of `expected_size` and
  // one byte past it, so an object of another size (longer or shorter) is
  // ObjectSizeChangedError after its read. A store reads it into the one buffer in
  // ranged parts at once, a part per `part_size` bytes where the
  // connections allow (GetRangeInPartsInto; 0: one request); this default,
  // in one ranged read (GetRangesOnly); a plain
  // path whole. A store's parts are received into room never zero-filled
  // (ShardBytes::Allocate). `arrived` (may be null; a record of
  // `expected_size` bytes): a store's read tells it of its buffer (Attach)
  // and of each part's bytes as they come off the socket (the HTTP stores;
  // other stores': as each part completes; GetRangeInPartsInto), so that readers
  // may read the parts in while the rest arrives; this default and a plain
  // path tell it nothing (as ReportsFills, their bytes come whole). The
  // caller Finishes it. `pool` (may be null): where a store's room comes
  // from (ShardBytes::Allocate's). `stated` (may be null): set to what the
  // first answer stated of the object (its ETag: what later ranged reads
  // of the same version ask for) by a store's read; left as it was by
  // this default and a plain path. Thread safety: as Fetch.
  virtual Result<ShardBytes> FetchToMemory(const std::string& key, uint64_t expected_size,
                                           uint64_t part_size = 0,
                                           ArrivedBytes* arrived = nullptr,
                                           ShardBufferPool* pool = nullptr,
                                           ObjectStated* stated = nullptr);
  // Bytes [offset, offset + length) of object `key` (fewer at its end), as
  // Store::GetRangeOnly gives them: a server that ignores Range is not read
  // (kUnimplemented). kNotFound when the object does not exist. Retries as
  // Fetch does (see RetriesItself). `stop`: a stop requested on it (from
  // any thread) ends a request in flight, waiting for its answer or
  // reading it, or a wait between retries: the call returns promptly with
  // kCancelled (see EventLoop::Run); a plain path's read, local and
  // short, is not interrupted. Thread safety: as Fetch, may be called from
  // several threads at once, beside Fetch calls (the first-sample peek
  // calls it from its own thread while the prefetch threads fetch): each
  // call runs its own request (on this process's event loop, or on the
  // calling thread for a plain path).
  virtual Result<std::string> GetRangeOnly(const std::string& key, uint64_t offset,
                                           uint64_t length, std::stop_token stop = {}) = 0;
  // Each of `spans` of object `key`, read as GetRangeOnly reads one, all
  // at once: one answer per span, in order, each its own (one failing
  // leaves the others). A store sends the requests concurrently, each on
  // a connection of its own, at most its parts in flight per object
  // (StoreOptions::concurrency) at a time, so a few spans take about one
  // round trip; this
  // default, and a plain path, read them one after the other. `stop`: as
  // GetRangeOnly's, for all of them; a span not yet asked for when it
  // comes is not asked for (kCancelled).
  std::vector<Result<std::string>> GetRangesOnly(const std::string& key,
                                                 const std::vector<DataSpan>& spans,
                                                 std::stop_token stop = {}) {
    return GetRangesOnlyOfVersion(key, spans, "", std::move(stop));
  }
  // As GetRangesOnly, each span from the version of `key` whose etag is
  // `version` as GetRangeOnlyOfVersion reads one (unchecked: as it is
  // now). A Parquet row group's piece is read this way in parts, as a
  // shard's download is; a peek's reads with the shard's size. `stated`
  // (may be null; else spans.size() of them): what answer i stated of the
  // object goes to (*stated)[i], as ObjectVersion::stated for one read
  // (version.stated itself is not written).
  virtual std::vector<Result<std::string>> GetRangesOnlyOfVersion(
      const std::string& key, const std::vector<DataSpan>& spans, const ObjectVersion& version,
      std::stop_token stop = {}, std::vector<ObjectStated>* stated = nullptr);
  // As GetRangesOnlyOfVersion, span i's bytes written into `into` after
  // those of the spans before it (room for all of their lengths), not
  // returned: answer i is how many came (fewer at the object's end). A
  // store receives each answer there from the socket (GetRangeOnlyInto),
  // so a row group's piece read in parts (StreamShards::ReadPiece) is
  // never copied from its parts into a whole; this default, and a plain
  // path, copy GetRangesOnlyOfVersion's answers in. `into` must outlive
  // the call; the bytes of a span that failed are unspecified.
  virtual std::vector<Result<uint64_t>> GetRangesOnlyOfVersionInto(
      const std::string& key, const std::vector<DataSpan>& spans, const ObjectVersion& version,
      char* into, std::stop_token stop = {});
  // The size of the parts a long range is read in (a Parquet row group's
  // piece: PiecePartSize's base): the StoreOptions::part_size the source
  // was opened with, as a whole object's download uses; the default here.
  virtual uint64_t PartSize() const { return StoreOptions{}.part_size; }
  // Whether the objects are files on a disk of this machine (a plain
  // path on ext4, xfs, btrfs, zfs, f2fs, tmpfs or overlayfs): a re-read of
  // a file's bytes is a page-cache read, cheaper than any copy of them
  // kept. False for every store, file:// URLs (read through the file
  // store's loop) and plain paths of other file systems (FUSE mounts,
  // NFS, SMB), whose reads cost round trips.
  virtual bool OnLocalDisk() const { return false; }
  // As GetRangeOnly, from the version of `key` whose etag (ListedFile::
  // etag, as List gave it) is `etag`: Store::GetRangeOnlyOfVersion, so an
  // object replaced since it was listed is ObjectVersionChangedError where
  // the store can tell (S3 and the stores on its API, Azure, a plain path
  // or file://: its LocalFileTag), and read as it is now elsewhere (this
  // default). With `version.size` (the index's size of the object), one
  // of another size is ObjectSizeChangedError (kCorrupt) where the store
  // can tell (HTTP: a 206's total; local files), no byte of it returned.
  // `version.stated` is set where the store tells it (ObjectVersion; not
  // by this default). `stop`: as GetRangeOnly's.
  virtual Result<std::string> GetRangeOnlyOfVersion(const std::string& key, uint64_t offset,
                                                    uint64_t length, const ObjectVersion& version,
                                                    std::stop_token stop = {}) {
    (void)version;
    return GetRangeOnly(key, offset, length, std::move(stop));
  }
  // As GetRangeOnlyOfVersion, the bytes written into `into` (room for
  // `length`; fewer at the object's end: how many came is returned), with
  // `progress` told of the answer's head and of the bytes as they land
  // (Store::GetRangeOnlyInto's IntoProgress, on the loop's thread): by the
  // HTTP stores as they come off the socket; by any other source once its
  // read returns (Answered with what it stated, then Received of them all),
  // so a caller sees the same calls from every source. `version.stated`,
  // if set, gets the answer's statement. `into` and `progress` must outlive
  // the call. `stop`: as GetRangeOnly's.
  virtual Result<uint64_t> GetRangeOnlyOfVersionInto(const std::string& key, uint64_t offset,
                                                     uint64_t length, const ObjectVersion& version,
                                                     char* into, IntoProgress& progress,
                                                     std::stop_token stop = {});
  // As GetRangeOnlyOfVersion, the bytes written at the start of `*room`,
  // a buffer the caller keeps from read to read (grown to `length` bytes
  // when smaller: the caller bounds `length`; never zero-filled); how many
  // came is returned (fewer at the object's end). For a caller that reads
  // many small ranges one after another (a million Parquet footers), where
  // a string made, zero-filled and freed a read costs more than the read.
  // A plain path reads straight into it; this default copies
  // GetRangeOnlyOfVersion's answer in. Thread safety: as Fetch, each
  // thread with its own room.
  virtual Result<uint64_t> GetRangeOnlyOfVersionInRoom(const std::string& key, uint64_t offset,
                                                       uint64_t length,
                                                       const ObjectVersion& version,
                                                       UninitializedBuffer* room);
  // Every object under `prefix` (relative to the root; "" = all), keys
  // relative to the root, sorted by key: the store's listing, or a walk of
  // the folder (links not followed).
  virtual Result<std::vector<ObjectInfo>> List(const std::string& prefix) = 0;
  // List, except that a source on the local disk (OnLocalDisk) may leave
  // a file it has not stat'ed unstated: size 0 and etag "" (a local file
  // stated has a LocalFileTag, never ""), for GetTailInRoom to state as it
  // reads (stores/file/file_store.h's ListFileStoreNames). This default is
  // List.
  virtual Result<std::vector<ObjectInfo>> ListNames(const std::string& prefix) {
    return List(prefix);
  }
  // The last `length` bytes of `key` (all of a shorter object) into
  // `*room` (grown to `length` when smaller); how many came is returned.
  // No version is checked: the object's size and etag as this read found
  // them go to `*stated` (required), the version later reads then ask for.
  // A source on the local disk reads it with one open (LocalRangeReader::
  // ReadTailInto); this default is kUnimplemented.
  virtual Result<uint64_t> GetTailInRoom(const std::string& key, uint64_t length,
                                         ObjectStated* stated, UninitializedBuffer* room);
  // The size of each of `keys`, in order, many looked up at once (a store
  // sends up to kConcurrentSizeLookups HEAD requests at a time). kNotFound
  // names the first missing object.
  virtual Result<std::vector<uint64_t>> Sizes(const std::vector<std::string>& keys) = 0;
  // The root as given, for error messages (secrets redacted).
  virtual std::string Describe() const = 0;
  // True when Fetch already retries (stores do, with backoff), so callers
  // must not retry again.
  virtual bool RetriesItself() const { return false; }
};

// `url`: a plain path (a folder), or any URL OpenStore accepts. `options`
// carries download_retry and download_timeout to the store. A scheme
// OpenStore does not know fails here (kInvalidArgument); the rest of the
// URL's shape and missing credentials fail on first Fetch, where the store
// is opened. Keys must be safe relative paths.
Result<std::unique_ptr<RemoteSource>> OpenRemoteSource(std::string_view url,
                                                       const StoreOptions& options = {});

}  // namespace sluice
