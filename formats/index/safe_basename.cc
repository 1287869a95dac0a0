#include <string_view>

#include "formats/index/index.h"

namespace sluice {

bool IsSafeBasename(std::string_view basename) {
  if (basename.empty() || basename.front() == '/') return false;
  if (basename.find('\0') != std::string_view::npos) return false;
  if (basename.find('\\') != std::string_view::npos) return false;
  size_t start = 0;
  while (start <= basename.size()) {
    size_t end = basename.find('/', start);
    if (end == std::string_view::npos) end = basename.size();
    if (basename.substr(start, end - start) == "..") return false;
    start = end + 1;
  }
  return true;
}

}  // namespace sluice
