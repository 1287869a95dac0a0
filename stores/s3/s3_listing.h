// S3's ListObjectsV2, one sequence of pages at a time: the unit that
// ListTree (stores/common/tree_listing.h) runs per folder when it lists a
// store's tree. Used by the S3 store (stores/s3 only).
#pragma once

#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "base/status.h"
#include "stores/http/http_client.h"
#include "stores/s3/s3_requests.h"
#include "stores/store.h"

namespace sluice {

// Every page of the ListObjectsV2 sequence for the store-relative `prefix`
// (see ListSequence in stores/common/tree_listing.h): objects into *objects,
// and, when `sub_prefixes` is not null, the folders one level down into it
// (delimiter "/"). `page_size` > 0 asks for that many keys per page.
// Errors: the request's with the prefix as context; kCorrupt for a page
// that does not parse (ReadXmlListingPage). Runs on `client`'s executor;
// `requests` and `client` must outlive the awaitable.
boost::asio::awaitable<Status> ListObjectsV2Sequence(const S3Requests& requests,
                                                     HttpClient& client, int page_size,
                                                     const std::string& prefix,
                                                     std::vector<ObjectInfo>* objects,
                                                     std::vector<std::string>* sub_prefixes);

}  // namespace sluice
