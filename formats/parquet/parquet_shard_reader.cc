#include "formats/parquet/parquet_shard_reader.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <shared_mutex>

#include "base/bytes.h"
#include "formats/mds/float16.h"
#include "formats/parquet/chunk_reads.h"
#include "formats/parquet/decimal_text.h"
#include "formats/parquet/encoding/plain.h"

namespace sluice::parquet {

// A non-null pointer for empty values: only nulls have a null pointer.
constexpr char kEmpty[1] = {0};

// A column's decoded rows from one place on: a cursor over its chunk and,
// for a column not read in place, the rows' views built from its buffer.
struct RowSegment {
  std::unique_ptr<ColumnChunkCursor> cursor;
  SlotArray<std::string_view> values;  // per row from the cursor's first_row
  uint64_t built = 0;                  // rows of `values` made
  bool charged_rows = false;
};

struct ParquetShardReader::State {
  std::string file;
  size_t row_group = 0;
  uint32_t rows = 0;
  bool lazy = false;
  std::vector<std::string> names;
  std::vector<FieldEncoding> encodings;
  FileFooter footer;
  std::vector<size_t> fields;               // top-level indices
  std::vector<std::string_view> chunks;     // each column's chunk bytes
  std::vector<ColumnDecodeOptions> options;  // each column's
  // Per column, its segments (at most kMaxSegments: a read before every one
  // of them starts one at row 0). Rows are read from the segment that
  // starts last at or before them; segments are never dropped once read
  // from (their views live as long as the reader).
  std::vector<std::vector<std::unique_ptr<RowSegment>>> segments;
  // True for a column whose rows are read from its buffer as they are.
  std::vector<bool> direct;
  std::vector<std::unique_ptr<std::string>> text;
  // Per column, the rows whose packed list holds a null element (sorted)
  // and each one's element validity (a view of the buffer's validity).
  std::vector<std::vector<uint32_t>> masked_rows;
  std::vector<std::vector<std::string_view>> masks;
  bool any_masked = false;
  RowGroupBudget budget{0, {}, 0};
  std::vector<uint64_t> charged;  // per column, its cursors' bytes charged
  // Shared by readers of rows already decoded, exclusive while decoding.
  mutable std::shared_mutex mu;
  Status failed = Status::Ok();  // a decode's error, returned for every later row

  static constexpr size_t kMaxSegments = 3;
  RowSegment* SegmentFor(size_t c, uint64_t row) const;
  Status Prepare(uint64_t row);
  Status Build(size_t c, RowSegment& seg);
  Status OpenSegment(size_t c, uint64_t first_row, std::unique_ptr<RowSegment>* out);
};

namespace {

std::string_view Owned(std::vector<std::unique_ptr<std::string>>* text, std::string s) {
  text->push_back(std::make_unique<std::string>(std::move(s)));
  const std::string& t = *text->back();
  return t.empty() ? std::string_view(kEmpty, 0) : std::string_view(t);
}

std::string_view NonNull(std::string_view v) {
  return v.data() == nullptr ? std::string_view(kEmpty, 0) : v;
}

// The leaf slot's value as the scalar encoding says (not null).
std::string LeafText(const ColumnBuffer& b, const FieldEncoding& leaf, size_t slot) {
  const LeafColumn& l = b.leaf;
  if (leaf.bytes == FieldBytes::kDecimalText) {
    if (l.physical_type == PhysicalType::kInt32) {
      return DecimalText(BigEndianOf(LoadLE<uint32_t>(b.fixed_value(slot).data()), 4), l.scale);
    }
    if (l.physical_type == PhysicalType::kInt64) {
      return DecimalText(BigEndianOf(LoadLE<uint64_t>(b.fixed_value(slot).data()), 8), l.scale);
    }
    if (l.physical_type == PhysicalType::kByteArray) return DecimalText(b.binary[slot], l.scale);
    return DecimalText(b.fixed_value(slot), l.scale);
  }
  // INT96 as int64 nanoseconds, little-endian.
  const char* p = b.fixed_value(slot).data();
  const int64_t ns = Int96ToUnixNanos(Int96{LoadLE<uint64_t>(p), LoadLE<uint32_t>(p + 8)});
  std::string out(8, '\0');
  std::memcpy(out.data(), &ns, 8);  // the build targets little-endian hosts only
  return out;
}

// Row `row`'s field of a column read in place (State::direct): a byte
// array's view, or a null one.
std::string_view InPlaceField(const ColumnBuffer& b, uint32_t row) {
  return b.validity[row] ? NonNull(b.binary[row]) : std::string_view();
}

// True when slots [from, to) lie in one run of fixed values: *out views them.
bool InOneRun(const ColumnBuffer& b, size_t from, size_t to, std::string_view* out) {
  auto it = std::upper_bound(b.fixed_runs.begin(), b.fixed_runs.end(), from,
                             [](size_t slot, const FixedRun& r) { return slot < r.first_slot; });
  if (it == b.fixed_runs.begin()) return false;
  const FixedRun& run = *(it - 1);
  const size_t end = run.first_slot + run.bytes.size() / b.width;
  if (to > end) return false;
  *out = run.bytes.substr((from - run.first_slot) * b.width, (to - from) * b.width);
  return true;
}

JsonValue LeafJson(const ColumnBuffer& b, const FieldEncoding& leaf, size_t slot) {
  if (!b.validity[slot]) return JsonValue{};
  if (leaf.bytes == FieldBytes::kDecimalText) return JsonValue{LeafText(b, leaf, slot)};
  if (leaf.bytes == FieldBytes::kInt96Nanos) {
    const std::string t = LeafText(b, leaf, slot);
    return JsonValue{LoadLE<int64_t>(t.data())};
  }
  if (leaf.bytes == FieldBytes::kView) {
    const std::string_view v = b.leaf.physical_type == PhysicalType::kByteArray
                                   ? b.binary[slot]
                                   : b.fixed_value(slot);
    if (leaf.name == "str") return JsonValue{std::string(v)};
    return JsonValue{JsonValue::Object{{"hex", JsonValue{HexEncode(v)}}}};
  }
  const char* p = b.fixed_value(slot).data();
  if (leaf.name == "float64") {
    double d;
    std::memcpy(&d, p, 8);
    return JsonValue{d};
  }
  if (leaf.name == "float32") {
    float f;
    std::memcpy(&f, p, 4);
    return JsonValue{static_cast<double>(f)};
  }
  if (leaf.name == "float16") return JsonValue{HalfToDouble(LoadLE<uint16_t>(p))};
  auto members = FieldValueJson(leaf.name, std::string_view(p, leaf.width));
  if (!members.ok() || members->empty()) return JsonValue{};
  return std::move(members->front().second);
}

JsonValue SlotJson(const ColumnBuffer& b, const FieldEncoding& leaf, size_t level, size_t slot) {
  if (level == b.list_depth) return LeafJson(b, leaf, slot);
  const ListSlots& list = b.lists[level];
  if (!list.validity[slot]) return JsonValue{};
  JsonValue::Array items;
  for (int64_t i = list.offsets[slot]; i < list.offsets[slot + 1]; ++i) {
    items.push_back(SlotJson(b, leaf, level + 1, static_cast<size_t>(i)));
  }
  return JsonValue{std::move(items)};
}

}  // namespace

Result<ParquetShardReader> ParquetShardReader::Open(std::string_view data, std::string_view file,
                                                    size_t row_group, uint64_t expected_rows,
                                                    const ColumnDecodeOptions& options,
                                                    const std::vector<std::string>& columns) {
  FileView view = [data](uint64_t offset, uint64_t size) -> Result<std::string_view> {
    if (offset > data.size() || size > data.size() - offset) {
      return OutOfRangeError("past the end of the file (" + std::to_string(data.size()) + " bytes)");
    }
    return data.substr(offset, size);
  };
  RangeReader read = [&view](uint64_t offset, uint64_t size, std::string* out) -> Status {
    SLUICE_ASSIGN_OR_RETURN(std::string_view bytes, view(offset, size));
    out->assign(bytes);
    return Status::Ok();
  };
  SLUICE_ASSIGN_OR_RETURN(FileFooter footer,
                          ReadFooter(data.size(), read, file, FooterOptions{}, true));
  SLUICE_ASSIGN_OR_RETURN(std::vector<size_t> fields, FieldsNamed(footer.schema, columns, file));
  return OpenWith(view, std::move(footer), fields, file, row_group, expected_rows, options);
}

Result<ParquetShardReader> ParquetShardReader::OpenPiece(std::string_view piece, const Piece& where,
                                                         std::string_view file, size_t row_group,
                                                         uint64_t expected_rows,
                                                         const ColumnDecodeOptions& options,
                                                         const std::vector<std::string>& columns) {
  const std::string name = std::string(file) + ": row group " + std::to_string(row_group);
  if (where.length > piece.size() || where.tail_bytes != piece.size() - where.length ||
      where.tail_bytes > where.file_bytes || where.length > where.file_bytes - where.tail_bytes) {
    return CorruptError(name + ": a piece of " + std::to_string(piece.size()) +
                        " bytes cannot hold " + std::to_string(where.length) +
                        " bytes of column chunks and the last " + std::to_string(where.tail_bytes) +
                        " of a file of " + std::to_string(where.file_bytes) + " bytes");
  }
  const uint64_t tail_start = where.file_bytes - where.tail_bytes;
  const std::string_view tail = piece.substr(where.length);
  // The footer is read from the tail the piece holds, and only from it.
  RangeReader tail_read = [&](uint64_t offset, uint64_t size, std::string* out) -> Status {
    if (offset < tail_start || size > where.tail_bytes || offset - tail_start > where.tail_bytes - size) {
      return CorruptError(name + ": the footer lies outside the " + std::to_string(where.tail_bytes) +
                          " bytes of the file's tail the piece holds");
    }
    out->assign(tail.substr(offset - tail_start, size));
    return Status::Ok();
  };
  FooterOptions footer_options;
  footer_options.first_read_bytes = where.tail_bytes;
  SLUICE_ASSIGN_OR_RETURN(FileFooter footer,
                          ReadFooter(where.file_bytes, tail_read, file, footer_options, false));
  if (row_group >= footer.meta.row_groups.size()) {
    return CorruptError(std::string(file) + ": no row group " + std::to_string(row_group) + " (" +
                        std::to_string(footer.meta.row_groups.size()) + " row groups)");
  }
  SLUICE_ASSIGN_OR_RETURN(std::vector<size_t> fields, FieldsNamed(footer.schema, columns, file));
  // The piece holds the chunks' reads back to back (chunk_reads.h).
  const std::vector<ByteRange> reads = ChunkReads(footer, row_group, fields);
  if (BytesOfReads(reads) != where.length) {
    return CorruptError(name + ": the piece holds " + std::to_string(where.length) +
                        " bytes of column chunks, its footer's reads of the columns " +
                        std::to_string(BytesOfReads(reads)));
  }
  std::vector<uint64_t> at(reads.size());  // each read's place in the piece
  for (size_t k = 1; k < reads.size(); ++k) at[k] = at[k - 1] + reads[k - 1].size;
  FileView view = [piece, reads, at, name](uint64_t offset, uint64_t size) -> Result<std::string_view> {
    auto it = std::upper_bound(reads.begin(), reads.end(), offset,
                               [](uint64_t o, const ByteRange& r) { return o < r.offset; });
    if (it != reads.begin()) {
      const size_t k = static_cast<size_t>(it - reads.begin()) - 1;
      const ByteRange& r = reads[k];
      if (size <= r.size && offset - r.offset <= r.size - size) {
        return piece.substr(at[k] + (offset - r.offset), size);
      }
    }
    if (size == 0) return std::string_view();
    return CorruptError(name + ": bytes [" + std::to_string(offset) + ", " +
                        std::to_string(offset + size) + ") lie outside the " +
                        std::to_string(reads.size()) + " ranges of column chunks fetched");
  };
  return OpenWith(view, std::move(footer), fields, file, row_group, expected_rows, options);
}

Status ParquetShardReader::State::OpenSegment(size_t c, uint64_t first_row,
                                              std::unique_ptr<RowSegment>* out) {
  auto seg = std::make_unique<RowSegment>();
  SLUICE_ASSIGN_OR_RETURN(seg->cursor, ColumnChunkCursor::Open(footer, row_group, fields[c], chunks[c],
                                                               file, options[c], first_row));
  *out = std::move(seg);
  return Status::Ok();
}

// The segment whose rows hold `row` ready to read, else the one that starts
// last at or before it (nullptr: none).
RowSegment* ParquetShardReader::State::SegmentFor(size_t c, uint64_t row) const {
  RowSegment* best = nullptr;
  for (const auto& seg : segments[c]) {
    const uint64_t first = seg->cursor->first_row();
    if (first > row) continue;
    const uint64_t ready = direct[c] ? seg->cursor->end_row() : first + seg->built;
    if (row < ready) return seg.get();
    if (best == nullptr || best->cursor->first_row() < first) best = seg.get();
  }
  return best;
}

// Decodes every column through `row` (UINT64_MAX: to its chunk's end) and
// makes the rows' views. Called with `mu` held exclusively.
Status ParquetShardReader::State::Prepare(uint64_t row) {
  if (!failed.ok()) return failed;
  Status st = [&]() -> Status {
    const size_t n = fields.size();
    for (size_t c = 0; c < n; ++c) {
      std::vector<std::unique_ptr<RowSegment>>& segs = segments[c];
      RowSegment* seg = SegmentFor(c, row);
      if (seg == nullptr) {
        // Before every segment: one from the row's page, or, once there are
        // kMaxSegments - 1, from row 0 (which then serves every later row).
        std::unique_ptr<RowSegment> fresh;
        SLUICE_RETURN_IF_ERROR(OpenSegment(c, segs.size() + 1 >= kMaxSegments ? 0 : row, &fresh));
        segs.push_back(std::move(fresh));
        seg = segs.back().get();
      } else if (row < rows && row > seg->cursor->first_row() &&
                 seg->cursor->end_row() == seg->cursor->first_row() && !seg->cursor->done()) {
        // Nothing decoded (so nothing read) yet: start at the row's page
        // instead of decoding the pages before it (a resume).
        for (auto& held : segs) {
          if (held.get() == seg) {
            SLUICE_RETURN_IF_ERROR(OpenSegment(c, row, &held));
            seg = held.get();
          }
        }
      }
      SLUICE_RETURN_IF_ERROR(seg->cursor->DecodeThrough(row));
      // Every row decoded: the chunk's end and totals are checked now.
      if (seg->cursor->end_row() >= rows && !seg->cursor->done()) {
        SLUICE_RETURN_IF_ERROR(seg->cursor->DecodeThrough(UINT64_MAX));
      }
      uint64_t held = 0;
      for (const auto& g : segs) held += g->cursor->HeldBytes();
      if (held > charged[c]) {
        SLUICE_RETURN_IF_ERROR(budget.Charge(held - charged[c], seg->cursor->buffer().leaf.path,
                                             "this column decoded"));
        charged[c] = held;
      }
    }
    for (size_t c = 0; c < n; ++c) SLUICE_RETURN_IF_ERROR(Build(c, *SegmentFor(c, row)));
    return Status::Ok();
  }();
  if (!st.ok()) failed = st;
  return st;
}

// The views of the segment's rows decoded whole and not yet made.
Status ParquetShardReader::State::Build(size_t c, RowSegment& seg) {
  if (direct[c]) return Status::Ok();
  const ColumnBuffer& b = seg.cursor->buffer();
  const FieldEncoding& enc = encodings[c];
  const uint64_t base = seg.cursor->first_row();
  const uint64_t end = std::min<uint64_t>(seg.cursor->end_row(), rows) - base;
  if (seg.built >= end) return Status::Ok();
  if (!b.deferred.empty()) b.deferred.GatherAll();
  SlotArray<std::string_view>& out = seg.values;
  if (!seg.charged_rows) {
    // Reserved whole: the views made never move.
    out.reserve(static_cast<size_t>(rows - base));
    seg.charged_rows = true;
    SLUICE_RETURN_IF_ERROR(budget.Charge(out.capacity() * sizeof(std::string_view), b.leaf.path,
                                         "this column's rows"));
  }
  out.resize(static_cast<size_t>(end));
  const Field& field = footer.schema.fields[fields[c]];
  const FieldEncoding leaf = LeafValueEncoding(b.leaf);  // a list's element
  const size_t text_before = text.size();
  for (size_t r = static_cast<size_t>(seg.built); r < end; ++r) {
    const auto row = static_cast<uint32_t>(base + r);  // the group's row
    switch (enc.bytes) {
      case FieldBytes::kFixed:
        if (b.validity[r]) out[r] = b.fixed_value(r).substr(0, enc.width);
        break;
      case FieldBytes::kView:
        if (b.validity[r]) {
          out[r] = NonNull(b.leaf.physical_type == PhysicalType::kByteArray ? b.binary[r]
                                                                             : b.fixed_value(r));
        }
        break;
      case FieldBytes::kInt96Nanos:
      case FieldBytes::kDecimalText:
        if (b.validity[r]) out[r] = Owned(&text, LeafText(b, enc, r));
        break;
      case FieldBytes::kPackedList: {
        const ListSlots& list = b.lists[0];
        if (!list.validity[r]) break;
        const auto from = static_cast<size_t>(list.offsets[r]);
        const auto to = static_cast<size_t>(list.offsets[r + 1]);
        // (No element of the chunk is null in most columns: no scan.)
        const bool masked = b.null_count > 0 &&
            std::memchr(b.validity.data() + from, 0, to - from) != nullptr;
        if (masked) {
          const std::string_view mask(reinterpret_cast<const char*>(b.validity.data() + from),
                                      to - from);
          std::vector<uint32_t>& mr = masked_rows[c];
          auto it = std::lower_bound(mr.begin(), mr.end(), row);
          if (it == mr.end() || *it != row) {
            masks[c].insert(masks[c].begin() + (it - mr.begin()), mask);
            mr.insert(it, row);
          }
          any_masked = true;
        }
        // A view when the values are of the encoding's width and in one
        // run (one page's values; null slots hold zeros); else packed into
        // a copy, zeros where an element is null.
        std::string_view whole;
        if (from == to) {
          out[r] = std::string_view(kEmpty, 0);
        } else if (b.width == enc.width && InOneRun(b, from, to, &whole)) {
          out[r] = whole;
        } else {
          std::string packed;
          packed.reserve((to - from) * enc.width);
          if (leaf.bytes == FieldBytes::kInt96Nanos) {
            for (size_t i = from; i < to; ++i) {
              if (b.validity[i]) {
                packed += LeafText(b, leaf, i);
              } else {
                packed.append(enc.width, '\0');
              }
            }
          } else {
            for (size_t i = from; i < to; ++i) packed.append(b.fixed_value(i).data(), enc.width);
          }
          out[r] = Owned(&text, std::move(packed));
        }
        break;
      }
      case FieldBytes::kJsonText: {
        JsonValue v = SlotJson(b, leaf, 0, r);
        if (std::holds_alternative<std::nullptr_t>(v.v)) break;
        auto dumped = DumpPyJson(v, false);
        if (!dumped.ok()) {
          return dumped.status().WithContext(file + ": row group " + std::to_string(row_group) +
                                             " column \"" + field.name + "\" row " +
                                             std::to_string(row));
        }
        out[r] = Owned(&text, std::move(*dumped));
        break;
      }
    }
  }
  seg.built = end;
  uint64_t text_bytes = 0;
  for (size_t t = text_before; t < text.size(); ++t) text_bytes += text[t]->capacity();
  return budget.Charge(text_bytes, b.leaf.path, "this column's text");
}

Result<ParquetShardReader> ParquetShardReader::OpenWith(const FileView& view, FileFooter footer,
                                                        const std::vector<size_t>& fields,
                                                        std::string_view file, size_t row_group,
                                                        uint64_t expected_rows,
                                                        const ColumnDecodeOptions& options) {
  if (row_group >= footer.meta.row_groups.size()) {
    return CorruptError(std::string(file) + ": no row group " + std::to_string(row_group) + " (" +
                        std::to_string(footer.meta.row_groups.size()) + " row groups)");
  }
  const int64_t rows = footer.meta.row_groups[row_group].num_rows;
  if (rows < 0 || static_cast<uint64_t>(rows) != expected_rows || rows > INT32_MAX) {
    return CorruptError(std::string(file) + ": row group " + std::to_string(row_group) + " holds " +
                        std::to_string(rows) + " rows, the index says " +
                        std::to_string(expected_rows));
  }
  auto state = std::make_shared<State>();
  State& s = *state;
  s.file = std::string(file);
  s.row_group = row_group;
  s.rows = static_cast<uint32_t>(rows);
  s.lazy = options.lazy_rows;
  s.footer = std::move(footer);
  s.fields = fields;
  // Views of `data` are not the reader's: its buffers and arrays are.
  s.budget = RowGroupBudget(options.max_row_group_bytes, s.file, row_group);
  for (size_t f : fields) {
    const Field& field = s.footer.schema.fields[f];
    s.names.push_back(field.name);
    SLUICE_ASSIGN_OR_RETURN(FieldEncoding enc, FieldEncodingOf(s.footer.schema, f, file));
    const ByteRange r = s.footer.chunk_ranges[row_group][field.first_leaf];
    SLUICE_ASSIGN_OR_RETURN(std::string_view chunk, view(r.offset, r.size));
    s.chunks.push_back(chunk);
    // A column read in place (its rows are its buffer's byte arrays as
    // they are) copies its large gathered values as their rows are read
    // (ReadRow); any other has them copied before its rows are made.
    const bool direct = enc.bytes == FieldBytes::kView && field.list_depth == 0 &&
                        s.footer.schema.leaves[field.first_leaf].physical_type == PhysicalType::kByteArray;
    ColumnDecodeOptions column_options = options;
    column_options.defer_large_gathers = enc.bytes == FieldBytes::kView;
    s.options.push_back(column_options);
    s.direct.push_back(direct);
    s.encodings.push_back(std::move(enc));
  }
  const size_t n = fields.size();
  s.segments.resize(n);
  s.masked_rows.resize(n);
  s.masks.resize(n);
  s.charged.assign(n, 0);
  for (size_t c = 0; c < n; ++c) {
    std::unique_ptr<RowSegment> seg;
    SLUICE_RETURN_IF_ERROR(s.OpenSegment(c, 0, &seg));
    s.segments[c].push_back(std::move(seg));
  }
  if (!s.lazy) SLUICE_RETURN_IF_ERROR(s.Prepare(UINT64_MAX));
  ParquetShardReader reader;
  reader.state_ = std::move(state);
  return reader;
}

uint32_t ParquetShardReader::num_rows() const { return state_ ? state_->rows : 0; }

const std::vector<std::string>& ParquetShardReader::column_names() const {
  static const std::vector<std::string> kNone;
  return state_ ? state_->names : kNone;
}

const std::vector<FieldEncoding>& ParquetShardReader::encodings() const {
  static const std::vector<FieldEncoding> kNone;
  return state_ ? state_->encodings : kNone;
}

bool ParquetShardReader::has_masked_rows() const {
  if (!state_) return false;
  std::shared_lock<std::shared_mutex> lock(state_->mu);
  return state_->any_masked;
}

size_t ParquetShardReader::data_pages_decoded() const {
  if (!state_) return 0;
  std::shared_lock<std::shared_mutex> lock(state_->mu);
  size_t pages = 0;
  for (const auto& segs : state_->segments) {
    for (const auto& seg : segs) pages += seg->cursor->data_pages_decoded();
  }
  return pages;
}

Status ParquetShardReader::ReadRow(uint32_t row, std::vector<std::string_view>* fields) const {
  return ReadRow(row, fields, nullptr);
}

Status ParquetShardReader::ReadRow(uint32_t row, std::vector<std::string_view>* fields,
                                   std::vector<MaskedField>* masked, RowScratch* scratch,
                                   std::vector<PiecedField>* pieced) const {
  if (!state_) return InternalError("Parquet shard reader was not opened");
  State& s = *state_;
  if (row >= s.rows) {
    return OutOfRangeError(s.file + ": row " + std::to_string(row) + " is past the end (" +
                           std::to_string(s.rows) + " rows)");
  }
  if (masked != nullptr) masked->clear();
  if (pieced != nullptr) pieced->clear();
  const size_t n = s.fields.size();
  fields->resize(n);
  if (scratch != nullptr && scratch->columns.size() < n) scratch->columns.resize(n);
  // (No array of the segments found: a row's read allocates nothing.)
  const auto ready = [&] {
    for (size_t c = 0; c < n; ++c) {
      const RowSegment* seg = s.SegmentFor(c, row);
      if (seg == nullptr) return false;
      const uint64_t first = seg->cursor->first_row();
      if (row >= (s.direct[c] ? seg->cursor->end_row() : first + seg->built)) return false;
    }
    return true;
  };
  std::shared_lock<std::shared_mutex> lock(s.mu);
  if (!ready()) {
    // Not decoded yet: its pages are, one thread at a time (lazy_rows).
    lock.unlock();
    {
      std::unique_lock<std::shared_mutex> decoding(s.mu);
      if (!ready()) SLUICE_RETURN_IF_ERROR(s.Prepare(row));
    }
    lock.lock();
    if (!ready()) {
      return CorruptError(s.file + ": row group " + std::to_string(s.row_group) + ": row " +
                          std::to_string(row) + " is not in its column chunks' pages");
    }
  }
  for (size_t c = 0; c < n; ++c) {
    const RowSegment& seg = *s.SegmentFor(c, row);  // ready: it holds the row
    const size_t r = static_cast<size_t>(row - seg.cursor->first_row());
    if (s.direct[c]) {
      const ColumnBuffer& b = seg.cursor->buffer();
      (*fields)[c] = InPlaceField(b, static_cast<uint32_t>(r));
      if (b.deferred.empty()) {
        // most columns defer nothing
      } else if (pieced != nullptr) {
        const std::span<const std::string_view> pieces = b.deferred.Pieces((*fields)[c]);
        if (!pieces.empty()) pieced->push_back(PiecedField{(*fields)[c], pieces});
      } else if (scratch == nullptr) {
        b.deferred.Ensure((*fields)[c]);
      } else {
        Result<std::string_view> v = b.deferred.Transient((*fields)[c], &scratch->columns[c]);
        if (!v.ok()) {
          return v.status().WithContext(s.file + ": row group " + std::to_string(s.row_group) +
                                        " column \"" + s.names[c] + "\" row " + std::to_string(row));
        }
        (*fields)[c] = *v;
      }
    } else {
      (*fields)[c] = seg.values[r];
    }
    if (!s.any_masked) continue;
    const std::vector<uint32_t>& rows = s.masked_rows[c];
    if (rows.empty()) continue;
    auto it = std::lower_bound(rows.begin(), rows.end(), row);
    if (it == rows.end() || *it != row) continue;
    if (masked == nullptr) {
      return UnimplementedError(s.file + ": row group " + std::to_string(s.row_group) +
                                " column \"" + s.names[c] + "\" row " + std::to_string(row) +
                                ": the list holds a null element, which " + s.encodings[c].name +
                                " (packed values) cannot hold");
    }
    masked->push_back(MaskedField{(*fields)[c], s.masks[c][it - rows.begin()]});
  }
  return Status::Ok();
}

}  // namespace sluice::parquet
