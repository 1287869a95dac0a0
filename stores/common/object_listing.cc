#include "stores/common/object_listing.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "stores/common/xml_lite.h"

namespace sluice {

Status AppendListedObject(std::string_view entry, std::string_view name_tag,
                          std::string_view size_tag, std::string_view base, std::string_view root,
                          std::vector<ObjectInfo>* out) {
  auto name = XmlUnescape(XmlFirst(entry, name_tag));
  if (!name.ok()) return name.status().WithContext(std::string(root) + ": list");
  std::string size_text(XmlFirst(entry, size_tag));
  char* end = nullptr;
  unsigned long long size = std::strtoull(size_text.c_str(), &end, 10);
  if (size_text.empty() || *end != '\0') {
    return CorruptError(std::string(root) + ": list entry '" + *name + "' has " +
                        std::string(size_tag) + " '" + size_text + "'");
  }
  if (name->compare(0, base.size(), base) != 0) return Status::Ok();  // outside the root
  out->push_back({name->substr(base.size()), size});
  return Status::Ok();
}

void SortByKey(std::vector<ObjectInfo>* objects) {
  std::sort(objects->begin(), objects->end(),
            [](const ObjectInfo& a, const ObjectInfo& b) { return a.key < b.key; });
}

}  // namespace sluice
