#include <cstdio>
#include <string>
#include <string_view>

#include "formats/index/index.h"

namespace sluice {

std::string ShardBasename(size_t shard, std::string_view format) {
  char name[32];
  std::snprintf(name, sizeof name, "shard.%05zu.", shard);
  return name + std::string(format);
}

}  // namespace sluice
