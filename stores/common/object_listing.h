// The parts of a paged XML listing (S3's ListObjectsV2 <Contents>, Azure's
// List Blobs <Blob>) that every lister handles alike. Pure functions.
#pragma once

#include <string_view>
#include <vector>

#include "base/status.h"
#include "stores/store.h"

namespace sluice {

// Reads one listing entry: the object's name from element `name_tag` and its
// size from `size_tag`. Appends it to *out, named relative to the store's
// root, when the name starts with `base` (the root's path inside the bucket
// plus '/', or ""); names outside are skipped. kCorrupt naming `root` and
// the entry when the name is malformed or the size is not a number.
Status AppendListedObject(std::string_view entry, std::string_view name_tag,
                          std::string_view size_tag, std::string_view base, std::string_view root,
                          std::vector<ObjectInfo>* out);

// Sorts by key (Store::List's order).
void SortByKey(std::vector<ObjectInfo>* objects);

}  // namespace sluice
