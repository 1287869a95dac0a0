#include "tests/formats/mds/shard_bytes.h"

#include "base/file.h"
#include "tests/formats/mds/compat_util.h"

namespace sluice::testing {

Result<std::string> LoadShardBytes(std::string_view dataset, const ShardEntry& entry) {
  if (entry.zip_data) {
    return UnimplementedError("compressed shards need formats/codec");
  }
  return ReadFile(JoinPath(MdsDataDir(dataset), entry.raw_data.basename));
}

}  // namespace sluice::testing
