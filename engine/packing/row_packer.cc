#include "engine/packing/row_packer.h"

#include <algorithm>
#include <cstring>
#include <numeric>

namespace sluice {
namespace {

// Bin packing's rule, one owner for packing (AddBin, PackWindow) and for
// counting (BinWindowRows): a document of `with_eos` tokens goes in pieces
// of at most a row, `each(offset, size)` per piece.
template <typename Each>
void ForEachBinPiece(uint64_t with_eos, uint64_t seq_len, Each each) {
  for (uint64_t off = 0; off < with_eos; off += seq_len) each(off, std::min(seq_len, with_eos - off));
}

// A window's pieces (their sizes) first-fit decreasing: longest first, ties
// in the order they came, each into the first row with room. The piece
// indexes per row, rows in the order they were opened.
std::vector<std::vector<size_t>> FirstFitDecreasing(const std::vector<size_t>& sizes,
                                                    size_t seq_len) {
  std::vector<size_t> order(sizes.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return sizes[a] > sizes[b]; });
  std::vector<std::vector<size_t>> bins;
  std::vector<size_t> room;
  for (size_t p : order) {
    size_t b = 0;
    while (b < bins.size() && room[b] < sizes[p]) ++b;  // first fit
    if (b == bins.size()) {
      bins.emplace_back();
      room.push_back(seq_len);
    }
    bins[b].push_back(p);
    room[b] -= sizes[p];
  }
  return bins;
}

}  // namespace

size_t RowPacker::BinWindowRows(std::span<const uint64_t> sizes, uint64_t seq_len) {
  std::vector<size_t> pieces;
  for (uint64_t with_eos : sizes) {
    ForEachBinPiece(with_eos, seq_len, [&](uint64_t, uint64_t size) { pieces.push_back(size); });
  }
  return FirstFitDecreasing(pieces, seq_len).size();
}

std::vector<std::vector<RowPacker::BinPiece>> RowPacker::BinWindow(std::span<const uint64_t> sizes,
                                                                   uint64_t seq_len) {
  std::vector<BinPiece> pieces;
  for (size_t d = 0; d < sizes.size(); ++d) {
    ForEachBinPiece(sizes[d], seq_len,
                    [&](uint64_t off, uint64_t size) { pieces.push_back({d, off, size}); });
  }
  std::vector<size_t> piece_sizes(pieces.size());
  for (size_t p = 0; p < pieces.size(); ++p) piece_sizes[p] = pieces[p].size;
  std::vector<std::vector<BinPiece>> rows;
  for (const auto& bin : FirstFitDecreasing(piece_sizes, seq_len)) {
    auto& row = rows.emplace_back();
    for (size_t p : bin) row.push_back(pieces[p]);
  }
  return rows;
}

RowPacker::RowPacker(PackSpec spec) : spec_(std::move(spec)) {}

void RowPacker::Add(std::span<const int64_t> tokens) {
  if (spec_.method == PackMethod::kConcat) {
    AddConcat(tokens, spec_.eos_id >= 0);
  } else {
    AddBin(tokens, spec_.eos_id >= 0);
  }
  ++documents_;
}

void RowPacker::AddPiece(std::span<const int64_t> tokens) {
  if (spec_.method == PackMethod::kConcat) {
    AddConcat(tokens, false);
  } else {
    AddBin(tokens, false);
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

void RowPacker::AddConcat(std::span<const int64_t> tokens, bool eos) {
  const size_t with_eos = tokens.size() + (eos ? 1 : 0);
  if (with_eos == 0) return;  // nothing of it can start a row
  // Keep the pending tokens at the front: compact once the consumed part
  // outweighs them (amortized O(1) per token).
  if (head_ > 0 && head_ >= buf_.size() - head_) {
    buf_.erase(buf_.begin(), buf_.begin() + static_cast<std::ptrdiff_t>(head_));
    head_ = 0;
  }
  starts_.push_back({documents_, consumed_ + (buf_.size() - head_)});
  buf_.insert(buf_.end(), tokens.begin(), tokens.end());
  if (eos) buf_.push_back(spec_.eos_id);
  tokens_in_ += with_eos;
}

void RowPacker::AddBin(std::span<const int64_t> tokens, bool eos) {
  const size_t with_eos = tokens.size() + (eos ? 1 : 0);
  const size_t at = window_tokens_.size();
  window_tokens_.insert(window_tokens_.end(), tokens.begin(), tokens.end());
  if (eos) window_tokens_.push_back(spec_.eos_id);
  tokens_in_ += with_eos;
  ForEachBinPiece(with_eos, spec_.seq_len, [&](uint64_t off, uint64_t size) {
    pieces_.push_back({documents_, off, at + off, size});
  });
  if (++window_documents_ == spec_.bin_window) PackWindow();
}

void RowPacker::PackWindow() {
  std::vector<size_t> sizes(pieces_.size());
  for (size_t p = 0; p < pieces_.size(); ++p) sizes[p] = pieces_[p].size;
  std::vector<std::vector<size_t>> bins = FirstFitDecreasing(sizes, spec_.seq_len);
  packed_rows_ += bins.size();
  PackedWindow& w = packed_.emplace_back();
  w.pieces.swap(pieces_);
  w.tokens.swap(window_tokens_);
  w.bins = std::move(bins);
  window_documents_ = 0;
}

void RowPacker::Finish() {
  if (finished_) return;
  finished_ = true;
  if (spec_.method == PackMethod::kBin && !pieces_.empty()) PackWindow();
}

size_t RowPacker::ready() const {
  if (spec_.method == PackMethod::kBin) return packed_rows_;
  const size_t pending = buf_.size() - head_;
  const size_t full = pending / spec_.seq_len;
  return full + (finished_ && !spec_.drop_last && pending % spec_.seq_len != 0 ? 1 : 0);
}

bool RowPacker::Pop(int64_t* tokens, int32_t* segments, int32_t* positions, RowStart* start) {
  if (spec_.method == PackMethod::kConcat) return PopConcat(tokens, segments, positions, start);
  if (packed_rows_ == 0) return false;
  PackedWindow& w = packed_.front();
  const std::vector<size_t>& bin = w.bins[w.next];
  const size_t len = spec_.seq_len;
  size_t at = 0;
  int32_t segment = 0;
  for (size_t p : bin) {
    const Piece& piece = w.pieces[p];
    std::memcpy(tokens + at, &w.tokens[piece.begin], piece.size * 8);
    ++segment;
    if (segments != nullptr) std::fill(segments + at, segments + at + piece.size, segment);
    if (positions != nullptr) std::iota(positions + at, positions + at + piece.size, int32_t{0});
    at += piece.size;
  }
  std::fill(tokens + at, tokens + len, spec_.padding());
  if (segments != nullptr) std::fill(segments + at, segments + len, 0);
  if (positions != nullptr) std::fill(positions + at, positions + len, 0);
  padding_out_ += len - at;
  if (start != nullptr) *start = {w.pieces[bin[0]].document, w.pieces[bin[0]].offset};
  --packed_rows_;
  if (++w.next == w.bins.size()) {
    // Reuse the window's buffers for the next one being filled.
    if (window_tokens_.empty() && w.tokens.capacity() > window_tokens_.capacity()) {
      w.tokens.clear();
      window_tokens_.swap(w.tokens);
    }
    packed_.pop_front();
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
