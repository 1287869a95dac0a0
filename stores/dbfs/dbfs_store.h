// dbfs:/Volumes/<catalog>/<schema>/<volume>/path through the Databricks
// Files API (/api/2.0/fs/files and /api/2.0/fs/directories). Plain local
// paths already cover FUSE-mounted /Volumes/... .
//
// Environment: DATABRICKS_HOST ("https://adb-123.4.azuredatabricks.net";
// "https://" is assumed when no scheme is given) and DATABRICKS_TOKEN (a
// personal access token, sent as a bearer token, never put in error text).
// Missing either -> kPermissionDenied naming it. Other dbfs: paths (the
// legacy DBFS root) -> kUnimplemented.
//
// Put/PutFile upload the whole file in one PUT (?overwrite=true); List walks
// the directories recursively, following next_page_token.
#pragma once

#include <memory>
#include <string_view>

#include <boost/asio/any_io_executor.hpp>

#include "base/status.h"
#include "stores/store.h"

namespace sluice {

Result<std::unique_ptr<Store>> OpenDbfsStore(std::string_view url,
                                             boost::asio::any_io_executor executor,
                                             const StoreOptions& options);

}  // namespace sluice
