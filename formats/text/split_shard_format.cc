#include "formats/text/split_shard_format.h"

#include <cstdint>

#include "formats/text/split_shard_builder.h"

namespace sluice {

Status SplitShardFormat::Configure(ShardEntry* entry) {
  // The core has set version, compression, hashes (sorted) and size_limit;
  // each format declares only its own fields, the others stay unset.
  entry->format = declared_.format;
  entry->columns = declared_.columns;
  entry->column_names = declared_.column_names;
  entry->column_encodings = declared_.column_encodings;
  entry->newline = declared_.newline;
  entry->separator = declared_.separator;
  if (header_.size() > UINT32_MAX) {
    return InvalidArgumentError("header line longer than 4 GiB - 1");
  }
  SLUICE_ASSIGN_OR_RETURN(config_json_, SerializeShardConfig(*entry));
  return Status::Ok();
}

Result<ShardFiles> SplitShardFormat::BuildShard(const ShardSamples& samples) const {
  SplitShardBuilder builder(header_);
  for (size_t i = 0; i < samples.count(); ++i) {
    SLUICE_RETURN_IF_ERROR(builder.AddLine(samples.sample(i)));
  }
  SplitShardFiles files = builder.Finish(config_json_);
  return ShardFiles{std::move(files.data), std::move(files.meta)};
}

}  // namespace sluice
