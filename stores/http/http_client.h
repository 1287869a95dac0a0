// HTTP/1.1 client over TCP and TLS (Boost.Beast and OpenSSL under Asio),
// with a keep-alive connection pool, timeouts, retries with backoff and
// resumption, redirects, streaming bodies and parallel ranged downloads.
//
// The client runs on an executor its owner provides (stores/ sits below
// engine/, so the event loop is passed in, e.g. EventLoop::executor()). The
// coroutine API (Send, GetToFile) must be awaited on that executor, which
// must run on one thread (or be a strand): the pool is not locked. To wait
// for a request from another thread, run it with EventLoop::Run.
//
// Inside (stores/http/, namespace http_detail): connection_pool (connect,
// TLS, keep-alive), http_exchange (one request and its response head),
// body_reader and body_placement (the body, trimmed to the wanted span),
// http_failures and retry_policy (what failed, whether to go again),
// redirect_policy (what follows a redirect).
//
// Security: TLS certificate and host-name verification are on by default;
// error text names the URL with secret query values redacted (Url::Redacted),
// never header values.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/asio/thread_pool.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include "base/env.h"
#include "base/fill_watermark.h"
#include "base/status.h"
#include "stores/http/url.h"

namespace sluice {

enum class HttpMethod { kGet, kHead, kPut, kPost, kDelete };
const char* HttpMethodName(HttpMethod method);  // "GET", ...; static storage

// A byte range of the object: [first, last] inclusive, [first, end), or the
// last `suffix` bytes.
struct ByteRange {
  static ByteRange FromTo(uint64_t first, uint64_t last) { return {first, last, 0, false}; }
  static ByteRange From(uint64_t first) { return {first, std::nullopt, 0, false}; }
  static ByteRange Suffix(uint64_t n) { return {0, std::nullopt, n, true}; }

  uint64_t first = 0;
  std::optional<uint64_t> last;
  uint64_t suffix = 0;
  bool is_suffix = false;
};

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

struct HttpResponse;

struct HttpRequest {
  HttpMethod method = HttpMethod::kGet;
  std::string url;
  // Extra headers (Authorization, x-amz-*, ...). Never logged nor put in
  // error text. Host, Content-Length, Range and User-Agent are set by the
  // client unless given here.
  HttpHeaders headers;
  std::optional<ByteRange> range;  // GET only
  // The caller signed `range` (Azure's SharedKey signs the Range header):
  // a retry after part of the body asks the same range again, and the
  // bytes already delivered are dropped from the new response, instead of
  // asking for the rest with another Range the signature would not cover.
  bool range_signed = false;
  // The body: `body`, or when `body_file` is set, that file's bytes
  // (streamed from disk, re-read on retry).
  std::string body;
  std::string body_file;
  // The size the caller knows the object has (e.g. from a dataset's index).
  // When set, a response stating another size fails with kCorrupt naming
  // both ("the remote changed"), and no byte past it is delivered: a server
  // claiming more never makes the caller download more.
  std::optional<uint64_t> expected_object_size;
  // What a 200 to a ranged GET (a server that ignored Range: the body is the
  // whole object) delivers, when no byte has been delivered yet:
  //   kTrim: the requested range's bytes (the rest is read and dropped);
  //   kToEnd: every byte from the range's first to the object's end (for
  //     GetToFile's first part: the whole object, in one response);
  //   kHeadOnly: none; the response (status 200, headers, object_size)
  //     returns at its head and the connection is closed unread (for a
  //     part fetched before the first part told whether ranges work).
  enum class IgnoredRange { kTrim, kToEnd, kHeadOnly };
  IgnoredRange if_range_ignored = IgnoredRange::kTrim;
  // Send() without a sink: the body is written into [body_into, body_into +
  // body_into_size) at its own offset (the bytes delivered before it, so a
  // resumed attempt goes on where the last one stopped), straight from the
  // socket where it can be, instead of into HttpResponse::body, which stays
  // empty (body_bytes says how much came). Bytes past body_into_size are
  // dropped, as a buffered body is trimmed to the range asked. The memory
  // is the caller's and must outlive the call: one ranged part of an
  // object received at its place in the object's one buffer (Store::
  // GetRangeInPartsInto).
  char* body_into = nullptr;
  uint64_t body_into_size = 0;
  // With body_into, so that its bytes may be read while the rest comes
  // (Store::GetRangeOnlyInto's IntoProgress): `on_answer` is given the
  // response (status, the first answer's headers, object_size) once a 2xx
  // answer's head has been placed (its size checked against
  // expected_object_size) and before any of its body is written; non-OK
  // fails the request with that status (final, no retry). `on_body_into`
  // is then told that bytes [0, n) of body_into are written (n grows; each
  // byte once across attempts): after a socket read once
  // kBodyIntoReportBytes more have come since the last call, and at each
  // attempt's end (the bytes of an attempt that failed midway are those
  // the server sent; they stay). Both run on the client's executor, within
  // Send; what they capture must outlive it.
  std::function<Status(const HttpResponse& answer)> on_answer;
  std::function<void(uint64_t n)> on_body_into;
};

// How many bytes of body_into come between two HttpRequest::on_body_into
// calls at least (the attempt's end excepted): 64 KiB, about 1 ms of a
// 100 MB/s connection, so a reader waits no longer than that for the bytes
// it needs, while a 64 MiB shard costs 1,024 calls (a lock and a wake-up
// each), not one per socket read (as small as a segment on a slow link).
inline constexpr uint64_t kBodyIntoReportBytes = uint64_t{64} << 10;

struct HttpResponse {
  int status = 0;        // of the final response, e.g. 200, 206, 204
  HttpHeaders headers;   // of the first successful response; names lower case
  std::string body;      // only when Send() buffered it (no sink)
  uint64_t body_bytes = 0;  // bytes delivered (to `body` or the sink)
  // Size of the whole object when known: Content-Range's total, or the
  // Content-Length of a 200 response.
  std::optional<uint64_t> object_size;
  int attempts = 0;      // requests sent, excluding stale-connection retries
  std::string final_url;  // after redirects, redacted

  // First value of header `name` (case-insensitive), or empty.
  std::string Header(std::string_view name) const;
};

// kCorrupt: `object` (a URL or path, redacted) is `stated` bytes (with
// `at_least`: at least that many, when a read past `expected` only showed
// that there are more) where the dataset's index.json says `expected`. The
// one wording of "the remote changed", for every store.
Status ObjectSizeChangedError(std::string_view object, uint64_t stated, uint64_t expected,
                              bool at_least = false);

// kCorrupt: `object` (a URL or path, redacted) is no longer the version
// listed with ETag `listed`: it is `now` (as the store tells it: an answer's
// or a HEAD's ETag, a local file's LocalFileTag). Bytes [offset, offset +
// length) were asked of the listed version and not read. The one wording
// of "replaced since it was listed", for every store; another attempt reads
// the same new version, so callers do not retry it.
Status ObjectVersionChangedError(std::string_view object, std::string_view listed,
                                 std::string_view now, uint64_t offset, uint64_t length);

// Ok when an answer that stated ETag `now` is of the version with ETag
// `asked`: where either is empty (nothing to compare) or they are the same
// (SameEtag); else ObjectVersionChangedError(object, asked, now, offset,
// length). The one comparison of an answer's ETag with the version asked,
// whether or not the request carried If-Match (a server may ignore it; the
// web stores send none and read any version, so a caller that needs one
// version compares here). Pure.
Status AnswerIsOfVersion(std::string_view object, std::string_view asked, std::string_view now,
                         uint64_t offset, uint64_t length);

// Whether `s` is ObjectSizeChangedError or ObjectVersionChangedError (their
// StatusMark::kSourceChanged, kept through WithContext): a store's word
// that the object is not the one the index describes, which every further
// attempt reads again (the retry rules of a shard's download ask it:
// engine/dataset/stream_shards.cc DownloadMayHeal).
bool IsObjectChangedError(const Status& s);

// Whether two ETags name the same version: equal once each is stripped of
// its surrounding double quotes (Azure lists an Etag bare and answers
// it quoted in the ETag header; S3 quotes both). Pure.
bool SameEtag(std::string_view a, std::string_view b);

// Receives the response body in order, chunk by chunk (up to 1 MiB each),
// on the client's executor. Each byte is delivered once even across retries
// (resumption continues where the sink stopped). A non-OK Status aborts the
// request with that Status (no retry). `chunk` is valid only during the call
// (until the returned awaitable completes). The returned awaitable may run
// as its own coroutine while the client receives the next chunk (calls never
// overlap), and is not cancelled with the request: the request waits for it.
using BodySink = std::function<boost::asio::awaitable<Status>(std::string_view chunk)>;

struct HttpClientOptions {
  // Mosaic's download_retry: retries after the first attempt.
  int download_retry = 2;
  // Mosaic's download_timeout: bound for one request, all retries included.
  std::chrono::milliseconds download_timeout{60000};
  std::chrono::milliseconds connect_timeout{10000};     // resolve + connect + TLS
  std::chrono::milliseconds first_byte_timeout{30000};  // request sent -> headers
  std::chrono::milliseconds idle_timeout{30000};        // no body bytes for this long
  // Exponential backoff: base * 2^(retry-1), capped, with jitter in
  // [delay/2, delay]. A Retry-After header replaces it (capped by the time
  // left before download_timeout).
  std::chrono::milliseconds backoff_base{200};
  std::chrono::milliseconds backoff_max{10000};
  int max_connections_per_host = 32;
  // Pooled connections idle longer than this are closed instead of reused.
  std::chrono::milliseconds pool_idle_expiry{30000};
  int max_redirects = 5;
  // false: a 3xx with a Location is the response (status and its
  // "location" header only), not followed.
  bool follow_redirects = true;
  // Cap for bodies Send() buffers in memory (no sink), and for error bodies.
  uint64_t max_buffered_body = uint64_t{1} << 30;
  // TLS: CA bundle file. Empty: $SSL_CERT_FILE if set, else the system's
  // default verify paths.
  std::string ca_file;
  bool verify_tls = true;  // false only for tests against a known server
  std::string user_agent = "sluice/0.1";
  // Once a 2xx response to a request without a body came within this time to
  // first byte (http_detail::FirstByteTime), the servers are taken to be on
  // this host or next to it: there is no round trip for parallel requests
  // to hide (see LocalLink, GetToFileOptions::local_concurrency). 5 ms: a
  // remote store answers after a round trip and its own work (S3: 10 ms and
  // more), while a slow server on this host answers in its work alone
  // (s3rver, which spends 1.2 ms of CPU per GET, first answered a dataset's
  // reader in 1.3-3.6 ms; 2 ms took it for remote in some runs and not in
  // others).
  std::chrono::microseconds local_first_byte{5000};
  // A store's reading of an error response's body (up to 64 KiB), e.g. S3's
  // "<Code>: <Message>", quoted in the error text in parentheses. Must never
  // return secrets. Empty result or null: nothing is quoted.
  std::function<std::string(std::string_view body)> error_detail;
  // A store's reading of an error response's headers (names lower case), for
  // what a server states only there: S3 names a bucket's region in
  // x-amz-bucket-region, and its 301 to a HEAD has no body. Quoted after
  // error_detail's text. Must never return secrets. Null: headers unread.
  std::function<std::string(const HttpHeaders& headers)> error_header_detail;
};

struct GetToFileOptions {
  uint64_t part_size = uint64_t{8} << 20;  // bytes per ranged GET
  int concurrency = 8;                     // ranged GETs in flight
  // Ranged GETs in flight instead, when the client's servers answer as if
  // local (HttpClient::LocalLink() at the download's start): there extra
  // connections add no bandwidth, only CPU, socket memory and cache misses
  // (bench/python/cold_epoch.py on a 2-core host's loopback: 4 shards of 8
  // parts each took up to 15% longer and 12% more CPU than of 2 parts each).
  // With expected_size known the object is then asked in that many parts
  // (part_size at least), one per connection: each request costs the
  // server its own work (s3rver: 1.2 ms of CPU, on the cores the reader
  // uses too). 0: always `concurrency` parts of part_size.
  int local_concurrency = 0;
  // Where the file writes run (pwrite, one kPageCacheWriteBlock per call);
  // null: through io_uring on the client's executor. Must be joined before
  // the executor destroys suspended coroutines (an EventLoop's cpu_pool()
  // is). Why a pool: io_uring first tries a buffered write inline without
  // blocking, and a write whose folio cannot be had at once then costs
  // many times the copy (seen with 2 MiB writes at 3.5 s of system time
  // per GB, against 0.25 s with the write done blocking).
  boost::asio::thread_pool* write_pool = nullptr;
  // The file system the download's temporary is created, written, sized
  // and renamed through. Writes go through io_uring (or write_pool) only
  // for the real one (Env::IsDefault); any other Env gets every write as its
  // own call, so a test double can fail a download's write. Null: the real
  // one.
  Env* env = nullptr;
  // The object's size when the caller knows it (a shard's size from its
  // index): every request carries it (HttpRequest::expected_object_size),
  // so a server stating another size fails the download after its first
  // response, and the file never grows past it.
  std::optional<uint64_t> expected_size;
  // Told of the file (Attach, once created) and of each write that
  // completed (Wrote), so that readers may read what has arrived while the
  // rest downloads; Abandon when the file is written again from its start.
  // Null: nobody reads it before the end. Must outlive the call; its owner
  // calls Finish.
  FillWatermark* fill = nullptr;
};

// Counters since the client was created. Readable from any thread.
struct HttpClientStats {
  uint64_t connections_opened = 0;
  uint64_t connections_reused = 0;
  uint64_t stale_connections = 0;  // pooled connections found closed by the server
  uint64_t retries = 0;            // counted retries (errors, 5xx, 429, drops)
};

class HttpClient {
 public:
  // Builds the TLS context (loads the CA bundle: errors name the file).
  // `executor` must outlive the client.
  static Result<std::unique_ptr<HttpClient>> Create(
      boost::asio::any_io_executor executor, HttpClientOptions options = {});
  // No operation may be in flight (await or cancel them first). Closes the
  // pooled connections.
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Sends `request`, following redirects (GET/HEAD), retrying per the
  // options, and returns the response with the body buffered (up to
  // max_buffered_body). Non-2xx final statuses are errors: 404 kNotFound,
  // 401/403 kPermissionDenied, 416 kOutOfRange, 5xx/429 after retries
  // kUnavailable, timeouts kDeadlineExceeded, others kIoError; each names
  // the method, redacted URL, status and what was expected.
  boost::asio::awaitable<Result<HttpResponse>> Send(HttpRequest request);
  // As Send(), streaming the body into `sink` (HttpResponse::body stays
  // empty).
  boost::asio::awaitable<Result<HttpResponse>> Send(HttpRequest request, BodySink sink);

  // Downloads `url` into `path`: parallel ranged GETs written through
  // io_uring into a temporary file in the same folder, renamed into place
  // when whole. On any error or cancellation the temporary file is removed
  // and `path` is untouched. `extra_headers` go on every request. A failure
  // of the file (creating, writing, sizing or renaming the temporary) is
  // its Env's error after "GET <url>" (a write's also after the size and
  // offset of the block that failed), with the errno kept as os_error().
  boost::asio::awaitable<Result<HttpResponse>> GetToFile(
      std::string url, std::string path, GetToFileOptions options = {},
      HttpHeaders extra_headers = {});

  HttpClientStats stats() const;
  // Promises connections to one object's ranged reads at once: `decide` is
  // given how many of max_connections_per_host are free (neither in use nor
  // promised to another claim still held, whichever counts more; 0 or more)
  // and says how many to take (at least 1: a read with none free waits at
  // the pool as any request). Returns them and the hold that gives them
  // back when released (the client must outlive it). Thread safe: the
  // count and the promise are one step.
  std::pair<int, std::shared_ptr<void>> ClaimConnections(
      const std::function<int(int free)>& decide);
  // Whether a 2xx response to a request without a body came within
  // HttpClientOptions::local_first_byte (false before the first response).
  // Callable from any thread.
  bool LocalLink() const;
  const HttpClientOptions& options() const;
  boost::asio::any_io_executor executor() const;

 private:
  class Impl;
  explicit HttpClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace sluice
