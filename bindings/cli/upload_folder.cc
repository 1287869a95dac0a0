#include "bindings/cli/upload_folder.h"

#include <algorithm>

#include "base/file.h"
#include "engine/runtime/event_loop.h"
#include "stores/store.h"

namespace sluice::cli {

Status UploadFolder(const std::string& folder, const std::string& url) {
  EventLoop& loop = EventLoop::ForThisProcess();
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<Store> local, OpenStore(folder, loop.executor()));
  SLUICE_ASSIGN_OR_RETURN(std::vector<ObjectInfo> files, loop.Run(local->List("")));
  std::stable_partition(files.begin(), files.end(),
                        [](const ObjectInfo& f) { return f.key != "index.json"; });
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<Store> remote, OpenStore(url, loop.executor()));
  for (const ObjectInfo& f : files) {
    SLUICE_RETURN_IF_ERROR(loop.Run(remote->PutFile(f.key, JoinPath(folder, f.key))));
  }
  return Status::Ok();
}

}  // namespace sluice::cli
