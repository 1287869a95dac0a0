#include "engine/dataset/opened_shard.h"

#include <algorithm>
#include <cstring>

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

Result<std::unique_ptr<OpenedShard>> OpenedShard::OpenRanged(ShardEntry entry,
                                                             std::string_view head,
                                                             SpanReader read_span,
                                                             SpansReader read_spans) {
  std::unique_ptr<OpenedShard> s(new OpenedShard());
  s->entry_ = std::make_unique<const ShardEntry>(std::move(entry));
  const ShardEntry& e = *s->entry_;
  const ShardFormatDescriptor* format = FindShardFormat(e.format);
  if (format == nullptr || format->peek == nullptr || e.raw_meta ||
      head.size() > e.raw_data.bytes) {
    return InvalidArgumentError("'" + e.raw_data.basename +
                                "' cannot be read by ranged reads of its samples");
  }
  SLUICE_ASSIGN_OR_RETURN(ShardBytes room,
                          ShardBytes::Allocate(e.raw_data.bytes, e.raw_data.basename));
  std::memcpy(room.Room(), head.data(), head.size());
  auto ranged = std::make_unique<Ranged>();
  ranged->read_span = std::move(read_span);
  ranged->read_spans = std::move(read_spans);
  ranged->hooks = format->peek;
  ranged->room = room.Room();
  ranged->head_bytes = head.size();
  ranged->filled.assign(e.samples, false);
  // The whole file's size, so that the reader's checks of its offsets
  // hold; only the head and the samples FillRanged read are ever viewed.
  room.Received(e.raw_data.bytes);
  s->held_data_ = std::move(room);
  s->ranged_ = std::move(ranged);
  SLUICE_ASSIGN_OR_RETURN(s->view_, ShardView::Open(e, s->held_data_.view(), {}));
  return s;
}

Result<DataSpan> OpenedShard::RangedSpan(uint32_t i) const {
  const Ranged& r = *ranged_;
  const DataSpan bounds = r.hooks->bounds_at(i);
  const std::string& name = entry_->raw_data.basename;
  if (bounds.offset + bounds.length > r.head_bytes) {
    return CorruptError(name + ": sample " + std::to_string(i) +
                        "'s bounds lie past the head kept");
  }
  const std::string_view bounds_bytes(r.room + bounds.offset, bounds.length);
  return r.hooks->sample_span(*entry_, i, bounds_bytes, name);
}

size_t OpenedShard::FillAhead(const std::vector<uint32_t>& samples) const {
  if (!ranged_ || !ranged_->read_spans) return 0;
  Ranged& r = *ranged_;
  std::lock_guard<std::mutex> lock(r.mu);
  // The samples not yet read, by where their bytes lie.
  std::vector<std::pair<DataSpan, uint32_t>> wanted;
  for (const uint32_t i : samples) {
    if (i >= r.filled.size() || r.filled[i]) continue;
    Result<DataSpan> span = RangedSpan(i);
    // Read reports a bad bound; an empty sample has nothing to read.
    if (!span.ok() || span->length == 0 || span->offset < r.head_bytes ||
        span->offset + span->length > entry_->raw_data.bytes) {
      continue;
    }
    wanted.emplace_back(*span, i);
  }
  if (wanted.empty()) return 0;
  std::sort(wanted.begin(), wanted.end(), [](const auto& a, const auto& b) {
    return a.first.offset < b.first.offset;
  });
  // Neighbours within kNearBytes share a span; groups[k]: wanted's range.
  std::vector<DataSpan> spans;
  std::vector<std::pair<size_t, size_t>> groups;
  for (size_t k = 0; k < wanted.size(); ++k) {
    const DataSpan& w = wanted[k].first;
    if (!spans.empty()) {
      DataSpan& last = spans.back();
      const uint64_t end = last.offset + last.length;
      if (w.offset >= end && w.offset - end <= kNearBytes) {
        last.length = w.offset + w.length - last.offset;
        groups.back().second = k + 1;
        continue;
      }
      if (w.offset < end) continue;  // overlaps (a malformed table): Read's
    }
    spans.push_back(w);
    groups.emplace_back(k, k + 1);
  }
  std::vector<Result<std::string>> got = r.read_spans(spans);
  for (size_t s = 0; s < spans.size() && s < got.size(); ++s) {
    if (!got[s].ok() || got[s]->size() != spans[s].length) continue;  // left for Read
    for (size_t k = groups[s].first; k < groups[s].second; ++k) {
      const DataSpan& w = wanted[k].first;
      std::memcpy(r.room + w.offset, got[s]->data() + (w.offset - spans[s].offset), w.length);
      r.filled[wanted[k].second] = true;
    }
  }
  return spans.size();
}

Status OpenedShard::FillRanged(uint32_t i) const {
  Ranged& r = *ranged_;
  if (i >= r.filled.size()) return Status::Ok();  // the reader's own error
  std::lock_guard<std::mutex> lock(r.mu);
  if (r.filled[i]) return Status::Ok();
  const std::string& name = entry_->raw_data.basename;
  SLUICE_ASSIGN_OR_RETURN(const DataSpan span, RangedSpan(i));
  if (span.length > 0) {
    SLUICE_ASSIGN_OR_RETURN(const std::string bytes, r.read_span(i, span));
    if (bytes.size() != span.length) {
      return CorruptError(name + ": the read of sample " + std::to_string(i) + " (bytes " +
                          std::to_string(span.offset) + "-" +
                          std::to_string(span.offset + span.length - 1) + ") answered " +
                          std::to_string(bytes.size()) + " bytes");
    }
    std::memcpy(r.room + span.offset, bytes.data(), bytes.size());
  }
  r.filled[i] = true;
  return Status::Ok();
}

std::shared_ptr<const OpenedShard> OpenedShard::Skipped() {
  static const std::shared_ptr<const OpenedShard> skipped(new OpenedShard());
  return skipped;
}

Status OpenedShard::Read(uint32_t i, const std::vector<std::string>& column_names,
                         SampleFields* out) const {
  if (on_disk()) ReadAhead(i);
  if (ranged_) SLUICE_RETURN_IF_ERROR(FillRanged(i));
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
