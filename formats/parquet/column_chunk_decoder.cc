#include "formats/parquet/column_chunk_decoder.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "formats/codec/snappy_prefix.h"
#include "formats/parquet/encoding/plain.h"
#include "formats/parquet/encoding/plain_pieces.h"
#include "formats/parquet/encoding/rle_bit_packed.h"
#include "formats/parquet/level_assembler.h"
#include "formats/parquet/value_decoder.h"

namespace sluice::parquet {
namespace {

int LevelBitWidth(int16_t max_level) {
  return max_level == 0 ? 0 : std::bit_width(static_cast<uint32_t>(max_level));
}

class ChunkDecoder {
 public:
  ChunkDecoder(const FileFooter& footer, size_t row_group, size_t field, std::string_view chunk,
               std::string_view file, const ColumnDecodeOptions& options)
      : footer_(footer), rg_(row_group), field_(footer.schema.fields[field]),
        leaf_(footer.schema.leaves[field_.first_leaf]),
        meta_(footer.chunk(row_group, field_.first_leaf)), chunk_(chunk), options_(options),
        context_(std::string(file) + ": row group " + std::to_string(row_group) + " column \"" +
                 leaf_.path + "\""),
        pages_(chunk, footer.chunk_ranges[row_group][field_.first_leaf].offset, meta_.codec,
               context_, options.pages) {}

  // The checks and reservations before any page; then, when first_row > 0,
  // the pages wholly before that row's are skipped (SkipTo). `cursor`: a
  // ColumnChunkCursor's, which may leave its dictionary page compressed.
  Status Start(uint64_t first_row, bool cursor) {
    const ByteRange range = footer_.chunk_ranges[rg_][field_.first_leaf];
    if (chunk_.size() != range.size) {
      return InvalidArgumentError(context_ + ": given " + std::to_string(chunk_.size()) +
                                  " bytes of a chunk of " + std::to_string(range.size));
    }
    SLUICE_RETURN_IF_ERROR(CheckCodecSupported(meta_.codec).WithContext(context_));
    if (static_cast<uint64_t>(meta_.num_values) > options_.max_level_entries) {
      return OutOfRangeError(context_ + ": " + std::to_string(meta_.num_values) +
                             " values, more than the limit of " +
                             std::to_string(options_.max_level_entries));
    }
    out_.leaf = leaf_;
    out_.width = FixedWidth(leaf_);
    // At most one leaf slot per level entry (bounded just above): one
    // allocation instead of a doubling vector's copies; and the slots never
    // move, so the rows decoded are read while later pages are decoded.
    out_.validity.reserve(static_cast<size_t>(meta_.num_values));
    if (out_.width == 0) out_.binary.reserve(static_cast<size_t>(meta_.num_values));
    // A cursor's buffers (the first-row peek's, a resumption's first shard's)
    // are sized for the chunk but written a page at a time, its first row
    // first: in 2 MiB pages that row paid a fresh huge page's zeroing, 12-28
    // ms of kernel CPU instead of ~1.7 in about 1 cold peek of 7 (issue 35,
    // BENCHMARKS.md peek35w), so they are mapped in 4 KiB pages as written.
    buffer_pages_ = cursor ? UninitializedBuffer::Pages::kSmall : UninitializedBuffer::Pages::kHuge;
    pages_.ReservePageBuffer(PageBufferBytes(), buffer_pages_);
    // Byte arrays of snappy pages of incompressible values are read where
    // they lie in the chunk, not copied out (DataPage's `pieces`).
    if (out_.width == 0 && meta_.codec == CompressionCodec::kSnappy) pages_.DeferSnappyPieces();
    if (cursor && out_.width == 0 && meta_.codec == CompressionCodec::kSnappy &&
        options_.lazy_dictionary_step_levels > 0) {
      pages_.DeferSnappyDictionaries();
    }
    assembler_.emplace(field_, leaf_, &out_);
    if (!out_.lists.empty()) {
      // The outer list has a slot per row: room for them at once, not
      // grown by doubling (a copy and fresh pages each time). The rows
      // are untrusted: at most one per level entry.
      const uint64_t rows = std::min(static_cast<uint64_t>(std::max<int64_t>(
                                         footer_.meta.row_groups[rg_].num_rows, 0)),
                                     static_cast<uint64_t>(meta_.num_values));
      out_.lists[0].offsets.reserve(static_cast<size_t>(rows) + 1);
      out_.lists[0].validity.reserve(static_cast<size_t>(rows));
    }
    return first_row > 0 ? SkipTo(first_row) : Status::Ok();
  }

  // The chunk's rows [first_row_, EndRow()) are whole in out_.
  uint64_t EndRow() const {
    const uint64_t rows = out_.num_rows;
    // A list's last row may go on in the next page.
    if (done_ || leaf_.max_repetition_level == 0) return first_row_ + rows;
    return first_row_ + (rows > 0 ? rows - 1 : 0);
  }

  // Decodes pages until the chunk's row `row` is whole (or the chunk ends).
  Status DecodeThrough(uint64_t row) {
    if (!failed_.ok()) return failed_;
    // A row ahead (a lazy read): a page of dictionary-encoded fixed-width
    // values a step of levels at a time; to the chunk's end: whole pages.
    step_ = row == UINT64_MAX || options_.lazy_step_levels == 0
                ? SIZE_MAX
                : static_cast<size_t>(options_.lazy_step_levels);
    binary_step_ = row == UINT64_MAX ? SIZE_MAX
                                     : static_cast<size_t>(options_.lazy_dictionary_step_levels);
    bool decoded = false;
    while (!done_ && EndRow() <= row) {
      Status s = open_page_ ? ContinuePage() : NextPage();
      if (!s.ok()) return failed_ = s;
      decoded = true;
    }
    if (decoded && !done_) {
      Status s = FindPendingByteArrays();
      if (!s.ok()) return failed_ = s;
    }
    return Status::Ok();
  }

  uint64_t first_row() const { return first_row_; }
  bool done() const { return done_; }
  const ColumnBuffer& buffer() const { return out_; }
  size_t data_pages() const { return data_pages_; }
  uint64_t levels_decoded() const { return assembler_ ? assembler_->levels_seen() : 0; }
  uint64_t dictionary_bytes_decompressed() const {
    return lazy_dictionary_ ? lazy_dictionary_->produced() : dictionary_whole_;
  }
  uint64_t HeldBytes() const {
    return out_.HeldBytes() + (done_ ? 0 : pages_.page_buffer_bytes() + values_.size());
  }
  ColumnBuffer Take() { return std::move(out_); }

 private:
  // One page decoded (or the chunk's end checked: done_).
  Status NextPage() {
    Result<bool> more = pages_.Next(&page_);
    // An earlier page's fault comes first (its values are found late).
    if (!more.ok()) return FirstOf(FindPendingByteArrays(), more.status());
    if (!*more) return Finish();
    return Decode(page_);
  }

  Status Decode(Page& page) {
    const std::string where = pages_.Where(page.file_offset);
    const bool data = page.header.type != PageType::kDictionaryPage;
    Status s = data ? DataPage(page, *assembler_) : DictionaryPage(page);
    if (!s.ok()) {
      return FirstOf(FindPendingByteArrays(),
                     s.message().rfind(context_, 0) == 0 ? s : s.WithContext(where));
    }
    if (data) ++data_pages_;
    out_.null_count = out_.validity.size() - static_cast<size_t>(assembler_->present_slots());
    return Status::Ok();
  }

  Status Finish() {
    SLUICE_RETURN_IF_ERROR(FindPendingByteArrays());
    // A dictionary left compressed is checked whole, as if decoded at its page.
    SLUICE_RETURN_IF_ERROR(WholeDictionary());
    if (entries_ != static_cast<uint64_t>(meta_.num_values)) {
      return CorruptError(context_ + ": the pages hold " + std::to_string(entries_) +
                          " values, the chunk's metadata says " + std::to_string(meta_.num_values));
    }
    const uint64_t rows = static_cast<uint64_t>(footer_.meta.row_groups[rg_].num_rows);
    if (first_row_ + out_.num_rows != rows) {
      return CorruptError(context_ + ": the pages hold " + std::to_string(first_row_ + out_.num_rows) +
                          " rows, the row group " + std::to_string(rows));
    }
    out_.null_count = out_.validity.size() - static_cast<size_t>(assembler_->present_slots());
    // The bytes do not move with their buffers: views stay valid.
    out_.pages = pages_.TakePageBuffer();
    out_.values = std::move(values_);
    done_ = true;
    return Status::Ok();
  }

  // Starts decoding at the last page before `row`'s that starts a row: the
  // dictionary page is decoded, the data pages before that one are only
  // counted, by their headers (a flat column's values are its rows) or, for
  // a list column, by their repetition levels (v2: stored uncompressed;
  // v1: the page decompressed, its values not decoded).
  Status SkipTo(uint64_t row) {
    uint64_t rows = 0, values = 0;  // before the page at `at`
    size_t best = pages_.position();
    uint64_t best_rows = 0, best_values = 0;
    Page page;
    while (true) {
      const size_t at = pages_.position();
      SLUICE_ASSIGN_OR_RETURN(bool more, pages_.NextHeader(&page));
      if (!more) break;
      const PageType type = page.header.type;
      if (type == PageType::kDictionaryPage) {
        pages_.Seek(at);
        SLUICE_ASSIGN_OR_RETURN(more, pages_.Next(&page_));
        SLUICE_RETURN_IF_ERROR(Decode(page_));
        best = pages_.position();
        continue;
      }
      if (type != PageType::kDataPage && type != PageType::kDataPageV2) break;  // Next's errors
      const bool v2 = type == PageType::kDataPageV2;
      const uint64_t n = static_cast<uint64_t>(v2 ? page.header.data_page_header_v2->num_values
                                                  : page.header.data_page_header->num_values);
      uint64_t page_rows = n;
      bool starts_row = true;
      if (leaf_.max_repetition_level > 0) {
        std::string_view body;
        Encoding rep_enc = Encoding::kRle;
        if (!v2) {
          pages_.Seek(at);
          SLUICE_ASSIGN_OR_RETURN(more, pages_.Next(&page));
          if (!page.pieces.empty()) SLUICE_RETURN_IF_ERROR(pages_.Materialize(&page));
          body = page.body;
          rep_enc = page.header.data_page_header->repetition_level_encoding;
        }
        SLUICE_RETURN_IF_ERROR(Levels(leaf_.max_repetition_level, rep_enc, &body,
                                      page.repetition_levels, v2, static_cast<size_t>(n), &rep_)
                                   .WithContext(pages_.Where(page.file_offset)));
        page_rows = static_cast<uint64_t>(std::count(rep_.begin(), rep_.begin() + n, 0u));
        starts_row = n > 0 && rep_[0] == 0;
      }
      if (starts_row) {
        best = at;
        best_rows = rows;
        best_values = values;
      }
      if (rows + page_rows > row) break;
      rows += page_rows;
      values += n;
    }
    pages_.Seek(best);
    first_row_ = best_rows;
    entries_ = best_values;
    return Status::Ok();
  }

  // The chunk's pages decompressed, as its metadata says, but never more
  // than the stored bytes at hand can plausibly expand to (the metadata is
  // untrusted) nor than one page may be: pages past it get buffers of their
  // own, as they would without it.
  uint64_t PageBufferBytes() const {
    constexpr uint64_t kMaxRatio = 16;  // typical text compresses 2-5x
    if (meta_.codec == CompressionCodec::kUncompressed || meta_.total_uncompressed_size <= 0) return 0;
    return std::min({static_cast<uint64_t>(meta_.total_uncompressed_size),
                     uint64_t{chunk_.size()} * kMaxRatio, uint64_t{options_.pages.max_page_bytes}});
  }

  static Status FirstOf(Status earlier, Status later) { return earlier.ok() ? later : earlier; }

  // The values of the PLAIN byte-array pages put off (DataPage), found
  // together (FindByteArrays); a bad page's error is its decoder's, as if
  // found in turn.
  Status FindPendingByteArrays() {
    std::vector<ByteArraySection> sections;
    sections.reserve(pending_.size());
    for (const PendingByteArrays& p : pending_) {
      sections.push_back(ByteArraySection{p.section, p.count, out_.binary.data() + p.first_slot});
    }
    const size_t bad = FindByteArrays(sections);
    if (bad < pending_.size()) {
      const PendingByteArrays& p = pending_[bad];
      Status s = PlainDecoder(p.section).DecodeByteArrays(p.count, sections[bad].out);
      if (s.ok()) s = InternalError("PLAIN byte arrays found bad, then decoded");
      return s.WithContext(pages_.Where(p.file_offset));
    }
    pending_.clear();
    return Status::Ok();
  }

  // The views of `page` stay valid as long as the buffer.
  void Keep(Page& page) {
    if (page.storage) out_.owned.push_back(std::move(page.storage));
    if (page.in_page_buffer) pages_.KeepLastPage();
  }

  Status DictionaryPage(Page& page) {
    if (have_dictionary_) return CorruptError("a second dictionary page");
    if (entries_ > 0) return CorruptError("a dictionary page after data pages");
    const DictionaryPageHeader& h = *page.header.dictionary_page_header;
    if (h.encoding != Encoding::kPlain && h.encoding != Encoding::kPlainDictionary) {
      return UnimplementedError("dictionary page encoded as " + EncodingName(h.encoding));
    }
    const auto count = static_cast<size_t>(h.num_values);
    if (page.left_compressed) return StartLazyDictionary(page, count);
    if (!page.pieces.empty()) {
      // A byte-array dictionary in pieces (DeferSnappyPieces): its values
      // read in place as a data page's are, else decompressed as any page.
      if (count <= page.space_size / 4) {
        PiecewiseBody pieces(page.pieces, page.space, page.space_used, page.space_size);
        if (options_.defer_large_gathers) pieces.DeferLargeGathers(&out_.deferred);
        dictionary_.count = count;
        dictionary_.binary.resize(count);
        if (pieces.FindByteArrays(0, count, dictionary_.binary.data())) {
          pages_.KeepLastPage(pieces.scratch_used());
          have_dictionary_ = true;
          return Status::Ok();
        }
        out_.deferred.Truncate(0);  // nothing was deferred before the dictionary
      }
      SLUICE_RETURN_IF_ERROR(pages_.Materialize(&page));
    }
    SLUICE_ASSIGN_OR_RETURN(dictionary_, DecodeDictionaryPage(page.body, count, leaf_));
    Keep(page);
    have_dictionary_ = true;
    return Status::Ok();
  }

  // A dictionary page of byte arrays left compressed (DeferSnappyDictionaries):
  // its entries are found as far as the data pages' indices reach
  // (DictionaryThrough). Any fault there is reported by the whole page's
  // decoders, as if at its page (LazyDictionaryError).
  Status StartLazyDictionary(Page& page, size_t count) {
    lazy_dictionary_.emplace();
    lazy_dictionary_page_ = page.file_offset;
    lazy_dictionary_compressed_ = page.compressed;
    lazy_dictionary_body_ = page.space;
    lazy_dictionary_size_ = page.space_size;
    dictionary_parsed_ = 0;
    dictionary_pos_ = 0;
    pages_.KeepLastPage();  // its space, written later
    have_dictionary_ = true;
    dictionary_.count = count;
    if (!lazy_dictionary_->Start(page.compressed, page.space, page.space_size) ||
        lazy_dictionary_->size() != page.space_size || count > page.space_size / 4) {
      return LazyDictionaryError();
    }
    dictionary_.binary.resize(count);
    return Status::Ok();
  }

  // The first `entries` of a dictionary left compressed found.
  Status DictionaryThrough(size_t entries) {
    if (!lazy_dictionary_) return Status::Ok();
    SnappyPrefix& snappy = *lazy_dictionary_;
    const uint64_t size = snappy.size();
    const char* body = lazy_dictionary_body_;
    while (dictionary_parsed_ < entries) {
      const uint64_t pos = dictionary_pos_;
      if (size - pos < 4 || !snappy.DecodeTo(pos + 4)) return LazyDictionaryError();
      uint32_t length;
      std::memcpy(&length, body + pos, 4);  // little-endian, as PLAIN stores it
      if (length > uint32_t{INT32_MAX} || length > size - pos - 4 ||
          !snappy.DecodeTo(pos + 4 + length)) {
        return LazyDictionaryError();
      }
      dictionary_.binary[dictionary_parsed_++] = std::string_view(body + pos + 4, length);
      dictionary_pos_ = pos + 4 + length;
    }
    return Status::Ok();
  }

  // Every entry of a dictionary left compressed, and the rest of its block.
  Status WholeDictionary() {
    if (!lazy_dictionary_) return Status::Ok();
    SLUICE_RETURN_IF_ERROR(DictionaryThrough(dictionary_.count));
    if (!lazy_dictionary_->DecodeTo(lazy_dictionary_->size())) return LazyDictionaryError();
    dictionary_whole_ = lazy_dictionary_->size();
    lazy_dictionary_.reset();
    return Status::Ok();
  }

  // The error of a dictionary left compressed: the page decompressed whole
  // by the page reader and decoded by DecodeDictionaryPage, as at its page.
  // (Under the reader's exclusive lock: the bytes of entries already found
  // are written again, the same.)
  Status LazyDictionaryError() {
    Page page;
    page.file_offset = lazy_dictionary_page_;
    page.left_compressed = true;
    page.compressed = lazy_dictionary_compressed_;
    page.space = lazy_dictionary_body_;
    page.space_size = lazy_dictionary_size_;
    const std::string where = pages_.Where(page.file_offset);
    Status s = pages_.Materialize(&page);
    if (s.ok()) s = DecodeDictionaryPage(page.body, dictionary_.count, leaf_).status();
    if (s.ok()) s = InternalError("a dictionary page left compressed failed, then decoded whole");
    return s.message().rfind(context_, 0) == 0 ? s : s.WithContext(where);
  }

  // The decoder of levels of `max` at the start of `*body` (v1: with their
  // length prefix, which is consumed) or in `runs` (v2); none when `max` is 0.
  Status LevelDecoder(int16_t max, Encoding encoding, std::string_view* body, std::string_view runs,
                      bool v2, std::optional<RleBitPackedDecoder>* out) {
    out->reset();
    if (max == 0) return Status::Ok();
    if (!v2 && encoding != Encoding::kRle) {
      return UnimplementedError("levels encoded as " + EncodingName(encoding) + " (RLE is supported)");
    }
    const int width = LevelBitWidth(max);
    if (v2) {
      SLUICE_ASSIGN_OR_RETURN(RleBitPackedDecoder d, RleBitPackedDecoder::Create(runs, width));
      out->emplace(std::move(d));
      return Status::Ok();
    }
    size_t consumed = 0;
    SLUICE_ASSIGN_OR_RETURN(RleBitPackedDecoder d,
                            RleBitPackedDecoder::CreateWithLengthPrefix(*body, width, &consumed));
    body->remove_prefix(consumed);
    out->emplace(std::move(d));
    return Status::Ok();
  }

  // Decodes `n` levels of `max` from the start of `*body` (v1: with their
  // length prefix, which is consumed) or from `runs` (v2).
  Status Levels(int16_t max, Encoding encoding, std::string_view* body, std::string_view runs,
                bool v2, size_t n, SlotArray<uint32_t>* out) {
    std::optional<RleBitPackedDecoder> d;
    SLUICE_RETURN_IF_ERROR(LevelDecoder(max, encoding, body, runs, v2, &d));
    if (!d) return Status::Ok();
    out->resize(n);
    return d->Decode(n, out->data());
  }

  // A data page of dictionary-encoded fixed-width values (a list of token
  // ids) decoded a step of level entries at a time, as far as the rows read
  // (DecodeThrough's step_): a resumed or first row does not wait for the
  // whole page's levels and values (a page of pyarrow's holds ~250k ids).
  // Its decoders go on from where the last step ended; the page's bytes
  // (page_) stay put until it is done.
  struct OpenPage {
    size_t entries = 0;  // the page's level entries
    size_t done = 0;     // decoded so far
    std::optional<RleBitPackedDecoder> rep, def;
    std::optional<DictionaryFixedValues> values;
    std::string where;  // the page, for errors
    size_t run = SIZE_MAX;  // its values' run in out_.fixed_runs
    size_t step = SIZE_MAX;  // level entries a step
  };

  // Byte arrays step whenever their dictionary is left compressed, so that
  // a page finds only the entries its rows read index.
  bool Steps(Encoding encoding, size_t n) const {
    if (!have_dictionary_ || leaf_.physical_type == PhysicalType::kBoolean ||
        (encoding != Encoding::kRleDictionary && encoding != Encoding::kPlainDictionary)) {
      return false;
    }
    return out_.width > 0 ? step_ < n : lazy_dictionary_.has_value() && binary_step_ != SIZE_MAX;
  }

  Status StartSteps(Page& page, Encoding rep_enc, Encoding def_enc, Encoding encoding, bool v2,
                    size_t n) {
    OpenPage p;
    p.entries = n;
    p.step = out_.width > 0 ? step_ : binary_step_;
    std::string_view body = page.body;
    SLUICE_RETURN_IF_ERROR(LevelDecoder(leaf_.max_repetition_level, rep_enc, &body,
                                        page.repetition_levels, v2, &p.rep));
    SLUICE_RETURN_IF_ERROR(LevelDecoder(leaf_.max_definition_level, def_enc, &body,
                                        page.definition_levels, v2, &p.def));
    SLUICE_ASSIGN_OR_RETURN(DictionaryFixedValues values,
                            DictionaryFixedValues::Create(encoding, body, leaf_, &dictionary_));
    p.values.emplace(std::move(values));
    p.where = pages_.Where(page.file_offset);
    open_page_.emplace(std::move(p));
    return Step();
  }

  // The open page's next step, its errors named as Decode names a page's.
  Status ContinuePage() {
    Status s = Step();
    if (s.ok()) return s;
    return s.message().rfind(context_, 0) == 0 ? s : s.WithContext(open_page_->where);
  }

  Status Step() {
    OpenPage& p = *open_page_;
    const size_t m = std::min(p.step, p.entries - p.done);
    if (p.rep) {
      rep_.resize(m);
      SLUICE_RETURN_IF_ERROR(p.rep->Decode(m, rep_.data()));
    }
    if (p.def) {
      def_.resize(m);
      SLUICE_RETURN_IF_ERROR(p.def->Decode(m, def_.data()));
    }
    const size_t first = out_.validity.size();
    const uint64_t present_before = assembler_->present_slots();
    SLUICE_RETURN_IF_ERROR(assembler_->Append(p.def ? def_.data() : nullptr,
                                              p.rep ? rep_.data() : nullptr, m));
    entries_ += m;
    p.done += m;
    const size_t slots = out_.validity.size();
    const size_t added = slots - first;
    const size_t present = static_cast<size_t>(assembler_->present_slots() - present_before);
    if (out_.width == 0) return StepByteArrays(p, first, slots, present);
    if (slots > options_.max_value_bytes / out_.width) {
      return OutOfRangeError(std::to_string(slots) + " values of " + std::to_string(out_.width) +
                             " bytes, more than the limit of " +
                             std::to_string(options_.max_value_bytes) + " bytes");
    }
    if (added > 0) {
      SLUICE_ASSIGN_OR_RETURN(char* const run, ValueSpace(added * out_.width));
      if (present == added) {
        SLUICE_RETURN_IF_ERROR(p.values->Next(present, reinterpret_cast<uint8_t*>(run), &indices_));
      } else {
        dense_fixed_.resize(present * out_.width);
        SLUICE_RETURN_IF_ERROR(p.values->Next(
            present, reinterpret_cast<uint8_t*>(dense_fixed_.data()), &indices_));
        Scatter(first, slots, run);
      }
      // The page's values are one run, as when decoded whole, when its
      // steps' values lie back to back (the values buffer's); else a run a step.
      FixedRun* last = p.run < out_.fixed_runs.size() ? &out_.fixed_runs[p.run] : nullptr;
      if (last != nullptr && last->bytes.data() + last->bytes.size() == run &&
          last->first_slot + last->bytes.size() / out_.width == first) {
        last->bytes = std::string_view(last->bytes.data(), last->bytes.size() + added * out_.width);
      } else {
        p.run = out_.fixed_runs.size();
        out_.fixed_runs.push_back(FixedRun{first, std::string_view(run, added * out_.width)});
      }
    }
    out_.null_count = out_.validity.size() - static_cast<size_t>(assembler_->present_slots());
    if (p.done == p.entries) open_page_.reset();
    return Status::Ok();
  }

  // A step's byte arrays: views of the dictionary's entries, found as far
  // as the step's indices reach.
  Status StepByteArrays(OpenPage& p, size_t first, size_t slots, size_t present) {
    out_.binary.resize(slots);
    if (present > 0) {
      SLUICE_RETURN_IF_ERROR(p.values->NextIndices(present, &indices_));
      const uint32_t* idx = indices_.data();
      uint32_t largest = 0;
      for (size_t i = 0; i < present; ++i) largest = std::max(largest, idx[i]);
      SLUICE_RETURN_IF_ERROR(DictionaryThrough(size_t{largest} + 1));
      const bool dense = present == slots - first;
      if (!dense) dense_binary_.resize(present);
      std::string_view* dst = dense ? out_.binary.data() + first : dense_binary_.data();
      const std::string_view* values = dictionary_.binary.data();
      for (size_t i = 0; i < present; ++i) dst[i] = values[idx[i]];
      if (!dense) ScatterBinary(first, slots);
    }
    out_.null_count = out_.validity.size() - static_cast<size_t>(assembler_->present_slots());
    if (p.done == p.entries) open_page_.reset();
    return Status::Ok();
  }

  Status DataPage(Page& page, LevelAssembler& assembler) {
    const bool v2 = page.header.type == PageType::kDataPageV2;
    const size_t n = static_cast<size_t>(v2 ? page.header.data_page_header_v2->num_values
                                            : page.header.data_page_header->num_values);
    const Encoding encoding = v2 ? page.header.data_page_header_v2->encoding
                                 : page.header.data_page_header->encoding;
    if (n > static_cast<uint64_t>(meta_.num_values) - entries_) {
      return CorruptError(std::to_string(n) + " values in the page, " +
                          std::to_string(static_cast<uint64_t>(meta_.num_values) - entries_) +
                          " left of the chunk's " + std::to_string(meta_.num_values));
    }
    const Encoding rep_enc = v2 ? Encoding::kRle : page.header.data_page_header->repetition_level_encoding;
    const Encoding def_enc = v2 ? Encoding::kRle : page.header.data_page_header->definition_level_encoding;
    // A page in pieces: its v1 levels gathered, its values read in place
    // below; anything unexpected decompresses it as any other page.
    std::optional<PiecewiseBody> pieces;
    std::string_view body = page.body;
    uint64_t values_from = 0;
    if (!page.pieces.empty()) {
      pieces.emplace(page.pieces, page.space, page.space_used, page.space_size);
      if (options_.defer_large_gathers) pieces->DeferLargeGathers(&out_.deferred);
      if (out_.width != 0 || encoding != Encoding::kPlain ||
          (!v2 && !GatherLevels(*pieces, rep_enc, def_enc, &body, &values_from))) {
        pieces.reset();
        SLUICE_RETURN_IF_ERROR(pages_.Materialize(&page));
        body = page.body;
      }
    }
    if (!pieces && Steps(encoding, n)) return StartSteps(page, rep_enc, def_enc, encoding, v2, n);
    SLUICE_RETURN_IF_ERROR(Levels(leaf_.max_repetition_level, rep_enc, &body, page.repetition_levels, v2, n, &rep_));
    SLUICE_RETURN_IF_ERROR(Levels(leaf_.max_definition_level, def_enc, &body, page.definition_levels, v2, n, &def_));
    const size_t first = out_.validity.size();
    const uint64_t present_before = assembler.present_slots();
    SLUICE_RETURN_IF_ERROR(assembler.Append(leaf_.max_definition_level ? def_.data() : nullptr,
                                            leaf_.max_repetition_level ? rep_.data() : nullptr, n));
    entries_ += n;
    const size_t slots = out_.validity.size();
    const size_t added = slots - first;
    const size_t present = static_cast<size_t>(assembler.present_slots() - present_before);
    if (encoding == Encoding::kRleDictionary || encoding == Encoding::kPlainDictionary) {
      SLUICE_RETURN_IF_ERROR(WholeDictionary());
    }
    const Dictionary* dict = have_dictionary_ ? &dictionary_ : nullptr;
    if (out_.width > 0) {
      if (slots > options_.max_value_bytes / out_.width) {
        return OutOfRangeError(std::to_string(slots) + " values of " + std::to_string(out_.width) +
                               " bytes, more than the limit of " +
                               std::to_string(options_.max_value_bytes) + " bytes");
      }
      if (added == 0) return Status::Ok();
      if (encoding == Encoding::kPlain && present == added &&
          leaf_.physical_type != PhysicalType::kBoolean) {
        // The values as they lie in the page: a view, no copy.
        std::string_view bytes;
        SLUICE_RETURN_IF_ERROR(PlainDecoder(body).TakeFixedWidth(added, out_.width, &bytes));
        Keep(page);
        out_.fixed_runs.push_back(FixedRun{first, bytes});
        return Status::Ok();
      }
      SLUICE_ASSIGN_OR_RETURN(char* const run, ValueSpace(added * out_.width));
      if (present == added) {
        SLUICE_RETURN_IF_ERROR(DecodeFixedValues(encoding, body, present, leaf_, dict,
                                                 reinterpret_cast<uint8_t*>(run), &indices_));
      } else {
        dense_fixed_.resize(present * out_.width);
        SLUICE_RETURN_IF_ERROR(DecodeFixedValues(encoding, body, present, leaf_, dict,
                                                 reinterpret_cast<uint8_t*>(dense_fixed_.data()),
                                                 &indices_));
        Scatter(first, slots, run);
      }
      out_.fixed_runs.push_back(FixedRun{first, std::string_view(run, added * out_.width)});
      return Status::Ok();
    }
    out_.binary.resize(slots);
    // These encodings' values are views into the page.
    if (encoding == Encoding::kPlain || encoding == Encoding::kDeltaLengthByteArray) Keep(page);
    const uint64_t budget = options_.max_value_bytes > rebuilt_ ? options_.max_value_bytes - rebuilt_ : 0;
    const size_t owned_before = out_.owned.size();
    if (pieces) {
      if (present != added) dense_binary_.resize(present);
      std::string_view* const dst = present == added ? out_.binary.data() + first : dense_binary_.data();
      const size_t deferred_before = out_.deferred.size();
      if (pieces->FindByteArrays(values_from, present, dst)) {
        if (present != added) ScatterBinary(first, slots);
        pages_.KeepLastPage(pieces->scratch_used());  // the rest of its space is free
        return Status::Ok();
      }
      out_.deferred.Truncate(deferred_before);
      // Not all there: decompressed and decoded as usual, for its error.
      SLUICE_RETURN_IF_ERROR(pages_.Materialize(&page));
      body = page.body.substr(values_from);
    }
    if (present == added && encoding == Encoding::kPlain) {
      // Put off to the chunk's end: out_.binary holds every slot by then
      // (reserved once, never moved).
      if (present > 0) pending_.push_back(PendingByteArrays{body, present, first, page.file_offset});
      return Status::Ok();
    }
    if (present == added) {
      SLUICE_RETURN_IF_ERROR(DecodeBinaryValues(encoding, body, present, dict, budget, &out_.owned,
                                                out_.binary.data() + first, &indices_));
    } else {
      dense_binary_.resize(present);
      SLUICE_RETURN_IF_ERROR(DecodeBinaryValues(encoding, body, present, dict, budget, &out_.owned,
                                                dense_binary_.data(), &indices_));
      ScatterBinary(first, slots);
    }
    for (size_t i = owned_before; i < out_.owned.size(); ++i) rebuilt_ += out_.owned[i]->size();
    return Status::Ok();
  }

  // The dense byte arrays of dense_binary_ to the present slots of
  // [first, end).
  void ScatterBinary(size_t first, size_t end) {
    size_t k = 0;
    for (size_t i = first; i < end; ++i) {
      if (out_.validity[i]) out_.binary[i] = dense_binary_[k++];
    }
  }

  // A v1 page's levels (each RLE with its 4-byte length, as Levels reads
  // them) gathered together into *levels; *values_from: where its values
  // start. False when they are not RLE or not all there.
  bool GatherLevels(PiecewiseBody& body, Encoding rep_enc, Encoding def_enc,
                    std::string_view* levels, uint64_t* values_from) {
    uint64_t pos = 0;
    const char* start = nullptr;
    for (const auto& [max, enc] : {std::pair{leaf_.max_repetition_level, rep_enc},
                                   std::pair{leaf_.max_definition_level, def_enc}}) {
      if (max == 0) continue;
      uint32_t length;
      std::string_view bytes;
      if (enc != Encoding::kRle || !body.Load32(pos, &length) ||
          !body.Gather(pos, 4 + uint64_t{length}, &bytes)) {
        return false;
      }
      if (start == nullptr) start = bytes.data();  // gathered one after another
      pos += bytes.size();
    }
    *levels = std::string_view(start, pos);
    *values_from = pos;
    return true;
  }

  // `bytes` for decoded fixed-width values: from the chunk's values buffer
  // (uninitialized, one allocation) while it has room, else a zero-filled
  // string of their own.
  Result<char*> ValueSpace(size_t bytes) {
    if (values_.size() == 0 && !values_tried_) {
      values_tried_ = true;
      constexpr uint64_t kMaxRatio = 64;  // decoding and decompression together
      const uint64_t capacity =
          std::min({static_cast<uint64_t>(meta_.num_values) * out_.width,
                    uint64_t{chunk_.size()} * kMaxRatio, options_.max_value_bytes});
      SLUICE_ASSIGN_OR_RETURN(values_, UninitializedBuffer::Allocate(capacity, context_, buffer_pages_));
    }
    if (bytes <= values_.size() - values_used_) {
      char* p = values_.data() + values_used_;
      values_used_ += bytes;
      return p;
    }
    out_.owned.push_back(std::make_unique<std::string>(bytes, '\0'));
    return out_.owned.back()->data();
  }

  // Moves the dense values of slots [first, end) to the present ones of
  // `dst`, which holds those slots, and zeros the null ones.
  void Scatter(size_t first, size_t end, char* dst) {
    const size_t w = out_.width;
    const char* src = dense_fixed_.data();
    const auto run = [&](auto width) {
      size_t k = 0;
      for (size_t i = first; i < end; ++i) {
        if (out_.validity[i]) {
          std::memcpy(dst + (i - first) * width, src + k++ * width, width);
        } else {
          std::memset(dst + (i - first) * width, 0, width);
        }
      }
    };
    if (w == 4) {
      run(std::integral_constant<size_t, 4>{});
    } else if (w == 8) {
      run(std::integral_constant<size_t, 8>{});
    } else {
      run(w);
    }
  }

  const FileFooter& footer_;
  size_t rg_;
  const Field& field_;
  const LeafColumn& leaf_;
  const ColumnMetaData& meta_;
  std::string_view chunk_;
  const ColumnDecodeOptions options_;
  std::string context_;
  PageReader pages_;
  ColumnBuffer out_;
  std::optional<LevelAssembler> assembler_;
  Page page_;
  uint64_t first_row_ = 0;  // the chunk's row of out_'s row 0
  bool done_ = false;
  Status failed_ = Status::Ok();  // once a page failed, every later call
  size_t data_pages_ = 0;
  size_t step_ = SIZE_MAX;  // level entries a step (DecodeThrough)
  std::optional<OpenPage> open_page_;
  Dictionary dictionary_;
  bool have_dictionary_ = false;
  // A dictionary page left compressed (StartLazyDictionary): its block,
  // decompressed into its space as far as dictionary_parsed_ entries
  // (dictionary_pos_ bytes) are found; none once whole.
  std::optional<SnappyPrefix> lazy_dictionary_;
  uint64_t lazy_dictionary_page_ = 0;  // its offset in the file
  std::string_view lazy_dictionary_compressed_;
  char* lazy_dictionary_body_ = nullptr;
  uint64_t lazy_dictionary_size_ = 0;
  uint64_t dictionary_whole_ = 0;  // its size, once whole
  size_t dictionary_parsed_ = 0;
  uint64_t dictionary_pos_ = 0;
  size_t binary_step_ = SIZE_MAX;  // level entries a step of such a dictionary's pages
  uint64_t entries_ = 0;
  uint64_t rebuilt_ = 0;
  // A page's levels and dictionary indices: storage recycled across row
  // groups (SlotArray), not faulted in anew for each.
  SlotArray<uint32_t> def_, rep_;
  SlotArray<uint32_t> indices_;
  UninitializedBuffer values_;
  UninitializedBuffer::Pages buffer_pages_ = UninitializedBuffer::Pages::kHuge;  // values_', the page buffer's
  size_t values_used_ = 0;
  bool values_tried_ = false;
  struct PendingByteArrays {
    std::string_view section;
    size_t count;
    size_t first_slot;
    uint64_t file_offset;
  };
  std::vector<PendingByteArrays> pending_;
  std::string dense_fixed_;
  std::vector<std::string_view> dense_binary_;
};

}  // namespace

Status RowGroupBudget::Charge(uint64_t bytes, std::string_view column, std::string_view what) {
  held_ = bytes > UINT64_MAX - held_ ? UINT64_MAX : held_ + bytes;
  if (held_ <= max_) return Status::Ok();
  std::string where = std::string(file_) + ": row group " + std::to_string(row_group_);
  if (!column.empty()) where += " column \"" + std::string(column) + "\"";
  return OutOfRangeError(where + ": the row group holds " + std::to_string(held_) + " bytes with " +
                         std::string(what) + ", more than the reader's budget of " +
                         std::to_string(max_) + " bytes (max_row_group_bytes)");
}

// Checks that every entry point makes before a ChunkDecoder exists.
static Status CheckDecodableChunk(const FileFooter& footer, size_t row_group, size_t field,
                                  std::string_view file) {
  SLUICE_RETURN_IF_ERROR(ReadableField(footer.schema, field, file));
  if (row_group >= footer.meta.row_groups.size()) {
    return NotFoundError(std::string(file) + ": no row group " + std::to_string(row_group) + " (" +
                         std::to_string(footer.meta.row_groups.size()) + " row groups)");
  }
  return Status::Ok();
}

Result<ColumnBuffer> DecodeColumnChunk(const FileFooter& footer, size_t row_group, size_t field,
                                       std::string_view chunk, std::string_view file,
                                       const ColumnDecodeOptions& options) {
  SLUICE_RETURN_IF_ERROR(CheckDecodableChunk(footer, row_group, field, file));
  ChunkDecoder d(footer, row_group, field, chunk, file, options);
  SLUICE_RETURN_IF_ERROR(d.Start(0, false));
  SLUICE_RETURN_IF_ERROR(d.DecodeThrough(UINT64_MAX));
  return d.Take();
}

struct ColumnChunkCursor::Impl {
  ChunkDecoder decoder;
};

ColumnChunkCursor::ColumnChunkCursor() = default;
ColumnChunkCursor::~ColumnChunkCursor() = default;

Result<std::unique_ptr<ColumnChunkCursor>> ColumnChunkCursor::Open(
    const FileFooter& footer, size_t row_group, size_t field, std::string_view chunk,
    std::string_view file, const ColumnDecodeOptions& options, uint64_t first_row) {
  SLUICE_RETURN_IF_ERROR(CheckDecodableChunk(footer, row_group, field, file));
  std::unique_ptr<ColumnChunkCursor> c(new ColumnChunkCursor());
  c->impl_.reset(new Impl{ChunkDecoder(footer, row_group, field, chunk, file, options)});
  SLUICE_RETURN_IF_ERROR(c->impl_->decoder.Start(first_row, true));
  return c;
}

Status ColumnChunkCursor::DecodeThrough(uint64_t row) { return impl_->decoder.DecodeThrough(row); }
uint64_t ColumnChunkCursor::first_row() const { return impl_->decoder.first_row(); }
uint64_t ColumnChunkCursor::end_row() const { return impl_->decoder.EndRow(); }
bool ColumnChunkCursor::done() const { return impl_->decoder.done(); }
const ColumnBuffer& ColumnChunkCursor::buffer() const { return impl_->decoder.buffer(); }
uint64_t ColumnChunkCursor::HeldBytes() const { return impl_->decoder.HeldBytes(); }
size_t ColumnChunkCursor::data_pages_decoded() const { return impl_->decoder.data_pages(); }
uint64_t ColumnChunkCursor::levels_decoded() const { return impl_->decoder.levels_decoded(); }
uint64_t ColumnChunkCursor::dictionary_bytes_decompressed() const {
  return impl_->decoder.dictionary_bytes_decompressed();
}

}  // namespace sluice::parquet
