#include "engine/dataset/opened_shard.h"

namespace sluice {

Result<std::unique_ptr<OpenedShard>> OpenedShard::Open(const ShardEntry* entry, size_t num_columns,
                                                       ShardPin data_pin, MappedFile data,
                                                       ShardPin meta_pin, MappedFile meta) {
  std::unique_ptr<OpenedShard> s(new OpenedShard());
  s->entry_ = entry;
  s->data_pin_ = std::move(data_pin);
  s->meta_pin_ = std::move(meta_pin);
  s->data_ = std::move(data);
  s->meta_ = std::move(meta);
  SLUICE_ASSIGN_OR_RETURN(s->view_, ShardView::Open(*entry, s->data_.data(), s->meta_.data()));
  (void)num_columns;
  return s;
}

std::shared_ptr<const OpenedShard> OpenedShard::Skipped() {
  static const std::shared_ptr<const OpenedShard> skipped(new OpenedShard());
  return skipped;
}

Status OpenedShard::Read(uint32_t i, const std::vector<std::string>& column_names,
                         SampleFields* out) const {
  return view_.Read(i, column_names, out);
}

}  // namespace sluice
