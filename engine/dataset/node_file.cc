#include "engine/dataset/node_file.h"

#include <thread>

#include "base/file.h"
#include "engine/cache/ofd_lock.h"

namespace sluice {

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
  // A maker killed mid-write left its temporary beside `path`, named by its
  // process (base/file.h): removed by this next maker.
  const size_t slash = path.rfind('/');
  if (Result<ConfinedDir> dir = ConfinedDir::Open(slash == std::string::npos ? "." : path.substr(0, slash), env);
      dir.ok()) {
    (void)dir->SweepDeadTemps("");
  }
  Status status = make();
  (void)cache_internal::UnlockByte(lock, 0);
  return status;
}

}  // namespace sluice
