#include "bindings/cli/bench/scratch_folder.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace sluice::bench {

Result<ScratchFolder> ScratchFolder::Create(const std::string& prefix) {
  const char* tmp = std::getenv("TMPDIR");
  std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/" + prefix + "XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) {
    return IoError("cannot create a scratch folder from " + tmpl + ": " + std::strerror(errno));
  }
  return ScratchFolder(tmpl);
}

ScratchFolder::~ScratchFolder() {
  std::error_code ec;
  if (!path_.empty()) std::filesystem::remove_all(path_, ec);
}

}  // namespace sluice::bench
