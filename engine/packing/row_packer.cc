#include "engine/packing/row_packer.h"

#include <algorithm>
#include <cstring>
#include <numeric>

namespace sluice {

RowPacker::RowPacker(PackSpec spec) : spec_(std::move(spec)) {}

void RowPacker::Add(std::span<const int64_t> tokens) {
  if (spec_.method == PackMethod::kConcat) {
    AddConcat(tokens);
  } else {
    AddBin(tokens);
  }
  ++documents_;
}

void RowPacker::SkipConcat(uint64_t documents, uint64_t tokens) {
  documents_ = documents;
  consumed_ = tokens;
  tokens_in_ = tokens;
}

void RowPacker::AddFrom(std::span<const int64_t> tokens, uint64_t offset) {
  if (offset == 0) {
    Add(tokens);
    return;
  }
  // Nothing is pending here (the skipped tokens end inside this document).
  starts_.push_back({documents_, consumed_ - offset});
  buf_.insert(buf_.end(), tokens.begin() + static_cast<std::ptrdiff_t>(offset), tokens.end());
  if (spec_.eos_id >= 0) buf_.push_back(spec_.eos_id);
  tokens_in_ += tokens.size() - offset + (spec_.eos_id >= 0 ? 1 : 0);
  ++documents_;
}

void RowPacker::AddConcat(std::span<const int64_t> tokens) {
  const size_t with_eos = tokens.size() + (spec_.eos_id >= 0 ? 1 : 0);
  if (with_eos == 0) return;  // nothing of it can start a row
  // Keep the pending tokens at the front: compact once the consumed part
  // outweighs them (amortized O(1) per token).
  if (head_ > 0 && head_ >= buf_.size() - head_) {
    buf_.erase(buf_.begin(), buf_.begin() + static_cast<std::ptrdiff_t>(head_));
    head_ = 0;
  }
  starts_.push_back({documents_, consumed_ + (buf_.size() - head_)});
  buf_.insert(buf_.end(), tokens.begin(), tokens.end());
  if (spec_.eos_id >= 0) buf_.push_back(spec_.eos_id);
  tokens_in_ += with_eos;
}

void RowPacker::AddBin(std::span<const int64_t> tokens) {
  const size_t with_eos = tokens.size() + (spec_.eos_id >= 0 ? 1 : 0);
  const size_t at = window_tokens_.size();
  window_tokens_.insert(window_tokens_.end(), tokens.begin(), tokens.end());
  if (spec_.eos_id >= 0) window_tokens_.push_back(spec_.eos_id);
  tokens_in_ += with_eos;
  // A document longer than a row goes in row-sized pieces.
  for (size_t off = 0; off < with_eos; off += spec_.seq_len) {
    pieces_.push_back({documents_, off, at + off, std::min<size_t>(spec_.seq_len, with_eos - off)});
  }
  if (++window_documents_ == spec_.bin_window) PackWindow();
}

void RowPacker::PackWindow() {
  const size_t n = pieces_.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  // Longest first; ties in the order the pieces came (deterministic).
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return pieces_[a].size > pieces_[b].size; });
  std::vector<std::vector<size_t>> bins;
  std::vector<size_t> room;
  for (size_t p : order) {
    size_t b = 0;
    while (b < bins.size() && room[b] < pieces_[p].size) ++b;  // first fit
    if (b == bins.size()) {
      bins.emplace_back();
      room.push_back(spec_.seq_len);
    }
    bins[b].push_back(p);
    room[b] -= pieces_[p].size;
  }
  const size_t len = spec_.seq_len;
  const int64_t pad = spec_.padding();
  for (size_t b = 0; b < bins.size(); ++b) {
    const size_t base = rows_tokens_.size();
    rows_tokens_.resize(base + len, pad);
    rows_segments_.resize(base + len, 0);
    rows_positions_.resize(base + len, 0);
    size_t at = 0;
    int32_t segment = 0;
    for (size_t p : bins[b]) {
      const Piece& piece = pieces_[p];
      std::memcpy(&rows_tokens_[base + at], &window_tokens_[piece.begin], piece.size * 8);
      ++segment;
      for (size_t i = 0; i < piece.size; ++i) {
        rows_segments_[base + at + i] = segment;
        rows_positions_[base + at + i] = static_cast<int32_t>(i);
      }
      at += piece.size;
    }
    padding_out_ += len - at;
    rows_start_.push_back({pieces_[bins[b][0]].document, pieces_[bins[b][0]].offset});
  }
  pieces_.clear();
  window_tokens_.clear();
  window_documents_ = 0;
}

void RowPacker::Finish() {
  if (finished_) return;
  finished_ = true;
  if (spec_.method == PackMethod::kBin && !pieces_.empty()) PackWindow();
}

size_t RowPacker::ready() const {
  if (spec_.method == PackMethod::kBin) return rows_start_.size() - rows_head_;
  const size_t pending = buf_.size() - head_;
  const size_t full = pending / spec_.seq_len;
  return full + (finished_ && !spec_.drop_last && pending % spec_.seq_len != 0 ? 1 : 0);
}

bool RowPacker::Pop(int64_t* tokens, int32_t* segments, int32_t* positions, RowStart* start) {
  if (spec_.method == PackMethod::kConcat) return PopConcat(tokens, segments, positions, start);
  if (rows_head_ == rows_start_.size()) return false;
  const size_t len = spec_.seq_len;
  const size_t base = rows_head_ * len;
  std::memcpy(tokens, &rows_tokens_[base], len * 8);
  if (segments != nullptr) std::memcpy(segments, &rows_segments_[base], len * 4);
  if (positions != nullptr) std::memcpy(positions, &rows_positions_[base], len * 4);
  if (start != nullptr) *start = rows_start_[rows_head_];
  if (++rows_head_ == rows_start_.size()) {  // every packed row out: start afresh
    rows_tokens_.clear();
    rows_segments_.clear();
    rows_positions_.clear();
    rows_start_.clear();
    rows_head_ = 0;
  }
  return true;
}

bool RowPacker::PopConcat(int64_t* tokens, int32_t* segments, int32_t* positions,
                          RowStart* start) {
  if (ready() == 0) return false;
  const size_t len = spec_.seq_len;
  const size_t take = std::min(len, buf_.size() - head_);
  while (starts_.size() > 1 && starts_[1].first <= consumed_) starts_.pop_front();
  if (start != nullptr) *start = {starts_.front().document, consumed_ - starts_.front().first};
  std::memcpy(tokens, &buf_[head_], take * 8);
  std::fill(tokens + take, tokens + len, spec_.padding());
  padding_out_ += len - take;
  if (segments != nullptr || positions != nullptr) {
    // Documents of this row: each starts at its first token's number.
    int32_t segment = 0;
    size_t d = 0;
    uint64_t piece_first = consumed_;
    for (size_t i = 0; i < take; ++i) {
      const uint64_t t = consumed_ + i;
      if (i == 0 || (d + 1 < starts_.size() && starts_[d + 1].first == t)) {
        if (i != 0) ++d;
        ++segment;
        piece_first = t;
      }
      if (segments != nullptr) segments[i] = segment;
      if (positions != nullptr) positions[i] = static_cast<int32_t>(t - piece_first);
    }
    for (size_t i = take; i < len; ++i) {
      if (segments != nullptr) segments[i] = 0;
      if (positions != nullptr) positions[i] = 0;
    }
  }
  head_ += take;
  consumed_ += take;
  if (head_ == buf_.size()) {
    buf_.clear();
    head_ = 0;
  }
  return true;
}

}  // namespace sluice
