// Token packing's rows from a sequence of documents: pure logic, no I/O
// (PackedIteration feeds it one worker's samples in their planned order).
// Deterministic: the rows depend on the documents and the spec only.
// Not thread-safe (one owner).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <span>
#include <vector>

#include "engine/packing/pack_spec.h"

namespace sluice {

// Where a row's first token comes from: the document (its place in the
// order documents were added, from 0) and the token's offset in that
// document's tokens (its eos_id counted as its last token).
struct RowStart {
  uint64_t document = 0;
  uint64_t offset = 0;
  bool operator==(const RowStart&) const = default;
};

class RowPacker {
 public:
  explicit RowPacker(PackSpec spec);

  // Adds the next document (numbered by the calls, from 0). Concat: its
  // tokens and eos_id follow the previous document's. Bin: a window of
  // bin_window documents is packed when it is full.
  void Add(std::span<const int64_t> tokens);
  // The next document's tokens as they are, no eos_id added: a piece of a
  // document (an elastic resume's item, pack_segments.h), its eos included
  // when it is the document's last piece.
  void AddPiece(std::span<const int64_t> tokens);
  // Concat only, before any Add: the first `documents` documents, `tokens`
  // tokens in all (eos included), went into rows that are not handed out
  // (a resume passes over them), so numbering goes on from there.
  void SkipConcat(uint64_t documents, uint64_t tokens);
  // Concat: adds the next document from its token `offset` on (<= its
  // size: the eos only when equal): the rest of a document whose start a
  // resume passed over, numbered as if whole.
  void AddFrom(std::span<const int64_t> tokens, uint64_t offset);
  // Bin only: the rows a window of documents of these sizes (tokens, eos
  // included) packs into: what Add and Pop would hand out for them, from
  // their sizes alone (a resume counts whole skipped windows with it).
  static size_t BinWindowRows(std::span<const uint64_t> sizes, uint64_t seq_len);
  // Bin only: the rows of such a window, in the order Pop hands them out,
  // each its pieces in placement order: the document (its index in
  // `sizes`), the piece's first token in it and its size.
  struct BinPiece {
    size_t document;
    uint64_t offset, size;
    bool operator==(const BinPiece&) const = default;
  };
  static std::vector<std::vector<BinPiece>> BinWindow(std::span<const uint64_t> sizes,
                                                      uint64_t seq_len);
  // Numbering only: `documents` documents went into rows a resume passed
  // over (bin: whole windows, BinWindowRows), so numbering goes on from there.
  void SkipDocuments(uint64_t documents) { documents_ += documents; }
  // No more documents: the last window (bin) or the last partial row
  // (concat without drop_last, padded with pad_id) becomes rows.
  void Finish();

  // Rows ready to Pop.
  size_t ready() const;
  // Writes the next ready row: `tokens` (seq_len ids), and when not null
  // `segments` (1, 2, .. for each document piece in the row, 0 for padding)
  // and `positions` (each token's place in its piece, 0 for padding). For
  // concat, segments and positions follow the documents too (a row's first
  // piece may begin mid-document: its positions start at 0 in the row).
  // False when no row is ready.
  bool Pop(int64_t* tokens, int32_t* segments, int32_t* positions, RowStart* start);

  // Tokens of documents added (eos included) and padding handed out so far.
  uint64_t tokens_in() const { return tokens_in_; }
  uint64_t padding_out() const { return padding_out_; }

 private:
  struct Piece {
    uint64_t document, offset;  // RowStart of the piece's first token
    size_t begin, size;         // in window_tokens_
  };
  // `eos`: eos_id follows the tokens.
  void AddConcat(std::span<const int64_t> tokens, bool eos);
  void AddBin(std::span<const int64_t> tokens, bool eos);
  bool PopConcat(int64_t* tokens, int32_t* segments, int32_t* positions, RowStart* start);
  void PackWindow();

  PackSpec spec_;
  uint64_t documents_ = 0;
  bool finished_ = false;
  uint64_t tokens_in_ = 0, padding_out_ = 0;

  // Concat: the tokens not yet in a row are buf_[head_..); `consumed_` is
  // the number of tokens before buf_[head_] since the start; starts_ are the
  // documents whose tokens are still in buf_, with their first token's
  // number.
  std::vector<int64_t> buf_;
  size_t head_ = 0;
  uint64_t consumed_ = 0;
  struct DocStart { uint64_t document, first; };
  std::deque<DocStart> starts_;

  // Bin: the filling window's pieces and tokens, and the packed windows
  // whose rows are not all popped (each row is written out at Pop, from
  // its window's tokens: no staging copy).
  std::vector<Piece> pieces_;
  std::vector<int64_t> window_tokens_;
  uint64_t window_documents_ = 0;
  struct PackedWindow {
    std::vector<Piece> pieces;
    std::vector<int64_t> tokens;
    std::vector<std::vector<size_t>> bins;  // piece indexes per row, in placement order
    size_t next = 0;                         // the next row to pop
  };
  std::deque<PackedWindow> packed_;
  size_t packed_rows_ = 0;  // rows not popped, over packed_
};

}  // namespace sluice
