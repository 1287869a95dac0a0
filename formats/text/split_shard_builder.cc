#include "formats/text/split_shard_builder.h"

#include <utility>

#include "formats/text/split_meta.h"

namespace sluice {

SplitShardBuilder::SplitShardBuilder(std::string header)
    : header_(std::move(header)), data_(header_),
      offsets_{static_cast<uint32_t>(header_.size())} {}

Status SplitShardBuilder::AddLine(std::string_view line) {
  if (line.size() > UINT32_MAX - data_.size()) {
    return InvalidArgumentError("split shard data file would exceed 4 GiB - 1 (" +
                                std::to_string(data_.size()) + " + " +
                                std::to_string(line.size()) +
                                " bytes); u32 offsets cannot address it");
  }
  data_.append(line);
  offsets_.push_back(static_cast<uint32_t>(data_.size()));
  return Status::Ok();
}

SplitShardFiles SplitShardBuilder::Finish(std::string_view config_json) {
  SplitShardFiles files;
  files.meta = EncodeSplitMeta(offsets_, config_json);
  files.data = std::exchange(data_, header_);
  offsets_.assign(1, static_cast<uint32_t>(header_.size()));
  return files;
}

}  // namespace sluice
