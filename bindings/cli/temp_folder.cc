#include "bindings/cli/temp_folder.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>

#include <cerrno>
#include <cstring>

namespace sluice::cli {
namespace {

int RemoveEntry(const char* path, const struct stat*, int, struct FTW*) {
  ::remove(path);
  return 0;  // keep going: remove what can be removed
}

}  // namespace

Result<std::unique_ptr<TempFolder>> TempFolder::Create() {
  const char* tmpdir = std::getenv("TMPDIR");
  std::string parent = tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp";
  std::string pattern = parent + "/sluice-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    return IoError("cannot create a temporary folder in " + parent + ": " +
                   std::strerror(errno));
  }
  return std::unique_ptr<TempFolder>(new TempFolder(std::move(pattern)));
}

TempFolder::~TempFolder() {
  // Children first (FTW_DEPTH); links are removed, never followed (FTW_PHYS).
  ::nftw(path_.c_str(), RemoveEntry, 16, FTW_DEPTH | FTW_PHYS);
}

}  // namespace sluice::cli
