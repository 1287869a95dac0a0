// The pages of one column chunk, in order: each header decoded, its stored
// bytes checked against the chunk and against its CRC when the writer
// stored one, and its body decompressed.
//
// Compression as Parquet stores it, through formats/codec: SNAPPY (a raw
// snappy block), GZIP (gzip members), ZSTD (frames), BROTLI (a raw stream);
// LZ4_RAW (one LZ4 block) through the encodings library, and LZ4 (codec 5)
// as parquet-java writes it: Hadoop frames of LZ4 blocks (or, from older
// Arrow writers, one bare block). UNCOMPRESSED bodies are not copied. LZO
// is kUnimplemented.
// Before anything is decompressed the header's uncompressed size is checked
// against PageLimits; the codecs grow their output with what they actually
// produce, and the result must be exactly that size.
//
// Data page v2: the repetition and then definition levels come first and
// are never compressed; the values after them are compressed unless
// is_compressed is false. Data page v1 and dictionary pages are compressed
// whole (v1's levels are inside).
//
// CRC: the standard CRC-32 (zlib's crc32) of the page's bytes as stored
// after its header, compared with the header's crc when present.
//
// Errors name `context` (e.g. "f.parquet: row group 0 column \"ids\"") and
// the page's offset in the file: "<context>: page at offset 1234: ...".
// Page buffer: with ReservePageBuffer, bodies that formats/codec
// decompresses (SNAPPY, GZIP, ZSTD, BROTLI) go back to back into one
// uninitialized buffer the reader allocates at the first such page, instead
// of a zero-filled string per page. A page that does not fit gets its own
// `storage`, as without the buffer. The bytes of the last page stay in the
// buffer only when the caller calls KeepLastPage before the next Next (else
// the next page reuses them); TakePageBuffer hands the buffer over.
//
// Pages in pieces: with DeferSnappyPieces, a SNAPPY data page (v1, or v2
// with its values compressed) encoded PLAIN, or a SNAPPY dictionary page
// (pyarrow keeps a row group's large distinct values, images, in one), whose block is nearly
// incompressible (stored in at least 7/8 of its size) is not decompressed
// but split into pieces (formats/codec/snappy_pieces.h): its body is left
// empty and `pieces` make it, its literals views of the chunk and its
// copies written to `space`, the room for its bytes in the page buffer. The
// caller reads the values in place or calls Materialize, which decompresses
// the page into `space` as Next would have. Needs the page buffer.
//
// Dictionary pages left compressed: with DeferSnappyDictionaries, a SNAPPY
// dictionary page (PLAIN) that is not in pieces is not decompressed either:
// `compressed` is its block, `space` room for its body in the page buffer
// (kept with the page), `left_compressed` is set and `body` empty; the
// caller decompresses as much of it as it needs (formats/codec/
// snappy_prefix.h: a lazy reader's first rows index a few of a dictionary's
// entries) or calls Materialize.
//
// The reader borrows `chunk` (which must outlive it and the pages' views).
// Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "base/status.h"
#include "base/uninitialized_buffer.h"
#include "formats/codec/compression.h"
#include "formats/codec/snappy_pieces.h"
#include "formats/parquet/metadata.h"
#include "formats/parquet/thrift_compact.h"

namespace sluice::parquet {

struct PageLimits {
  uint32_t max_page_bytes = 1u << 30;  // a page's stored or decompressed size
  bool verify_crc = true;
  ThriftLimits thrift;
};

struct Page {
  PageHeader header;
  uint64_t file_offset = 0;  // of its header
  // Data page v2 only: the levels as stored (RLE runs without a length).
  std::string_view repetition_levels;
  std::string_view definition_levels;
  // Dictionary and v1 pages: the whole decompressed body. v2: the values.
  std::string_view body;
  // Owns `body` when it was decompressed outside the page buffer (else it
  // views the chunk or the page buffer).
  std::unique_ptr<std::string> storage;
  bool in_page_buffer = false;  // `body` views the reader's page buffer
  // A page in pieces (DeferSnappyPieces): the decompressed body is these
  // pieces end to end (views of the chunk or of `space`; the span is valid
  // until the next Next), `space` is room for it in the page buffer, and
  // `body` is empty until Materialize. Empty otherwise.
  std::span<const std::string_view> pieces;
  char* space = nullptr;
  uint64_t space_size = 0;     // the body's size
  uint64_t space_used = 0;     // of it, what the pieces hold
  std::string_view compressed;  // the snappy block, for Materialize
  bool left_compressed = false;  // DeferSnappyDictionaries' page: `space` unwritten
};

class PageReader {
 public:
  // `chunk` holds the chunk's bytes, which start at `file_offset` in the file.
  PageReader(std::string_view chunk, uint64_t file_offset, CompressionCodec codec,
             std::string context, PageLimits limits = {})
      : chunk_(chunk), file_offset_(file_offset), codec_(codec),
        context_(std::move(context)), limits_(limits) {}

  // The next page into *page; false at the end of the chunk.
  Result<bool> Next(Page* page);

  // The next page's header only, for a reader that skips pages by their
  // counts: page->header and file_offset, and a v2 page's levels (stored
  // uncompressed); its body is neither checked against its CRC nor
  // decompressed (empty). Index pages are skipped as by Next.
  Result<bool> NextHeader(Page* page);
  // Where the next page starts in the chunk, and back to such a place (a
  // page's start that position() gave): its pages are read again from it.
  size_t position() const { return pos_; }
  void Seek(size_t position) { pos_ = position; }

  // Split nearly incompressible SNAPPY PLAIN data and dictionary pages into pieces rather
  // than decompress them (see "Pages in pieces" above).
  void DeferSnappyPieces() { defer_pieces_ = true; }
  // Leave SNAPPY dictionary pages compressed (see "Dictionary pages left
  // compressed" above).
  void DeferSnappyDictionaries() { defer_dictionaries_ = true; }
  // Decompresses a deferred page (in pieces or left compressed) into its
  // `space` and sets its body, with Next's errors; nothing for any other page.
  Status Materialize(Page* page);

  // "<context>: page at offset <n>"
  std::string Where(uint64_t file_offset) const;

  // Decompress into one buffer of `capacity` bytes (the caller bounds it:
  // it is allocated whole, though untouched bytes cost address space only),
  // mapped in `pages` (UninitializedBuffer::Pages).
  void ReservePageBuffer(uint64_t capacity,
                         UninitializedBuffer::Pages pages = UninitializedBuffer::Pages::kHuge) {
    page_buffer_capacity_ = capacity;
    page_buffer_pages_ = pages;
  }
  // The last page's bytes in the page buffer stay there.
  void KeepLastPage() { unkept_ = 0; }
  // Only the first `bytes` of them stay (a page in pieces: what its space
  // holds); the next page goes after them.
  void KeepLastPage(size_t bytes) {
    used_ = page_start_ + bytes;
    unkept_ = 0;
  }
  // The page buffer (empty when none was needed); the kept pages' views
  // point into it.
  UninitializedBuffer TakePageBuffer() { return std::move(page_buffer_); }
  uint64_t page_buffer_bytes() const { return page_buffer_.size(); }

 private:
  Status Decompress(std::string_view stored, uint64_t size, uint64_t at, Page* page,
                    std::string_view* out);
  Status SizeMismatch(uint64_t produced, uint64_t size, uint64_t at) const;
  Result<bool> NextPage(Page* page, bool body);

  std::string_view chunk_;
  uint64_t file_offset_;
  CompressionCodec codec_;
  std::string context_;
  PageLimits limits_;
  size_t pos_ = 0;
  uint64_t page_buffer_capacity_ = 0;
  UninitializedBuffer::Pages page_buffer_pages_ = UninitializedBuffer::Pages::kHuge;
  UninitializedBuffer page_buffer_;
  size_t used_ = 0;    // bytes of the page buffer in use
  size_t unkept_ = 0;  // of them, the last page's, until KeepLastPage
  size_t before_page_ = 0;
  size_t page_start_ = 0;  // of the last page in the page buffer
  std::optional<Compression> compression_;  // formats/codec's, once needed
  bool defer_pieces_ = false;
  bool defer_dictionaries_ = false;
  SnappyBody pieces_;  // a deferred page's
};

// kUnimplemented for codecs the reader does not decode (LZO, unknown).
Status CheckCodecSupported(CompressionCodec codec);

}  // namespace sluice::parquet
