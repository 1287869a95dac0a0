#include "engine/cache/state_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "base/file.h"

namespace sluice {
namespace {

// mkdir that accepts an existing folder, then checks what is there with
// lstat: a folder (not a link), and, when `owner_only`, this user's with no
// access for others. A refusal says how to go elsewhere: in a shared /tmp
// another user can take this user's folder name first.
Status PrivateFolder(const std::string& path, bool owner_only, Env* env) {
  const std::string elsewhere = " (SLUICE_CACHE_STATE_DIR chooses another place)";
  SLUICE_RETURN_IF_ERROR(env->MakeFolder(path, 0700));
  SLUICE_ASSIGN_OR_RETURN(struct stat st, env->Stat(path, /*follow_links=*/false));
  if (!S_ISDIR(st.st_mode)) {
    return InvalidArgumentError("cache state folder " + path +
                                " is not a folder (a symbolic link or a file is refused)" + elsewhere);
  }
  if (owner_only && (st.st_uid != ::getuid() || (st.st_mode & 077) != 0)) {
    return InvalidArgumentError("cache state folder " + path +
                                " must belong to this user with no access for others (mode 0700)" +
                                elsewhere);
  }
  return Status::Ok();
}

// Where the per-user folders go: SLUICE_CACHE_STATE_DIR when set (it must
// be absolute: a relative one would differ between processes with different
// working folders), else $TMPDIR, else /tmp.
Result<std::string> StateRoot() {
  if (const char* chosen = std::getenv("SLUICE_CACHE_STATE_DIR"); chosen != nullptr) {
    if (chosen[0] != '/') {
      return InvalidArgumentError("SLUICE_CACHE_STATE_DIR must be an absolute path, not '" +
                                  std::string(chosen) + "'");
    }
    return std::string(chosen);
  }
  const char* env = std::getenv("TMPDIR");
  return std::string(env != nullptr && env[0] == '/' ? env : "/tmp");
}

}  // namespace

Result<std::string> CacheStateDir(const std::string& root, Env* env) {
  auto stat = env->Stat(root);
  if (!stat.ok()) return ErrnoStatus("cannot stat cache folder", root, stat.status().os_error());
  const struct stat st = *stat;
  if (!S_ISDIR(st.st_mode)) return InvalidArgumentError("cache folder " + root + " is not a folder");
  SLUICE_ASSIGN_OR_RETURN(std::string state_root, StateRoot());
  const std::string user = JoinPath(state_root, "sluice-" + std::to_string(::getuid()));
  SLUICE_RETURN_IF_ERROR(PrivateFolder(user, true, env));
  const std::string dir =
      JoinPath(user, std::to_string(uint64_t(st.st_dev)) + "-" + std::to_string(uint64_t(st.st_ino)));
  SLUICE_RETURN_IF_ERROR(PrivateFolder(dir, false, env));
  return dir;
}

}  // namespace sluice
