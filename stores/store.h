// The one interface every storage backend implements: local paths and
// file://, http(s)://, s3:// (and S3-compatible endpoints), oci://, gs://,
// azure:// / azure-dl://, dbfs:/Volumes/, hf:// (the Hugging Face Hub).
//
// A Store is rooted at a URL (e.g. "s3://bucket/datasets/c4") and addresses
// objects by keys relative to that root ("index.json", "part0/shard.00000.mds").
// Keys never start with '/' and never contain ".." components; a Store
// refuses such keys with kInvalidArgument.
//
// Every method is a coroutine that must be awaited on the executor the store
// was opened with (stores/ know nothing of engine/: the caller passes the
// event loop's executor in). A Store is used from that executor only; it
// may hold connections, so destroy it only when no operation is in flight.
// Errors name the redacted URL of the object, the operation and what was
// expected; credentials never appear in them.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/awaitable.hpp>

#include "base/env.h"
#include "base/fill_watermark.h"
#include "base/status.h"

namespace sluice {

// What a ranged read's answer said of the whole object: its size (a 206's
// Content-Range total, a local file's size; nullopt when the answer did
// not say) and its ETag (the answer's ETag header, a local file's
// LocalFileTag; "" when it had none).
struct ObjectStated {
  std::optional<uint64_t> size;
  std::string etag;
};

// Told of a ranged read's bytes as they land in the caller's buffer
// (Store::GetRangeOnlyInto), before the read returns, so that readers may
// use them while the rest comes (a single pass's shard: ArrivedBytes, fed
// by GetRangeInPartsInto). The HTTP stores call it from their client's
// body reads (HttpRequest::on_answer, on_body_into); a store that cannot
// (local files, Store's default) calls neither, and its caller reports the
// bytes when the read returns. Called on the store's executor, never two
// calls at once for one read; it must outlive the read.
class IntoProgress {
 public:
  virtual ~IntoProgress() = default;
  // An answer's head, checked as the read checks it (its size against
  // ObjectVersion::size, its ETag against ObjectVersion::etag), before any
  // byte of its body is reported: `stated` is what it says of the object.
  // Non-OK fails the read with that status as it is (no retry), and no
  // byte of the answer is reported. Called again for a resumed answer.
  virtual Status Answered(const ObjectStated& stated) = 0;
  // Bytes [0, n) of the caller's buffer are written and will not change
  // (n grows from call to call). Only after an Answered that returned ok.
  virtual void Received(uint64_t n) = 0;
};

// Which object a ranged read may read (Store::GetRangeOnlyOfVersion,
// GetRangeOnlyInto): `etag` as ObjectInfo::etag ("" = any version) and
// `size`, the whole object's size in bytes as a dataset's index gives it
// (0 = unchecked). A string converts to an etag alone. `stated` (may be
// null; it must outlive the read): set to what the answer said of the
// object when GetRangeOnlyOfVersion returns its bytes, by every HTTP store
// (SendRangedGet) and local files; left as it was by a store that knows
// no version (Store's default), so a caller that needs it sees nothing.
struct ObjectVersion {
  std::string etag;
  uint64_t size = 0;
  ObjectStated* stated = nullptr;
  ObjectVersion() = default;
  ObjectVersion(std::string e, uint64_t s = 0) : etag(std::move(e)), size(s) {}  // NOLINT
  ObjectVersion(const char* e) : etag(e) {}                                     // NOLINT
  bool Unchecked() const { return etag.empty() && size == 0; }
};

struct ObjectInfo {
  std::string key;   // relative to the store's root
  uint64_t size = 0;
  // What changes when the object is replaced, even at the same size, as the
  // store's listing gives it (compared for equality only): S3's and GCS's
  // ETag (GCS through its S3-compatible listing), Azure's Etag, OCI's etag,
  // the Hub's blob oid, a local file's inode and mtime (LocalFileTag),
  // dbfs's last_modified ("mtime-ms <ms>": a file rewritten within the same
  // millisecond at the same size goes unnoticed). "" when the store's
  // listing has none (web). Head gives it where the
  // answer has it (S3 and its API's stores, Azure: the ETag header, which
  // Azure quotes and its listing does not: compare with SameEtag; local
  // files), "" elsewhere.
  std::string etag = {};
};

// Options shared by all stores; each store also reads its own environment
// variables (AWS_*, S3_ENDPOINT_URL, GCS_KEY, AZURE_*, DATABRICKS_*, ...).
struct StoreOptions {
  int download_retry = 2;             // Mosaic's default
  double download_timeout_s = 60.0;   // Mosaic's default, per request incl. retries
  // Longest silence of a server (before the response's head, or within its
  // body) before the request is retried (botocore's read_timeout; Sluice's
  // default 30 s).
  double read_timeout_s = 30.0;
  uint64_t part_size = uint64_t{8} << 20;  // parallel ranged GET / multipart part size
  int concurrency = 8;                     // ranged GET parts in flight per object
  // Parts in flight per object from a server that answers as if local
  // (GetToFileOptions::local_concurrency; the web and S3-compatible stores,
  // not Azure, whose parts are its own ranged reads). Several objects are
  // fetched at once (the dataset's fetch_concurrency), which fills such a
  // link already.
  int local_concurrency = 2;
  // Multipart (S3) / block (Azure) upload parts in flight per object; each
  // holds one part in memory.
  int upload_concurrency = 4;
  std::string ca_file;                     // TLS CA bundle override ("" = default)
  // Objects per List request (max-keys / maxresults); 0: the service's
  // default (1000 for S3, 5000 for Azure). Small values exercise paging.
  int list_page_size = 0;
  // Downloaded files are written on this pool when set (see
  // GetToFileOptions::write_pool); it must outlive the store.
  boost::asio::thread_pool* write_pool = nullptr;
  // The file system every store writes downloads through (base/env.h; the
  // HTTP stores' through GetToFileOptions::env), the file store's, and a
  // folder source's (engine/dataset/remote_source.h); it must outlive the
  // store.
  Env* env = Env::Default();
};

// How many ranged reads of one object run at once (Store::ClaimRangedParts),
// and the connections promised to them: other objects read meanwhile see
// them taken until `hold` is released (null: nothing promised).
struct RangedPartsClaim {
  int parts = 1;
  std::shared_ptr<void> hold;
};

class Store {
 public:
  virtual ~Store() = default;

  // The root URL as given (secrets redacted).
  virtual std::string root() const = 0;

  // Size of one object; kNotFound when it does not exist.
  virtual boost::asio::awaitable<Result<ObjectInfo>> Head(std::string key) = 0;

  // Bytes [offset, offset + length) of an object (fewer at its end).
  virtual boost::asio::awaitable<Result<std::string>> GetRange(std::string key, uint64_t offset,
                                                               uint64_t length) = 0;

  // As GetRange, for a read worth making only as a range (e.g. a peek at a
  // few bytes ahead of the object's whole download): a server that ignores
  // Range and answers with the whole object is not read (the connection is
  // dropped) and kUnimplemented is returned instead. Every store over HTTP
  // (web, dbfs, s3/oci/gs, azure) does so through SendRangedGet
  // (stores/common/object_http.h); local files keep this default. A
  // terminal cancellation of the awaiting coroutine (e.g. EventLoop::Run's
  // stop token) ends a request in flight, waiting or reading: kCancelled.
  virtual boost::asio::awaitable<Result<std::string>> GetRangeOnly(std::string key,
                                                                   uint64_t offset,
                                                                   uint64_t length) {
    co_return co_await GetRange(std::move(key), offset, length);
  }

  // As GetRangeOnly, from the version of the object whose etag is `etag`
  // (ObjectInfo::etag as this store's listing gave it; "" = any): a store
  // that can ask for it sends If-Match (S3 and the stores on its API,
  // Azure: signed), and local files compare their LocalFileTag, so an
  // object replaced since it was listed is ObjectVersionChangedError
  // (kCorrupt, naming both versions and the range; after a 412 the new ETag
  // is a HEAD's), never bytes of the new version. Stores that cannot (web,
  // dbfs, the Hub: BearerHttpStore) read whatever version is there.
  // With `version.size` (> 0), an object of another size is
  // ObjectSizeChangedError (kCorrupt naming the object's URL, the size the
  // server or the file states and `version.size`), before any byte is
  // returned: every HTTP store checks a 206's total (SendRangedGet), local
  // files their size. This default checks neither; it is for a store that
  // knows no version.
  virtual boost::asio::awaitable<Result<std::string>> GetRangeOnlyOfVersion(
      std::string key, uint64_t offset, uint64_t length, ObjectVersion version) {
    (void)version;
    co_return co_await GetRangeOnly(std::move(key), offset, length);
  }

  // As GetRangeOnlyOfVersion (`version` checked alike), the bytes written
  // into `into` (room for `length`) instead of returned: how many came
  // (fewer at the object's end). The HTTP stores receive them there from
  // the socket (HttpRequest::body_into), each request signed as their
  // GetRangeOnly's; this default copies GetRangeOnlyOfVersion's answer.
  // `into` must outlive the call. One part of GetRangeInPartsInto
  // (stores/common/ranged_parts.h). `progress` (may be null) is told of the
  // bytes as they land, by the HTTP stores (see IntoProgress); not by this
  // default.
  virtual boost::asio::awaitable<Result<uint64_t>> GetRangeOnlyInto(
      std::string key, uint64_t offset, uint64_t length, ObjectVersion version, char* into,
      IntoProgress* progress = nullptr);
  // How many ranged reads at once GetRangeInPartsInto makes of `length`
  // bytes, a part per `part_size` (0: one) where the connections allow
  // (RangedPartCount; fewer, larger parts when they do not), with the connections
  // they take promised to them until `hold` is released: the HTTP stores'
  // RangedPartsFor (RangedPartCount's rule over their client's free
  // connections); 1 here (local files: one read). Thread safe; the store
  // must outlive the claim.
  virtual RangedPartsClaim ClaimRangedParts(uint64_t length, uint64_t part_size) {
    (void)length;
    (void)part_size;
    return {};
  }

  // The whole object, in memory (for small objects such as index.json).
  virtual boost::asio::awaitable<Result<std::string>> Get(std::string key) = 0;

  // The whole object into local file `path`: written to a temporary name in
  // the same folder and renamed into place when complete, so `path` never
  // holds a partial object. With `expected_size` (what an index says), an
  // object of another size fails with ObjectSizeChangedError before more
  // than its first part is written, and never writes past that size.
  virtual boost::asio::awaitable<Status> GetToFile(std::string key, std::string path,
                                                   std::optional<uint64_t> expected_size) = 0;
  // GetToFile, telling `fill` (which must outlive the call; the caller
  // calls its Finish) of the file and of each write that completed
  // (GetToFileOptions::fill), so that its bytes may be read as they arrive
  // into `path` itself (a temporary of this process: a shard cache's).
  // This default tells it nothing (readers wait for the end); the HTTP
  // stores tell.
  virtual boost::asio::awaitable<Status> GetToFileFilling(std::string key, std::string path,
                                                          std::optional<uint64_t> expected_size,
                                                          FillWatermark* fill) {
    (void)fill;
    co_return co_await GetToFile(std::move(key), std::move(path), expected_size);
  }
  // Whether GetToFileFilling tells its fill of each write as it completes
  // (the HTTP stores): false where it is this default, whose fill moves
  // only at its Finish. Callers serve bytes in flight only when true.
  virtual bool ReportsFills() const { return false; }

  // Uploads local file `path` as `key` (multipart above part_size where the
  // service has it).
  virtual boost::asio::awaitable<Status> PutFile(std::string key, std::string path) = 0;

  // Uploads `bytes` as `key`.
  virtual boost::asio::awaitable<Status> Put(std::string key, std::string bytes) = 0;

  // Every object under `prefix` (all pages), sorted by key.
  virtual boost::asio::awaitable<Result<std::vector<ObjectInfo>>> List(std::string prefix) = 0;
};

// The one rule for telling store URLs from local paths. "<scheme>://..."
// with a scheme of a letter then letters, digits, '+', '-' or '.', or
// "dbfs:..." (Databricks writes no "//"): returns the scheme in lower case
// ("s3", "gs", "dbfs", "file", ...). Anything else is a local path, even
// with ':' or "://" inside ("/data/a://b"): returns "". Pure; thread-safe.
std::string StoreUrlScheme(std::string_view url);

// True when `url` names a store other than the local file system: it has a
// scheme (StoreUrlScheme) and that scheme is not "file".
bool IsStoreUrl(std::string_view url);

// OK when OpenStore knows `url`'s scheme (or it is a local path); else
// kInvalidArgument naming the scheme and the known ones.
Status CheckStoreScheme(std::string_view url);

// Opens the store for `url`, choosing the backend by scheme; a plain path is
// a local folder. Unknown schemes and malformed URLs -> kInvalidArgument;
// missing credentials -> kPermissionDenied naming the variables to set.
Result<std::unique_ptr<Store>> OpenStore(std::string_view url,
                                         boost::asio::any_io_executor executor,
                                         const StoreOptions& options = {});

}  // namespace sluice
