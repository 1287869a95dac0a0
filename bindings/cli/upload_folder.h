// Uploads a dataset written into a local folder to a store URL.
#pragma once

#include <string>

#include "base/status.h"

namespace sluice::cli {

// Puts every file under local `folder` to the store at `url` (any scheme
// OpenStore writes to), keys relative to the folder; index.json goes last,
// so that a reader never sees an index naming shards not uploaded yet.
// Errors name the object's URL (secrets redacted) and stop at the first.
// Blocks the calling thread (runs on this process's event loop).
Status UploadFolder(const std::string& folder, const std::string& url);

}  // namespace sluice::cli
