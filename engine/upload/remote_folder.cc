#include "engine/upload/remote_folder.h"

#include <optional>
#include <utility>

#include "engine/runtime/event_loop.h"

namespace sluice {

Result<std::unique_ptr<RemoteFolder>> RemoteFolder::Open(const std::string& url,
                                                         const StoreOptions& options) {
  auto store = OpenStore(url, EventLoop::ForThisProcess().executor(), options);
  if (!store.ok()) return store.status();
  std::unique_ptr<RemoteFolder> folder(new RemoteFolder());
  folder->store_ = std::move(*store);
  return folder;
}

RemoteFolder::~RemoteFolder() = default;

Result<std::string> RemoteFolder::Read(const std::string& key) {
  return EventLoop::ForThisProcess().Run(store_->Get(key));
}

Status RemoteFolder::ReadToFile(const std::string& key, const std::string& path) {
  return EventLoop::ForThisProcess().Run(store_->GetToFile(key, path, std::nullopt));
}

Status RemoteFolder::Write(const std::string& key, std::string bytes) {
  return EventLoop::ForThisProcess().Run(store_->Put(key, std::move(bytes)));
}

Result<std::vector<std::string>> RemoteFolder::List(const std::string& prefix) {
  auto listed = EventLoop::ForThisProcess().Run(store_->List(prefix));
  if (!listed.ok()) return listed.status();
  std::vector<std::string> keys;
  keys.reserve(listed->size());
  for (ObjectInfo& info : *listed) keys.push_back(std::move(info.key));
  return keys;
}

}  // namespace sluice
