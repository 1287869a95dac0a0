// hf:// URLs as huggingface_hub's HfFileSystem reads them:
//   hf://[TYPE/]ORG/NAME[@REVISION][/PATH]
// TYPE is "datasets", "spaces" or "models" (none: a model). REVISION is a
// branch, tag or commit, percent-decoded ("refs%2Fconvert%2Fparquet"); the
// special refs "refs/convert/<word>" and "refs/pr/<digits>" may also be
// written with their slashes. Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace sluice {

struct HfRepoPath {
  std::string repo_type;  // "dataset", "space" or "model"
  std::string repo_id;    // "org/name"
  std::string revision;   // decoded; "main" when the URL names none
  std::string path;       // inside the repository: no leading or trailing '/'; "" for its root

  // The URL path segment of the type: "datasets/", "spaces/", "" for models.
  std::string UrlPrefix() const;
};

// Errors (kInvalidArgument naming the URL): not hf://, no "ORG/NAME", an
// empty revision, control characters, '?' or '#', empty, "." or ".." path
// components; buckets and kernels are kUnimplemented.
Result<HfRepoPath> ParseHfUrl(std::string_view url);

}  // namespace sluice
