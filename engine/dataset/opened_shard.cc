#include "engine/dataset/opened_shard.h"

#include "formats/dataset/format_descriptor.h"

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
  // Before the reader reads the header: a shard of one sample (a raw file)
  // is read whole, which the kernel's read-around serves best.
  if (entry->samples > 1 && !s->data_.Resident()) {
    s->on_disk_ = true;
    s->data_.AdviseRandom();
    auto format = ShardFormatOf(*entry);
    if (format.ok() && (*format)->head_bytes != nullptr) {
      s->data_.WillNeed(s->data_.data().substr(0, (*format)->head_bytes(*entry, s->data_.size())));
    }
  }
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
  if (on_disk()) ReadAhead(i);
  return view_.Read(i, column_names, out);
}

void OpenedShard::Populate() const {
  if (data_.Populate()) on_disk_.store(false, std::memory_order_relaxed);
  meta_.Populate();
}

void OpenedShard::ReadAhead(uint32_t i) const {
  if (const MdsShardReader* mds = view_.mds()) {
    auto bytes = mds->SampleBytes(i);
    if (bytes.ok()) data_.WillNeed(*bytes);
  }
}

}  // namespace sluice
