#include "engine/dataset/node_file.h"

#include <thread>

#include "base/file.h"
#include "engine/cache/ofd_lock.h"

namespace sluice {
namespace {

// A maker killed mid-write left its temporary beside `path` (base/file.h's
// names). `path`'s temporaries are written only under its lock, which the
// caller holds: each is a dead maker's, even one whose process is still
// exiting (the kernel drops the lock before the process is gone). Others
// in the folder go only when their process is (ConfinedDir::SweepDeadTemps).
void RemoveLeftTemps(const std::string& path, Env* env) {
  const size_t slash = path.rfind('/');
  const std::string folder = slash == std::string::npos ? "." : path.substr(0, slash);
  Result<ConfinedDir> dir = ConfinedDir::Open(folder, env);
  if (!dir.ok()) return;
  const std::string sample = TempPathFor(path, TempOwner{}, 0);  // "<folder>/.<name>.sluice-tmp.0.0.0"
  const std::string prefix = sample.substr(slash == std::string::npos ? 0 : slash + 1,
                                           sample.size() - (slash == std::string::npos ? 0 : slash + 1) - 5);
  if (Result<std::vector<std::string>> names = env->ListFolder(folder); names.ok()) {
    for (const std::string& name : *names) {
      if (name.compare(0, prefix.size(), prefix) == 0 && ParseTempName(name)) (void)dir->Remove(name);
    }
  }
  (void)dir->SweepDeadTemps("");
}

}  // namespace

Status MakeOncePerNode(const std::string& path, const std::string& state_dir,
                       const std::string& lock_name, std::chrono::milliseconds wait_timeout,
                       const std::function<Status()>& make,
                       const std::function<bool()>& current, Env* env) {
  auto made = [&] { return FileExists(path, env) && (!current || current()); };
  if (made()) return Status::Ok();
  SLUICE_RETURN_IF_ERROR(MakeDirs(state_dir, env));
  SLUICE_ASSIGN_OR_RETURN(cache_internal::LockFile lock,
                          cache_internal::LockFile::Open(env, JoinPath(state_dir, lock_name)));
  auto deadline = std::chrono::steady_clock::now() + wait_timeout;
  while (true) {
    SLUICE_ASSIGN_OR_RETURN(bool got, cache_internal::TryLockByte(lock, 0, true));
    if (got) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      return DeadlineExceededError(path + ": timed out after " +
                                   std::to_string(wait_timeout.count()) +
                                   " ms waiting for another process to make it");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  // Holding the lock: another process may have finished meanwhile.
  if (made()) {
    (void)cache_internal::UnlockByte(lock, 0);
    return Status::Ok();
  }
  RemoveLeftTemps(path, env);
  Status status = make();
  (void)cache_internal::UnlockByte(lock, 0);
  return status;
}

}  // namespace sluice
