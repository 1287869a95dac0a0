// The HTTP request/response steps shared by the stores that reach objects
// over HttpClient (s3/oci/gs, azure, http(s), dbfs): the client built from
// StoreOptions, error context naming the object, the size a HEAD answered,
// and the bytes a ranged GET answered. Each store builds and authorizes its
// own requests; these helpers take it from there.
//
// Coroutines run on the store's executor (see stores/store.h); the other
// functions are pure and thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include "base/status.h"
#include "stores/http/http_client.h"
#include "stores/store.h"

namespace sluice {

// The HttpClient of a store: download_retry, download_timeout and the CA
// file from `options`; `error_detail` reads the store's error bodies (see
// HttpClientOptions::error_detail), e.g. XmlErrorDetail, and
// `error_header_detail` their headers (HttpClientOptions::error_header_detail).
Result<std::unique_ptr<HttpClient>> MakeStoreHttpClient(
    boost::asio::any_io_executor executor, const StoreOptions& options,
    std::function<std::string(std::string_view)> error_detail = nullptr,
    std::function<std::string(const HttpHeaders&)> error_header_detail = nullptr);

// How a store's GetToFile downloads, from its StoreOptions: part_size and
// concurrency (each at least 1), local_concurrency (0: none), write_pool;
// `expected_size` as the caller knows it (see GetToFileOptions).
GetToFileOptions DownloadOptions(const StoreOptions& options,
                                 std::optional<uint64_t> expected_size);

// "<Code>: <Message>" of an S3-, GCS- or Azure-style XML error body
// (<Error><Code>SlowDown</Code><Message>...</Message></Error>), entities
// decoded, control characters blanked, each at most 200 bytes; just the code
// without a message; empty without a code. Other elements (StringToSign,
// SignatureProvided, ...) are never quoted.
std::string XmlErrorDetail(std::string_view body);

// `s` with "<root>/<key>: " in front of its message (same code).
Status ObjectError(const Status& s, std::string_view root, std::string_view key);

// Sends `req` for object `key` of the store rooted at `root`; errors name
// the object (ObjectError).
boost::asio::awaitable<Result<HttpResponse>> SendForObject(HttpClient& client, HttpRequest req,
                                                           std::string root, std::string key);

// The object size a HEAD (or properties) response tells: the client's
// object_size, else Content-Length. kCorrupt naming `object_url` when the
// response has neither.
Result<uint64_t> SizeFromHead(const HttpResponse& resp, std::string_view object_url);

// Bytes [offset, offset + length) of `key` from the answer `resp` to a
// ranged GET sent for them (the client's default IgnoredRange::kTrim: a
// server that ignores Range, 200 with the whole object, was already cut to
// the range while it was read), one that sends more than asked (s3rver for
// "bytes=0-0") is trimmed; a 416 for a range that starts exactly at the end
// of the object (checked with store.Head) is an empty answer, as for local
// files. Errors name the object.
boost::asio::awaitable<Result<std::string>> BytesOfRangedGet(Store& store, std::string key,
                                                             uint64_t offset, uint64_t length,
                                                             Result<HttpResponse> resp);

// What a ranged GET makes of a server that ignores Range (200, the whole
// object): Store::GetRange reads it cut to the range; Store::GetRangeOnly
// refuses it.
enum class WholeObjectAnswer { kCutToRange, kRefuse };

// The ranged GET behind the HTTP stores' GetRange and GetRangeOnly: `req` is
// the store's GET of `key`, addressed and authorized; this sets its range to
// bytes [offset, offset + length) (a store that signs the Range header signs
// "bytes=<offset>-<offset + length - 1>"), sends it on `client` and answers
// as BytesOfRangedGet. With kRefuse, a 200 is not read: the response ends
// at its head, the connection is dropped, and kUnimplemented names the
// object and the range. length 0: "" without a request. Cancellation: a
// terminal cancellation of the awaiting coroutine ends the request
// (kCancelled; see HttpClient::Send). With an `etag` (Store::
// GetRangeOnlyOfVersion), the request carries If-Match with it (unless the
// store already put it in `req`, signed); an answer whose own ETag differs
// (from a server that ignores If-Match), or a 412 after which store.Head
// names another ETag, is ObjectVersionChangedError (kCorrupt), its bytes
// never returned. With a `version.size` (> 0), the request carries it as
// HttpRequest::expected_object_size: an answer stating another object size
// (a 206's Content-Range total) is ObjectSizeChangedError (kCorrupt, the
// URL and both sizes), its bytes never returned. With a `version.stated`,
// an answer whose bytes are returned sets it (its object size and ETag).
boost::asio::awaitable<Result<std::string>> SendRangedGet(HttpClient& client, Store& store,
                                                          std::string key, uint64_t offset,
                                                          uint64_t length, HttpRequest req,
                                                          WholeObjectAnswer whole,
                                                          ObjectVersion version = {});

// SendRangedGet's GetRangeOnly (kRefuse), the body received into `into`
// (room for `length` bytes; HttpRequest::body_into) instead of returned:
// how many bytes came (fewer at the object's end; a range that starts
// exactly there: 0). Behind the HTTP stores' Store::GetRangeOnlyInto.
// `progress` (may be null) is told of the answer once its head passed the
// checks above that a head allows (its size, its ETag against
// `version.etag`), and then of its bytes as they land (IntoProgress;
// through HttpRequest::on_answer and on_body_into); its refusal is the
// error, as it is.
boost::asio::awaitable<Result<uint64_t>> SendRangedGetInto(HttpClient& client, Store& store,
                                                           std::string key, uint64_t offset,
                                                           uint64_t length, char* into,
                                                           HttpRequest req,
                                                           ObjectVersion version = {},
                                                           IntoProgress* progress = nullptr);

// Store::ClaimRangedParts of the HTTP stores: RangedPartCount over the
// store's parts in flight per object (StoreOptions::concurrency; its
// local_concurrency while `client`'s servers answer as if local, a whole
// download's rule: GetToFileOptions::local_concurrency) and `client`'s free
// connections, promised to the parts (HttpClient::ClaimConnections).
RangedPartsClaim RangedPartsFor(HttpClient& client, const StoreOptions& options, uint64_t length,
                                uint64_t part_size);

}  // namespace sluice
