// dbfs:/Volumes/<catalog>/<schema>/<volume>/path through the Databricks
// Files API (/api/2.0/fs/files and /api/2.0/fs/directories). Plain local
// paths already cover FUSE-mounted /Volumes/... .
//
// The workspace and credentials: Databricks unified authentication
// (stores/credentials/databricks_config.h, databricks_credential.h): the
// environment (DATABRICKS_HOST with DATABRICKS_TOKEN, or with
// DATABRICKS_CLIENT_ID and DATABRICKS_CLIENT_SECRET for OAuth M2M) or a
// ~/.databrickscfg profile; tokens are sent as bearer tokens, never put in
// error text, and OAuth tokens refreshed ahead of expiry. No host or no
// credential -> kPermissionDenied naming what to set. Other dbfs: paths (the
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

// What `sluice whoami` prints for a dbfs:/Volumes/... URL: the host and where
// it came from, the profile read, the credential's source (never a secret)
// and expiry, and every source tried. Fetches the credential (blocking).
Result<std::string> DescribeDbfsAuth(std::string_view url);

}  // namespace sluice
