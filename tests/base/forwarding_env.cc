#include "tests/base/forwarding_env.h"

namespace sluice::testing {

Result<OwnedFd> ForwardingEnv::Open(const FsPath& file, OpenMode mode,
                                    const OpenOptions& options) {
  return base_->Open(file, mode, options);
}

Result<size_t> ForwardingEnv::Read(int fd, std::string_view path, char* buf, size_t size) {
  return base_->Read(fd, path, buf, size);
}

Result<size_t> ForwardingEnv::PRead(int fd, std::string_view path, char* buf, size_t size,
                                    uint64_t offset) {
  return base_->PRead(fd, path, buf, size, offset);
}

Result<size_t> ForwardingEnv::Write(int fd, std::string_view path, std::string_view data) {
  return base_->Write(fd, path, data);
}

Result<size_t> ForwardingEnv::PWrite(int fd, std::string_view path, std::string_view data,
                                     uint64_t offset) {
  return base_->PWrite(fd, path, data, offset);
}

Status ForwardingEnv::Sync(int fd, std::string_view path, bool data_only) {
  return base_->Sync(fd, path, data_only);
}

Status ForwardingEnv::Truncate(int fd, std::string_view path, uint64_t size) {
  return base_->Truncate(fd, path, size);
}

Result<struct stat> ForwardingEnv::StatOpen(int fd, std::string_view path) {
  return base_->StatOpen(fd, path);
}

Status ForwardingEnv::Touch(int fd, std::string_view path) { return base_->Touch(fd, path); }

Result<MappedFile> ForwardingEnv::Map(int fd, std::string_view path) {
  return base_->Map(fd, path);
}

Result<SharedMap> ForwardingEnv::MapShared(int fd, std::string_view path, uint64_t size) {
  return base_->MapShared(fd, path, size);
}

Result<bool> ForwardingEnv::TryLockByte(int fd, std::string_view path, off_t byte,
                                        bool exclusive) {
  return base_->TryLockByte(fd, path, byte, exclusive);
}

Status ForwardingEnv::UnlockByte(int fd, std::string_view path, off_t byte) {
  return base_->UnlockByte(fd, path, byte);
}

Result<struct stat> ForwardingEnv::Stat(const FsPath& file, bool follow_links) {
  return base_->Stat(file, follow_links);
}

Status ForwardingEnv::Rename(const FsPath& from, const FsPath& to) {
  return base_->Rename(from, to);
}

Status ForwardingEnv::Remove(const FsPath& file) { return base_->Remove(file); }

Status ForwardingEnv::MakeFolder(const FsPath& folder, mode_t perms) {
  return base_->MakeFolder(folder, perms);
}

Result<OwnedFd> ForwardingEnv::OpenFolder(const FsPath& folder, bool follow_links) {
  return base_->OpenFolder(folder, follow_links);
}

Result<std::vector<std::string>> ForwardingEnv::ListFolder(const FsPath& folder) {
  return base_->ListFolder(folder);
}

}  // namespace sluice::testing
