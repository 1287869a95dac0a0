#include "engine/packing/packed_iteration.h"

#include <algorithm>
#include <unordered_map>

namespace sluice {
namespace {

// Samples asked of the dataset per call (it may give fewer).
constexpr size_t kSamplesPerFeed = 64;

Status WithSample(const Status& st, int64_t id, size_t shard) {
  return Status(st.code(), st.message() + " (sample " + std::to_string(id) + ", shard " +
                               std::to_string(shard) + ")",
                st.os_error());
}

}  // namespace

Result<std::unique_ptr<PackedIteration>> PackedIteration::Make(StreamingDataset* dataset,
                                                               PackSpec spec) {
  const auto& names = dataset->column_names();
  const auto it = std::find(names.begin(), names.end(), spec.column);
  if (it == names.end()) {
    std::string have;
    for (const auto& n : names) have += (have.empty() ? "" : ", ") + n;
    return InvalidArgumentError("token packing: the dataset has no column '" + spec.column +
                                "' (its columns: " + have + ")");
  }
  std::unique_ptr<PackedIteration> p(new PackedIteration(dataset, std::move(spec)));
  p->column_ = static_cast<size_t>(it - names.begin());
  p->decoders_.resize(dataset->num_streams());
  for (size_t s = 0; s < dataset->num_streams(); ++s) {
    const std::string& format = dataset->stream_format(s);
    if (format.empty() || !dataset->columns().StreamHas(s, p->column_)) continue;
    const std::string& encoding = dataset->stream_column_encodings(s)[p->column_];
    auto d = TokenDecoder::For(format, encoding, p->spec_.column, p->spec_.bytes_dtype);
    if (!d.ok()) {
      return InvalidArgumentError(d.status().message() + " (stream " + std::to_string(s) + ")");
    }
    p->decoders_[s] = std::move(d).value();
  }
  return p;
}

Status PackedIteration::Begin(int64_t epoch, int64_t worker, int64_t num_workers,
                              uint64_t skip_rows) {
  SLUICE_RETURN_IF_ERROR(ds_->IterBegin(epoch, 0, worker, num_workers));
  packer_ = std::make_unique<RowPacker>(spec_);
  from_items_ = false;
  items_.clear();
  done_ = false;
  rows_ = 0;
  last_start_ = {};
  if (spec_.method == PackMethod::kConcat) return SkipConcat(skip_rows);
  return SkipBin(skip_rows);
}

Status PackedIteration::SkipBin(uint64_t rows) {
  if (rows == 0) return Status::Ok();
  const uint64_t eos = spec_.eos_id >= 0 ? 1 : 0;
  std::vector<int64_t> window;  // the ids of the window being counted
  std::vector<uint64_t> sizes;  // and their sizes (eos included)
  // Packs the counted window from its ids (Get: their shards were just read).
  auto replay = [&]() -> Status {
    for (int64_t id : window) {
      SLUICE_RETURN_IF_ERROR(ds_->Get(static_cast<uint64_t>(id), &got_));
      SLUICE_ASSIGN_OR_RETURN(const TokenDecoder* decoder, DecoderOf(id, got_.where.shard));
      SLUICE_RETURN_IF_ERROR(AddDocument(*decoder, got_.fields[column_], id, got_.where.shard));
    }
    return Status::Ok();
  };
  uint64_t passed = 0;  // rows of the windows passed over
  while (true) {
    ids_.resize(kSamplesPerFeed);
    SLUICE_ASSIGN_OR_RETURN(size_t n, ds_->NextBatch(kSamplesPerFeed, ids_.data(), &fields_));
    if (n == 0) {  // the epoch's last window (partial) or nothing left
      if (!window.empty() && passed + RowPacker::BinWindowRows(sizes, spec_.seq_len) > rows) {
        SLUICE_RETURN_IF_ERROR(replay());
      } else {
        packer_->SkipDocuments(window.size());
      }
      packer_->Finish();
      done_ = true;
      break;
    }
    for (size_t k = 0; k < n; ++k) {
      SLUICE_ASSIGN_OR_RETURN(const TokenDecoder* decoder, DecoderOf(ids_[k], fields_[k].where.shard));
      const std::string_view field = fields_[k].fields[column_];
      const size_t shard = fields_[k].where.shard;
      if (passed == rows || sizes.size() == spec_.bin_window) {
        // Packing again (the target window is in): the rest as it comes.
        SLUICE_RETURN_IF_ERROR(AddDocument(*decoder, field, ids_[k], shard));
        continue;
      }
      auto count = decoder->Count(field.data(), field.size());
      if (!count.ok()) return WithSample(count.status(), ids_[k], shard);
      window.push_back(ids_[k]);
      sizes.push_back(*count + eos);
      if (sizes.size() < spec_.bin_window) continue;
      const size_t window_rows = RowPacker::BinWindowRows(sizes, spec_.seq_len);
      if (passed + window_rows <= rows) {  // wholly before the target: counted only
        passed += window_rows;
        packer_->SkipDocuments(window.size());
        window.clear();
        sizes.clear();
        continue;
      }
      SLUICE_RETURN_IF_ERROR(replay());  // the target row is in this window
    }
    ds_->Release();
    if (passed == rows || sizes.size() == spec_.bin_window) break;
  }
  // Pop the rows of the replayed window before the target.
  std::vector<int64_t> scratch(spec_.seq_len);
  uint64_t at = passed;
  while (at < rows && packer_->Pop(scratch.data(), nullptr, nullptr, &last_start_)) ++at;
  rows_ = rows;
  return Status::Ok();
}

Status PackedIteration::Decode(const TokenDecoder& decoder, std::string_view field, int64_t id,
                               size_t shard) {
  doc_.clear();
  Status st = decoder.Append(field.data(), field.size(), &doc_);
  return st.ok() ? st : WithSample(st, id, shard);
}

Status PackedIteration::AddDocument(const TokenDecoder& decoder, std::string_view field,
                                    int64_t id, size_t shard, uint64_t from) {
  SLUICE_RETURN_IF_ERROR(Decode(decoder, field, id, shard));
  packer_->AddFrom(doc_, from);
  return Status::Ok();
}

Result<const TokenDecoder*> PackedIteration::DecoderOf(int64_t id, size_t shard) const {
  const size_t stream = ds_->stream_of_shard(shard);
  if (!decoders_[stream]) {
    return InvalidArgumentError("token packing: sample " + std::to_string(id) +
                                " of stream " + std::to_string(stream) + " has no column '" +
                                spec_.column + "'");
  }
  return &*decoders_[stream];
}

Status PackedIteration::SkipConcat(uint64_t rows) {
  rows_ = rows;
  if (rows == 0) return Status::Ok();
  const uint64_t eos = spec_.eos_id >= 0 ? 1 : 0;
  const uint64_t target = rows * spec_.seq_len;  // rows a resume counted: far below 2^40
  const uint64_t last_row_at = target - spec_.seq_len;
  uint64_t tokens = 0, documents = 0;
  bool reached = false;  // the skipped rows' tokens are all passed over
  while (!reached) {
    ids_.resize(kSamplesPerFeed);
    SLUICE_ASSIGN_OR_RETURN(size_t n, ds_->NextBatch(kSamplesPerFeed, ids_.data(), &fields_));
    if (n == 0) {  // the epoch had no more rows than were handed out
      packer_->SkipConcat(documents, tokens);
      packer_->Finish();
      done_ = true;
      return Status::Ok();
    }
    for (size_t k = 0; k < n; ++k) {
      SLUICE_ASSIGN_OR_RETURN(const TokenDecoder* decoder, DecoderOf(ids_[k], fields_[k].where.shard));
      const std::string_view field = fields_[k].fields[column_];
      const size_t shard = fields_[k].where.shard;
      if (reached) {  // packed as they come
        SLUICE_RETURN_IF_ERROR(AddDocument(*decoder, field, ids_[k], shard));
        continue;
      }
      auto count = decoder->Count(field.data(), field.size());
      if (!count.ok()) return WithSample(count.status(), ids_[k], shard);
      const uint64_t size = *count + eos;
      if (size > 0 && tokens <= last_row_at && last_row_at < tokens + size) {
        last_start_ = {documents, last_row_at - tokens};
      }
      if (tokens + size <= target) {  // wholly in skipped rows
        tokens += size;
        ++documents;
        if (tokens == target) {
          packer_->SkipConcat(documents, tokens);
          reached = true;
        }
        continue;
      }
      // The next row starts inside this document.
      packer_->SkipConcat(documents, target);
      SLUICE_RETURN_IF_ERROR(AddDocument(*decoder, field, ids_[k], shard, target - tokens));
      reached = true;
    }
    ds_->Release();
  }
  return Status::Ok();
}

Result<std::vector<std::vector<PackItem>>> PackedIteration::LastSegmentItems(
    int64_t epoch, const std::vector<PackSegment>& segments, const DocTokens& tokens) {
  const PackSegment& first = segments.front();
  SLUICE_ASSIGN_OR_RETURN(auto planned, ds_->ShapeWorkerIds(epoch, first.nodes,
                                                            first.ranks_per_node, first.workers,
                                                            first.batch_size));
  std::vector<std::vector<PackItem>> items(planned.size());
  for (size_t r = 0; r < planned.size(); ++r) {
    items[r].reserve(planned[r].size());
    for (int64_t id : planned[r]) items[r].push_back({id, 0});
  }
  for (size_t k = 0; k + 1 < segments.size(); ++k) {
    const auto workers = static_cast<size_t>(segments[k].workers);
    std::vector<std::vector<PackItem>> left(items.size());
    for (size_t rank = 0; rank * workers < items.size(); ++rank) {
      const auto rank_items = items.begin() + static_cast<std::ptrdiff_t>(rank * workers);
      SLUICE_ASSIGN_OR_RETURN(
          const std::vector<uint64_t> totals,
          RankTotals(segments[k], {rank_items, rank_items + static_cast<std::ptrdiff_t>(workers)},
                     tokens));
      const std::vector<uint64_t> consumed = RankRoleRows(segments[k], totals);
      for (size_t w = 0; w < workers; ++w) {
        const size_t r = rank * workers + w;
        SLUICE_ASSIGN_OR_RETURN(left[r], Leftover(items[r], consumed[w], spec_, tokens));
      }
    }
    items = ShareLeftovers(left, segments[k + 1].roles());
  }
  return items;
}

Result<std::vector<uint64_t>> PackedIteration::RankTotals(
    const PackSegment& segment, std::span<const std::vector<PackItem>> roles,
    const DocTokens& tokens) {
  // Each role's rows, counted up to what the DataLoader dealt it while no
  // role ran out; all of them when one did (the epoch's tail).
  std::vector<uint64_t> totals(roles.size());
  bool ran_out = false;
  const auto ranks = static_cast<uint64_t>(segment.nodes * segment.ranks_per_node);
  for (size_t w = 0; w < roles.size(); ++w) {
    const uint64_t naive = WorkerRows(segment.rows / ranks, uint64_t(segment.batch_size), w,
                                      roles.size());
    SLUICE_ASSIGN_OR_RETURN(totals[w], ItemRows(roles[w], naive, spec_, tokens));
    ran_out |= totals[w] < naive;
  }
  for (size_t w = 0; ran_out && w < roles.size(); ++w) {
    SLUICE_ASSIGN_OR_RETURN(totals[w], ItemRows(roles[w], UINT64_MAX, spec_, tokens));
  }
  return totals;
}

DocTokens PackedIteration::CountingTokens(std::unordered_map<int64_t, uint64_t>* counted) {
  return [this, counted](int64_t id) -> Result<uint64_t> {
    if (auto it = counted->find(id); it != counted->end()) return it->second;
    SLUICE_ASSIGN_OR_RETURN(const uint64_t n, TokensOf(id));
    counted->emplace(id, n);
    return n;
  };
}

Result<PackResumePoint> PackedIteration::SegmentsResumePoint(
    int64_t epoch, const std::vector<PackSegment>& segments, int64_t rank, int64_t worker) {
  if (segments.empty()) return InvalidArgumentError("token packing: no segments");
  const PackSegment& last = segments.back();
  if (rank < 0 || rank >= last.nodes * last.ranks_per_node || worker < 0 ||
      worker >= last.workers) {
    return InvalidArgumentError("token packing: rank " + std::to_string(rank) + " worker " +
                                std::to_string(worker) + " is not in the last segment's " +
                                std::to_string(last.nodes * last.ranks_per_node) + " ranks of " +
                                std::to_string(last.workers) + " workers");
  }
  const auto workers = static_cast<size_t>(last.workers);
  if (last.rows == 0) return PackResumePoint{uint64_t(rank) * workers + uint64_t(worker), 0};
  std::unordered_map<int64_t, uint64_t> counted;  // token counts read so far
  const DocTokens tokens = CountingTokens(&counted);
  SLUICE_ASSIGN_OR_RETURN(const auto items, LastSegmentItems(epoch, segments, tokens));
  const auto mine = items.begin() + static_cast<std::ptrdiff_t>(size_t(rank) * workers);
  SLUICE_ASSIGN_OR_RETURN(
      const std::vector<uint64_t> totals,
      RankTotals(last, {mine, mine + static_cast<std::ptrdiff_t>(workers)}, tokens));
  ds_->Release();
  const uint64_t rank_rows = last.rows / static_cast<uint64_t>(last.nodes * last.ranks_per_node);
  PackResumePoint at =
      TailResumePoint(totals, rank_rows, uint64_t(last.batch_size), uint64_t(worker));
  at.role += uint64_t(rank) * workers;
  return at;
}

Status PackedIteration::BeginSegments(int64_t epoch, const std::vector<PackSegment>& segments,
                                      int64_t role, uint64_t skip_rows) {
  if (segments.empty() || role < 0 || role >= segments.back().roles()) {
    return InvalidArgumentError("token packing: role " + std::to_string(role) +
                                " is not one of the last segment's " +
                                std::to_string(segments.empty() ? 0 : segments.back().roles()));
  }
  std::unordered_map<int64_t, uint64_t> counted;  // token counts read so far
  const DocTokens tokens = CountingTokens(&counted);
  SLUICE_ASSIGN_OR_RETURN(auto items, LastSegmentItems(epoch, segments, tokens));
  // This role's rows after its first skip_rows: concat packs on from the
  // token the next row starts at (the same rows follow); bin packs again
  // from the window that holds that row and drops its rows before it.
  std::vector<PackItem>& mine = items[static_cast<size_t>(role)];
  uint64_t drop = 0;
  if (spec_.method == PackMethod::kConcat) {
    SLUICE_ASSIGN_OR_RETURN(items_, ConcatLeftover(mine, skip_rows, spec_.seq_len,
                                                   spec_.eos_id >= 0, tokens));
  } else {
    SLUICE_ASSIGN_OR_RETURN(const BinSkip skip, BinSkipOf(mine, skip_rows, spec_, tokens));
    items_.assign(mine.begin() + static_cast<std::ptrdiff_t>(skip.item), mine.end());
    drop = skip.rows;
  }
  ds_->Release();
  packer_ = std::make_unique<RowPacker>(spec_);
  from_items_ = true;
  next_item_ = 0;
  done_ = false;
  rows_ = 0;
  last_start_ = {};
  if (drop > 0) {
    std::vector<int64_t> scratch(spec_.seq_len);
    for (uint64_t k = 0; k < drop; ++k) {
      SLUICE_ASSIGN_OR_RETURN(size_t n, Next(1, scratch.data(), nullptr, nullptr));
      if (n == 0) break;
    }
  }
  rows_ = skip_rows;
  return Status::Ok();
}

Result<uint64_t> PackedIteration::CountRows(int64_t epoch, int64_t worker, int64_t num_workers,
                                            uint64_t cap) {
  SLUICE_RETURN_IF_ERROR(Begin(epoch, worker, num_workers, 0));
  std::vector<int64_t> scratch(spec_.seq_len * 16);
  while (rows_ < cap) {
    SLUICE_ASSIGN_OR_RETURN(size_t n, Next(std::min<uint64_t>(16, cap - rows_), scratch.data(),
                                           nullptr, nullptr));
    if (n == 0) break;
  }
  return rows_;
}

Result<PackResumePoint> PackedIteration::ResumePointIn(int64_t epoch, uint64_t rank_rows,
                                                       uint64_t batch_size, int64_t worker,
                                                       int64_t num_workers) {
  if (batch_size == 0 || worker < 0 || worker >= num_workers) {
    return InvalidArgumentError("token packing: a resume point needs batch_size > 0 and worker " +
                                std::to_string(worker) + " < " + std::to_string(num_workers));
  }
  const auto workers = static_cast<uint64_t>(num_workers);
  if (workers == 1 || rank_rows == 0) return ResumePoint(rank_rows, batch_size, uint64_t(worker), workers);
  std::vector<uint64_t> totals(workers);
  bool ran_out = false;
  for (uint64_t w = 0; w < workers; ++w) {
    const uint64_t naive = WorkerRows(rank_rows, batch_size, w, workers);
    SLUICE_ASSIGN_OR_RETURN(totals[w], CountRows(epoch, int64_t(w), num_workers, naive));
    ran_out |= totals[w] < naive;
  }
  for (uint64_t w = 0; ran_out && w < workers; ++w) {
    SLUICE_ASSIGN_OR_RETURN(totals[w], CountRows(epoch, int64_t(w), num_workers, UINT64_MAX));
  }
  return TailResumePoint(totals, rank_rows, batch_size, uint64_t(worker));
}

Result<uint64_t> PackedIteration::TokensOf(int64_t id) {
  SLUICE_RETURN_IF_ERROR(ds_->Get(static_cast<uint64_t>(id), &got_));
  SLUICE_ASSIGN_OR_RETURN(const TokenDecoder* decoder, DecoderOf(id, got_.where.shard));
  const std::string_view field = got_.fields[column_];
  auto count = decoder->Count(field.data(), field.size());
  if (!count.ok()) return WithSample(count.status(), id, got_.where.shard);
  return *count;
}

Result<bool> PackedIteration::FeedItems() {
  if (next_item_ == items_.size()) return false;
  const size_t end = std::min(items_.size(), next_item_ + kSamplesPerFeed);
  for (; next_item_ < end; ++next_item_) {
    const PackItem& item = items_[next_item_];
    SLUICE_RETURN_IF_ERROR(ds_->Get(static_cast<uint64_t>(item.id), &got_));
    SLUICE_ASSIGN_OR_RETURN(const TokenDecoder* decoder, DecoderOf(item.id, got_.where.shard));
    SLUICE_RETURN_IF_ERROR(Decode(*decoder, got_.fields[column_], item.id, got_.where.shard));
    // The item's tokens (its document's eos counted as the last) go on
    // as a document of their own.
    if (spec_.eos_id >= 0) doc_.push_back(spec_.eos_id);
    const size_t to = std::min<uint64_t>(item.end, doc_.size());
    const size_t from = std::min<uint64_t>(item.offset, to);
    packer_->AddPiece(std::span<const int64_t>(doc_).subspan(from, to - from));
  }
  ds_->Release();
  return true;
}

Result<bool> PackedIteration::Feed() {
  if (from_items_) return FeedItems();
  ids_.resize(kSamplesPerFeed);
  SLUICE_ASSIGN_OR_RETURN(size_t n, ds_->NextBatch(kSamplesPerFeed, ids_.data(), &fields_));
  if (n == 0) return false;
  for (size_t k = 0; k < n; ++k) {
    const SampleFields& sample = fields_[k];
    SLUICE_ASSIGN_OR_RETURN(const TokenDecoder* decoder, DecoderOf(ids_[k], sample.where.shard));
    SLUICE_RETURN_IF_ERROR(AddDocument(*decoder, sample.fields[column_], ids_[k], sample.where.shard));
  }
  ds_->Release();
  return true;
}

Result<size_t> PackedIteration::Next(size_t max, int64_t* tokens, int32_t* segments,
                                     int32_t* positions) {
  if (!packer_) return InvalidArgumentError("token packing: Next before Begin");
  const size_t len = spec_.seq_len;
  size_t got = 0;
  while (got < max) {
    if (packer_->Pop(tokens + got * len, segments ? segments + got * len : nullptr,
                     positions ? positions + got * len : nullptr, &last_start_)) {
      ++got;
      ++rows_;
      continue;
    }
    if (done_) break;
    SLUICE_ASSIGN_OR_RETURN(bool more, Feed());
    if (!more) {
      packer_->Finish();
      done_ = true;
    }
  }
  return got;
}

}  // namespace sluice
