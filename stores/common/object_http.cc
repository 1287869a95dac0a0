#include "stores/common/object_http.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "base/asio/co_status.h"
#include "stores/common/ranged_parts.h"
#include "stores/common/store_keys.h"
#include "stores/common/xml_lite.h"

namespace sluice {

using boost::asio::awaitable;

Result<std::unique_ptr<HttpClient>> MakeStoreHttpClient(
    boost::asio::any_io_executor executor, const StoreOptions& options,
    std::function<std::string(std::string_view)> error_detail,
    std::function<std::string(const HttpHeaders&)> error_header_detail) {
  HttpClientOptions http;
  http.error_detail = std::move(error_detail);
  http.error_header_detail = std::move(error_header_detail);
  http.download_retry = std::max(options.download_retry, 0);
  http.download_timeout = std::chrono::milliseconds(
      static_cast<int64_t>(std::max(options.download_timeout_s, 0.001) * 1000));
  const auto read_timeout = std::chrono::milliseconds(
      static_cast<int64_t>(std::max(options.read_timeout_s, 0.001) * 1000));
  http.first_byte_timeout = read_timeout;
  http.idle_timeout = read_timeout;
  http.ca_file = options.ca_file;
  return HttpClient::Create(std::move(executor), std::move(http));
}

GetToFileOptions DownloadOptions(const StoreOptions& options,
                                 std::optional<uint64_t> expected_size) {
  GetToFileOptions download;
  download.part_size = std::max<uint64_t>(options.part_size, 1);
  download.concurrency = std::max(options.concurrency, 1);
  download.local_concurrency = std::max(options.local_concurrency, 0);
  download.write_pool = options.write_pool;
  download.env = options.env;
  download.expected_size = expected_size;
  return download;
}

std::string XmlErrorDetail(std::string_view body) {
  constexpr size_t kMaxElement = 200;
  auto element = [&](std::string_view name) -> std::string {
    std::string_view raw = XmlFirst(body, name);
    if (raw.size() > kMaxElement) return {};
    Result<std::string> text = XmlUnescape(raw);
    std::string out = text.ok() ? *text : std::string(raw);
    for (char& c : out) {
      if (static_cast<unsigned char>(c) < 0x20) c = ' ';
    }
    return out;
  };
  std::string code = element("Code");
  if (code.empty()) return {};
  std::string message = element("Message");
  return message.empty() ? code : code + ": " + message;
}

Status ObjectError(const Status& s, std::string_view root, std::string_view key) {
  return s.WithContext(JoinKey(root, key));
}

awaitable<Result<HttpResponse>> SendForObject(HttpClient& client, HttpRequest req,
                                              std::string root, std::string key) {
  auto resp = co_await client.Send(std::move(req));
  if (!resp.ok()) co_return ObjectError(resp.status(), root, key);
  co_return resp;
}

Result<uint64_t> SizeFromHead(const HttpResponse& resp, std::string_view object_url) {
  if (resp.object_size) return *resp.object_size;
  std::string cl = resp.Header("content-length");
  char* end = nullptr;
  unsigned long long size = std::strtoull(cl.c_str(), &end, 10);
  if (cl.empty() || *end != '\0') {
    return CorruptError(std::string(object_url) + ": HEAD response has no Content-Length");
  }
  return size;
}

namespace {

// Whether `failure`, a ranged GET's from `offset`, is a 416 for a range
// that starts exactly at the object's end (a HEAD tells its size): an
// empty answer, as for local files.
awaitable<bool> EmptyAtObjectEnd(Store& store, std::string key, uint64_t offset,
                                 StatusCode failure) {
  if (failure != StatusCode::kOutOfRange) co_return false;
  auto head = co_await store.Head(std::move(key));
  co_return head.ok() && head->size == offset;
}

}  // namespace

awaitable<Result<std::string>> BytesOfRangedGet(Store& store, std::string key, uint64_t offset,
                                                uint64_t length, Result<HttpResponse> resp) {
  if (!resp.ok()) {
    // Not in the if's condition: with the co_await there (GCC 12), the
    // loop's thread was seen spinning in the frame's destruction.
    const bool empty = co_await EmptyAtObjectEnd(store, key, offset, resp.status().code());
    if (empty) co_return std::string();
    co_return ObjectError(resp.status(), store.root(), key);
  }
  // The client checked that a 206 body starts at `offset`, and cut a 200
  // (Range ignored: the whole object) to the range (IgnoredRange::kTrim).
  if (resp->body.size() > length) resp->body.resize(length);
  co_return std::move(resp->body);
}

namespace {

// AnswerIsOfVersion of `key`'s URL.
Status AnswerOfKeyIsOfVersion(const Store& store, const std::string& key, const std::string& asked,
                              const std::string& now, uint64_t offset, uint64_t length) {
  return AnswerIsOfVersion(JoinKey(store.root(), key), asked, now, offset, length);
}

// SendRangedGet up to the answer: the range, If-Match, and the checks of
// the version and of a server that ignored Range. An error of those
// checks sets *checked_error (the caller returns it as it is); a ranged
// GET's own error is returned for the caller to read (BytesOfRangedGet,
// or SendRangedGetInto's count). `length` > 0. `progress` (may be null;
// with req.body_into) is told of the answer once its head passed the
// checks a head allows (the size: the client; the ETag: here), and then
// of its bytes as they land; its refusal is returned as it is.
awaitable<Result<HttpResponse>> SendRanged(HttpClient& client, Store& store, std::string key,
                                           uint64_t offset, uint64_t length, HttpRequest req,
                                           WholeObjectAnswer whole, ObjectVersion version,
                                           bool* checked_error, IntoProgress* progress = nullptr) {
  const std::string etag = std::move(version.etag);
  req.range = ByteRange::FromTo(offset, offset + length - 1);
  // The client compares the size the answer states (a 206's Content-Range
  // total) before it delivers a byte: one check for every HTTP store.
  if (version.size > 0) req.expected_object_size = version.size;
  const bool refuse = whole == WholeObjectAnswer::kRefuse;
  if (refuse) req.if_range_ignored = HttpRequest::IgnoredRange::kHeadOnly;
  if (!etag.empty() &&
      std::none_of(req.headers.begin(), req.headers.end(),
                   [](const auto& h) { return h.first == "If-Match"; })) {
    req.headers.emplace_back("If-Match", etag);
  }
  // The hooks run within Send: the frame's locals they refer to outlive
  // them.
  Status refused;
  bool told = false;
  if (progress != nullptr && req.body_into != nullptr) {
    req.on_answer = [&](const HttpResponse& answer) -> Status {
      const std::string now = answer.Header("etag");
      refused = AnswerOfKeyIsOfVersion(store, key, etag, now, offset, length);
      if (refused.ok()) refused = progress->Answered(ObjectStated{answer.object_size, now});
      told = refused.ok();
      return refused;
    };
    req.on_body_into = [&](uint64_t n) {
      if (told) progress->Received(n);
    };
  }
  auto resp = co_await client.Send(std::move(req));
  if (!refused.ok()) {
    *checked_error = true;
    co_return refused;
  }
  if (!resp.ok() && !etag.empty()) {
    *checked_error = true;
    // A 412 (the client's kCorrupt) says only that the listed version is
    // gone: a HEAD tells which version is there now, for the error.
    if (IsCorrupt(resp.status())) {
      Result<ObjectInfo> head = co_await store.Head(key);
      if (head.ok() && !head->etag.empty() && !SameEtag(head->etag, etag)) {
        co_return ObjectVersionChangedError(JoinKey(store.root(), key), etag, head->etag, offset,
                                            length);
      }
    }
    co_return ObjectError(resp.status().WithContext("reading the version listed with ETag " + etag),
                          store.root(), key);
  }
  if (resp.ok()) {
    Status same = AnswerOfKeyIsOfVersion(store, key, etag, resp->Header("etag"), offset, length);
    if (!same.ok()) {
      *checked_error = true;
      co_return same;
    }
  }
  if (refuse && resp.ok() && resp->status == 200) {
    *checked_error = true;
    co_return UnimplementedError(JoinKey(store.root(), key) +
                                 ": the server ignored Range (200, the whole object) for bytes " +
                                 std::to_string(offset) + ".." + std::to_string(offset + length) +
                                 "; not read");
  }
  if (resp.ok() && version.stated != nullptr) {
    *version.stated = ObjectStated{resp->object_size, resp->Header("etag")};
  }
  co_return resp;
}

}  // namespace

awaitable<Result<std::string>> SendRangedGet(HttpClient& client, Store& store, std::string key,
                                             uint64_t offset, uint64_t length, HttpRequest req,
                                             WholeObjectAnswer whole, ObjectVersion version) {
  if (length == 0) co_return std::string();
  bool checked_error = false;
  Result<HttpResponse> resp = co_await SendRanged(client, store, key, offset, length,
                                                  std::move(req), whole, std::move(version),
                                                  &checked_error);
  if (checked_error) co_return resp.status();
  co_return co_await BytesOfRangedGet(store, std::move(key), offset, length, std::move(resp));
}

awaitable<Result<uint64_t>> SendRangedGetInto(HttpClient& client, Store& store, std::string key,
                                              uint64_t offset, uint64_t length, char* into,
                                              HttpRequest req, ObjectVersion version,
                                              IntoProgress* progress) {
  if (length == 0) co_return uint64_t{0};
  req.body_into = into;
  req.body_into_size = length;
  bool checked_error = false;
  Result<HttpResponse> resp = co_await SendRanged(client, store, key, offset, length,
                                                  std::move(req), WholeObjectAnswer::kRefuse,
                                                  std::move(version), &checked_error, progress);
  if (checked_error) co_return resp.status();
  if (!resp.ok()) {
    const bool empty = co_await EmptyAtObjectEnd(store, key, offset, resp.status().code());
    if (empty) co_return uint64_t{0};
    co_return ObjectError(resp.status(), store.root(), key);
  }
  co_return std::min(resp->body_bytes, length);
}

RangedPartsClaim RangedPartsFor(HttpClient& client, const StoreOptions& options, uint64_t length,
                                uint64_t part_size) {
  // As a whole download's parts (GetToFileOptions::local_concurrency): from
  // a server that answers as if local, more connections add only CPU.
  int most = std::max(options.concurrency, 1);
  if (options.local_concurrency > 0 && client.LocalLink()) {
    most = std::min(most, options.local_concurrency);
  }
  auto [parts, hold] = client.ClaimConnections(
      [&](int free) { return RangedPartCount(length, part_size, most, free); });
  return {parts, std::move(hold)};
}

}  // namespace sluice
