#include "tests/formats/mds/shard_bytes.h"

#include "base/file.h"
#include "formats/codec/compression.h"
#include "tests/formats/mds/compat_util.h"

namespace sluice::testing {

Result<std::string> LoadShardBytes(std::string_view dataset, const ShardEntry& entry) {
  const std::string dir = MdsDataDir(dataset);
  if (!entry.zip_data) return ReadFile(JoinPath(dir, entry.raw_data.basename));
  if (!entry.compression) return CorruptError("zip_data without compression");
  SLUICE_ASSIGN_OR_RETURN(Compression c, ParseCompression(*entry.compression));
  SLUICE_ASSIGN_OR_RETURN(std::string packed, ReadFile(JoinPath(dir, entry.zip_data->basename)));
  return Decompress(c, packed, entry.raw_data.bytes, entry.zip_data->basename);
}

}  // namespace sluice::testing
