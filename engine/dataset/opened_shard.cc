#include "engine/dataset/opened_shard.h"

#include <algorithm>

#include "formats/dataset/format_descriptor.h"

namespace sluice {

Result<std::unique_ptr<OpenedShard>> OpenedShard::Open(ShardEntry entry_value, size_t num_columns,
                                                       ShardPin data_pin, MappedFile data,
                                                       ShardPin meta_pin, MappedFile meta,
                                                       bool consumer_waits) {
  std::unique_ptr<OpenedShard> s(new OpenedShard());
  s->entry_ = std::make_unique<const ShardEntry>(std::move(entry_value));
  const ShardEntry* entry = s->entry_.get();
  s->data_pin_ = std::move(data_pin);
  s->meta_pin_ = std::move(meta_pin);
  s->data_ = std::move(data);
  s->meta_ = std::move(meta);
  // Before the reader reads the header. Formats without head_bytes (the
  // split formats, a raw file: one sample) keep the kernel's read-around.
  auto format = ShardFormatOf(*entry);
  if (format.ok() && (*format)->head_bytes != nullptr && entry->samples > 1 &&
      !s->data_.Resident()) {
    s->on_disk_ = true;
    s->data_.AdviseRandom();
    s->data_.WillNeed(s->data_.data().substr(0, (*format)->head_bytes(*entry, s->data_.size())));
  }
  SLUICE_ASSIGN_OR_RETURN(s->view_, ShardView::Open(*entry, s->data_.data(), s->meta_.data(),
                                                    consumer_waits));
  (void)num_columns;
  return s;
}

Result<std::unique_ptr<OpenedShard>> OpenedShard::OpenInMemory(ShardEntry entry, ShardBytes data,
                                                               ShardBytes meta) {
  std::unique_ptr<OpenedShard> s(new OpenedShard());
  s->entry_ = std::make_unique<const ShardEntry>(std::move(entry));
  s->held_data_ = std::move(data);
  s->held_meta_ = std::move(meta);
  SLUICE_ASSIGN_OR_RETURN(s->view_, ShardView::Open(*s->entry_, s->held_data_.view(),
                                                     s->held_meta_.view()));
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

void OpenedShard::EndOnDisk() const {
  if (on_disk_.exchange(false, std::memory_order_relaxed)) data_.AdviseReadAround();
}

void OpenedShard::ReadAhead(uint32_t i) const {
  const MdsShardReader* mds = view_.mds();
  if (mds == nullptr) return;
  auto bytes = mds->SampleBytes(i);
  if (!bytes.ok()) return;
  // At least kReadAheadBytes from the sample on, and nothing already asked
  // for: samples read in order (small ones many to a page) then cost one
  // request per kReadAheadBytes, not one per page, and no call each.
  const uint64_t begin = static_cast<uint64_t>(bytes->data() - data_.data().data());
  const uint64_t end = begin + bytes->size();
  if (begin >= asked_begin_.load(std::memory_order_relaxed) &&
      end <= asked_end_.load(std::memory_order_relaxed)) {
    return;
  }
  const uint64_t until = std::min<uint64_t>(data_.size(), std::max(end, begin + kReadAheadBytes));
  data_.WillNeed(data_.data().substr(begin, until - begin));
  asked_begin_.store(begin, std::memory_order_relaxed);  // a race only asks again
  asked_end_.store(until, std::memory_order_relaxed);
}

}  // namespace sluice
