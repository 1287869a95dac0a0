#include "stores/s3/s3_multipart.h"

#include <algorithm>
#include <vector>

#include "base/asio/co_status.h"
#include "stores/common/part_uploads.h"
#include "stores/common/store_keys.h"
#include "stores/common/xml_lite.h"
#include "stores/signing/digest.h"

namespace sluice {
namespace {

using boost::asio::awaitable;

// UploadPart `number` (from 1): bytes [offset, offset + length) of local
// file `path`; its ETag into *etag.
awaitable<Status> UploadPart(const S3Requests& requests, HttpClient& client,
                             const std::string& key, const std::string& path, uint64_t offset,
                             uint64_t length, uint64_t number, const std::string& upload_id,
                             std::string* etag) {
  SLUICE_CO_ASSIGN_OR_RETURN(std::string bytes, ReadLocalFileRange(path, offset, length));
  std::vector<SigningQueryParam> part_query;
  part_query.push_back({"partNumber", std::to_string(number)});
  part_query.push_back({"uploadId", upload_id});
  std::string part_hash = Sha256Hex(bytes);
  SLUICE_CO_ASSIGN_OR_RETURN(
      HttpRequest req, co_await requests.Prepare(HttpMethod::kPut, requests.FullKey(key),
                                                 std::move(part_query), std::move(part_hash)));
  req.body = std::move(bytes);
  auto resp = co_await client.Send(std::move(req));
  if (!resp.ok()) {
    co_return requests.Context(resp.status(), key).WithContext("part " + std::to_string(number));
  }
  *etag = resp->Header("etag");
  if (etag->empty()) {
    co_return CorruptError(requests.ObjectUrl(key) + ": UploadPart " + std::to_string(number) +
                           " answered no ETag");
  }
  co_return Status::Ok();
}

awaitable<Status> UploadParts(const S3Requests& requests, HttpClient& client,
                              int upload_concurrency, const std::string& key,
                              const std::string& path, uint64_t size, uint64_t part,
                              const std::string& upload_id) {
  uint64_t parts = (size + part - 1) / part;
  if (parts > 10000) {
    co_return InvalidArgumentError(requests.ObjectUrl(key) + ": " + std::to_string(parts) +
                                   " parts of " + std::to_string(part) +
                                   " bytes exceed the 10000 a multipart upload allows");
  }
  // Parts go up concurrently; CompleteMultipartUpload lists them by number.
  std::vector<std::string> etags(parts);
  Status sent = co_await ForEachPartConcurrently(
      parts, upload_concurrency, [&](uint64_t i) -> awaitable<Status> {
        return UploadPart(requests, client, key, path, i * part, std::min(part, size - i * part),
                          i + 1, upload_id, &etags[i]);
      });
  if (!sent.ok()) co_return sent;
  std::string complete = "<CompleteMultipartUpload>";
  for (uint64_t i = 0; i < parts; ++i) {
    complete += "<Part><PartNumber>" + std::to_string(i + 1) + "</PartNumber><ETag>" +
                XmlEscape(etags[i]) + "</ETag></Part>";
  }
  complete += "</CompleteMultipartUpload>";
  std::vector<SigningQueryParam> done_query;
  done_query.push_back({"uploadId", upload_id});
  std::string done_hash = Sha256Hex(complete);
  SLUICE_CO_ASSIGN_OR_RETURN(
      HttpRequest done, co_await requests.Prepare(HttpMethod::kPost, requests.FullKey(key),
                                                  std::move(done_query), std::move(done_hash)));
  done.body = std::move(complete);
  done.headers.emplace_back("content-type", "application/xml");
  auto resp = co_await client.Send(std::move(done));
  if (!resp.ok()) co_return requests.Context(resp.status(), key);
  // S3 may answer 200 and report the failure in the body.
  if (resp->body.find("<Error>") != std::string::npos) {
    co_return IoError(requests.ObjectUrl(key) + ": CompleteMultipartUpload failed: " +
                      std::string(XmlFirst(resp->body, "Code")));
  }
  co_return Status::Ok();
}

}  // namespace

// GCC 12 at -O2 flags Asio's coroutine frame delete as mismatched with its
// allocation in this frame (as in HttpClient::GetToFile; it began here when
// Store gained GetRangeOnlyInto, with no change to this function): a false
// positive, silenced for this function only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
awaitable<Status> PutFileMultipart(const S3Requests& requests, HttpClient& client,
                                   int upload_concurrency, std::string key, std::string path,
                                   uint64_t size, uint64_t part) {
  std::string full = requests.FullKey(key);
  std::vector<SigningQueryParam> init_query;
  init_query.push_back({"uploads", ""});
  SLUICE_CO_ASSIGN_OR_RETURN(
      HttpRequest init,
      co_await requests.Prepare(HttpMethod::kPost, full, std::move(init_query), ""));
  auto init_resp = co_await client.Send(std::move(init));
  if (!init_resp.ok()) co_return requests.Context(init_resp.status(), key);
  auto upload_id = XmlUnescape(XmlFirst(init_resp->body, "UploadId"));
  if (!upload_id.ok() || upload_id->empty()) {
    co_return CorruptError(requests.ObjectUrl(key) +
                           ": CreateMultipartUpload answered no UploadId");
  }
  Status status = co_await UploadParts(requests, client, upload_concurrency, key, path, size,
                                       part, *upload_id);
  if (!status.ok()) {
    // Best effort: the upload's parts would otherwise be billed until a
    // lifecycle rule removes them.
    std::vector<SigningQueryParam> abort_query;
    abort_query.push_back({"uploadId", *upload_id});
    auto abort = co_await requests.Prepare(HttpMethod::kDelete, full, std::move(abort_query), "");
    if (abort.ok()) (void)co_await client.Send(std::move(abort).value());
  }
  co_return status;
}

#pragma GCC diagnostic pop

}  // namespace sluice
