#include "stores/s3/s3_listing.h"

#include "base/asio/co_status.h"
#include "stores/common/object_listing.h"

namespace sluice {

boost::asio::awaitable<Status> ListObjectsV2Sequence(const S3Requests& requests,
                                                     HttpClient& client, int page_size,
                                                     const std::string& prefix,
                                                     std::vector<ObjectInfo>* objects,
                                                     std::vector<std::string>* sub_prefixes) {
  const std::string& store_prefix = requests.config().prefix;
  std::string base = store_prefix.empty() ? "" : store_prefix + "/";
  std::string token;
  for (int page = 0;; ++page) {
    std::vector<SigningQueryParam> query;
    query.push_back({"list-type", "2"});
    if (!token.empty()) query.push_back({"continuation-token", token});
    if (sub_prefixes != nullptr) query.push_back({"delimiter", "/"});
    if (page_size > 0) query.push_back({"max-keys", std::to_string(page_size)});
    query.push_back({"prefix", base + prefix});
    SLUICE_CO_ASSIGN_OR_RETURN(HttpRequest req, co_await requests.Prepare(HttpMethod::kGet, "",
                                                                          std::move(query), ""));
    auto resp = co_await client.Send(std::move(req));
    if (!resp.ok()) co_return requests.Context(resp.status(), prefix);
    SLUICE_CO_ASSIGN_OR_RETURN(token,
                               ReadXmlListingPage(kListObjectsV2Dialect, resp->body, page, token, base,
                                                  requests.root(), objects, sub_prefixes));
    if (token.empty()) co_return Status::Ok();
  }
}

}  // namespace sluice
