#include "stores/oci/oci_multipart.h"

#include <algorithm>
#include <vector>

#include "base/asio/co_status.h"
#include "formats/json/py_json.h"
#include "stores/common/object_http.h"
#include "stores/common/part_uploads.h"
#include "stores/common/store_keys.h"
#include "stores/signing/uri_encoding.h"

namespace sluice {
namespace {

using boost::asio::awaitable;

// Object Storage's limit on a multipart upload's parts.
constexpr uint64_t kOciMaxParts = 10000;

awaitable<Result<HttpResponse>> SendOciRequest(const OciMultipartTarget& t, HttpMethod method,
                                                std::string url, const std::string* json_body) {
  HttpRequest req;
  req.method = method;
  req.url = std::move(url);
  SLUICE_CO_ASSIGN_OR_RETURN(req.headers, co_await t.sign(method, req.url, json_body));
  if (json_body != nullptr) req.body = *json_body;
  co_return co_await t.client->Send(std::move(req));
}

awaitable<Status> SendOciPart(const OciMultipartTarget& t, const std::string& upload_url,
                              const std::string& path, uint64_t offset, uint64_t length,
                              uint64_t number, std::string* etag) {
  SLUICE_CO_ASSIGN_OR_RETURN(std::string bytes, ReadLocalFileRange(path, offset, length));
  HttpRequest req;
  req.method = HttpMethod::kPut;
  req.url = upload_url + "&uploadPartNum=" + std::to_string(number);
  // Signed as the SDK signs UploadPart: without the body's headers.
  SLUICE_CO_ASSIGN_OR_RETURN(req.headers, co_await t.sign(HttpMethod::kPut, req.url, nullptr));
  req.headers.emplace_back("content-type", "application/octet-stream");
  req.body = std::move(bytes);
  auto resp = co_await t.client->Send(std::move(req));
  if (!resp.ok()) {
    co_return ObjectError(resp.status(), t.root, t.key).WithContext("part " + std::to_string(number));
  }
  *etag = resp->Header("etag");
  if (etag->empty()) {
    co_return CorruptError(JoinKey(t.root, t.key) + ": UploadPart " + std::to_string(number) +
                           " answered no ETag");
  }
  co_return Status::Ok();
}

awaitable<Status> SendOciPartsAndCommit(const OciMultipartTarget& t, const std::string& upload_url,
                                        const std::string& path, uint64_t size, uint64_t part) {
  const uint64_t parts = (size + part - 1) / part;
  std::vector<std::string> etags(parts);
  Status sent = co_await ForEachPartConcurrently(
      parts, t.concurrency, [&](uint64_t i) -> awaitable<Status> {
        return SendOciPart(t, upload_url, path, i * part, std::min(part, size - i * part), i + 1,
                           &etags[i]);
      });
  if (!sent.ok()) co_return sent;
  std::string commit = "{\"partsToCommit\": [";
  for (uint64_t i = 0; i < parts; ++i) {
    commit += (i ? ", " : "") + std::string("{\"partNum\": ") + std::to_string(i + 1) +
              ", \"etag\": ";
    SLUICE_CO_RETURN_IF_ERROR(AppendPyJsonString(commit, etags[i]));
    commit += "}";
  }
  commit += "]}";
  auto resp = co_await SendOciRequest(t, HttpMethod::kPost, upload_url, &commit);
  if (!resp.ok()) {
    co_return ObjectError(resp.status(), t.root, t.key).WithContext("committing the upload");
  }
  co_return Status::Ok();
}

}  // namespace

awaitable<Status> OciUploadInParts(const OciMultipartTarget& t, std::string path, uint64_t size,
                                   uint64_t part) {
  const uint64_t parts = (size + part - 1) / part;
  if (parts > kOciMaxParts) {
    co_return InvalidArgumentError(JoinKey(t.root, t.key) + ": " + std::to_string(parts) +
                                   " parts of " + std::to_string(part) +
                                   " bytes exceed the 10000 a multipart upload allows");
  }
  std::string create = "{\"object\": ";
  SLUICE_CO_RETURN_IF_ERROR(AppendPyJsonString(create, t.object));
  create += "}";
  auto created = co_await SendOciRequest(t, HttpMethod::kPost, t.base + "/u", &create);
  if (!created.ok()) {
    co_return ObjectError(created.status(), t.root, t.key).WithContext("creating a multipart upload");
  }
  auto json = ParsePyJson(created->body);
  const std::string upload_id = json.ok() ? JsonStringMember(*json, "uploadId") : "";
  if (upload_id.empty()) {
    co_return CorruptError(JoinKey(t.root, t.key) + ": CreateMultipartUpload answered no uploadId");
  }
  const std::string upload_url =
      t.base + "/u/" + UriEncode(t.object) + "?uploadId=" + UriEncode(upload_id);
  Status status = co_await SendOciPartsAndCommit(t, upload_url, path, size, part);
  if (!status.ok()) {
    // Best effort: uncommitted parts are billed until a lifecycle rule
    // removes them.
    (void)co_await SendOciRequest(t, HttpMethod::kDelete, upload_url, nullptr);
  }
  co_return status;
}

}  // namespace sluice
