#include "engine/dataset/parquet_stream_index.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>

#include "base/file.h"
#include "base/parallel_claims.h"
#include "engine/cache/cache_layout.h"
#include "engine/dataset/file_listing_index.h"
#include "engine/dataset/parquet_footer_store.h"
#include "engine/dataset/stream_index.h"
#include "formats/codec/hashes.h"
#include "formats/parquet/chunk_reads.h"
#include "formats/parquet/footer.h"
#include "formats/parquet/parquet_index.h"
#include "stores/file/file_store.h"

namespace sluice {
namespace {

constexpr std::string_view kPieceFolder = ".parquet_row_groups/";
constexpr size_t kMaxPieceName = 200;

// The footers' decode: files a round (its entries are held until the round
// is appended), files a claim (a thread takes that many at once) and the
// threads at most (ParallelClaims).
constexpr size_t kDecodeRound = 1 << 15;
constexpr size_t kDecodeClaim = 64;
constexpr size_t kDecodeThreads = 8;

// The configuration and fields of a schema's shards (ShardRowsOfFile's;
// row_groups left empty), shared by the files a decode thread reads while
// it keeps that schema: one copy a schema, where each file held its own
// (at 32,768 files a round, ~28 MB of entries and ~7 allocations a file).
using SchemaShards = std::shared_ptr<const parquet::FileShardRows>;

// One file's row groups as pieces, made on a decode thread: the
// configuration they share and, a row group each, what a piece's entry
// holds of its own.
struct FilePieces {
  SchemaShards schema;
  struct Piece {
    uint64_t samples = 0;
    uint32_t row_group = 0;
    ShardEntry::FilePiece piece;
    std::string name;  // raw_data.basename: RowGroupPieceName
  };
  std::vector<Piece> pieces;  // a row group with rows each, in order
};

// RowGroupPieceName in two parts: what a file's pieces share (the escaped
// path and the tags of its etag and column set), then a row group's. A
// decoding thread keeps one, set again file after file: its two strings
// are not allocated again a file.
struct PieceNames {
  // Built in one pass, the etag's tag hashed by AppendXxh64Hex: a file at
  // a time, a search for '%' or '/' a character and HashHex's lookup and
  // copies cost ~1.9k instructions a file (5% of a first open).
  void Set(std::string_view file, std::string_view etag, std::string_view column_set) {
    head.clear();
    tail.clear();
    size_t specials = 0;
    for (char c : file) specials += c == '%' || c == '/';
    const size_t escaped = file.size() + 2 * specials;
    if (escaped > kMaxPieceName) {
      // A sub-folder: an escaped name holds no '/', so none is there.
      head.reserve(kPieceFolder.size() + 5 + 16 + 1);
      head += kPieceFolder;
      head += "long/";
      AppendXxh64Hex(&head, file);
    } else {
      head.reserve(kPieceFolder.size() + escaped + 1);  // and '@'
      head.resize(kPieceFolder.size() + escaped);
      char* out = head.data();
      std::memcpy(out, kPieceFolder.data(), kPieceFolder.size());
      out += kPieceFolder.size();
      for (char c : file) {
        if (c == '%' || c == '/') {
          *out++ = '%';  // %25 or %2F
          *out++ = '2';
          *out++ = c == '%' ? '5' : 'F';
        } else {
          *out++ = c;
        }
      }
    }
    head += '@';
    if (!etag.empty()) {
      tail.reserve(2 + 16 + (column_set.empty() ? 0 : 1 + column_set.size()));
      tail += ".e";
      AppendXxh64Hex(&tail, etag);
    }
    if (!column_set.empty()) {
      tail += '.';
      tail += column_set;
    }
  }

  std::string Of(uint32_t row_group) const {
    std::string name;
    Into(row_group, &name);
    return name;
  }
  // Of's name into `*name` (its capacity kept).
  void Into(uint32_t row_group, std::string* name) const {
    char digits[16];
    const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, row_group);
    name->clear();
    name->reserve(head.size() + static_cast<size_t>(end - digits) + tail.size());
    *name += head;
    name->append(digits, end);
    *name += tail;
  }

  std::string head;  // ".parquet_row_groups/<escaped path>@"
  std::string tail;  // ".e<etag hash>" and ".<column set tag>", each when there is one
};

// A decoding thread's scratch, kept file after file so that a file's
// pieces allocate nothing once the thread's first files have sized it:
// its row groups with rows, a row group's chunk reads and its piece names.
struct PiecesScratch {
  std::vector<uint32_t> row_groups;
  std::vector<parquet::ByteRange> reads;
  PieceNames names;
};

// Every row group of `file` as a piece into `*out` (its pieces' strings
// and vector reused: an answer made again, not a new one): the reads of
// its chunks of `columns` (all when empty, whose ColumnSetTag is
// `column_set`), then the footer tail. Errors name the file's URL, `where`
// + its path (made only for an error, not a string a file). `footer` is
// the decoding thread's, used again file after file (DecodeFooterInto);
// `kept`, the thread's too, the shards of footer's schema while it is kept
// (else null); `scratch`, the thread's.
Status PiecesOfFile(const ListedFile& file, std::string_view tail, std::string_view where,
                    const std::vector<std::string>& columns, std::string_view column_set,
                    parquet::FileFooter& footer, SchemaShards& kept, PiecesScratch& scratch,
                    FilePieces* out) {
  const uint64_t size = file.size.value_or(0);
  const auto url = [&] { return std::string(where) + file.path; };
  SLUICE_ASSIGN_OR_RETURN(uint32_t length, parquet::ParseFooterLength(tail, size, file.path));
  if (uint64_t{length} + 8 != tail.size()) {
    return CorruptError(file.path + ": the footer store holds a tail of " +
                        std::to_string(tail.size()) + " bytes for a footer of " +
                        std::to_string(length));
  }
  static const parquet::FooterOptions kOptions = parquet::IndexFooterOptions();
  Status decoded =
      parquet::DecodeFooterInto(tail.substr(0, length), size, file.path, kOptions, &footer);
  if (!decoded.ok() || !footer.schema_source.kept) kept.reset();
  if (!decoded.ok()) return decoded.WithContext(url());
  // While the schema is kept file after file, so are its fields and
  // their configuration: only the row groups are read.
  std::vector<uint32_t>& row_groups = scratch.row_groups;
  if (kept) {
    Status groups = parquet::ShardRowGroupsOfFileInto(file, footer, &row_groups);
    if (!groups.ok()) return groups.WithContext(url());
  } else {
    auto rows = parquet::ShardRowsOfFile(file, footer, columns);
    if (!rows.ok()) return rows.status().WithContext(url());
    row_groups.swap(rows->row_groups);
    rows->row_groups.clear();
    kept = std::make_shared<const parquet::FileShardRows>(std::move(*rows));
  }
  out->schema = kept;
  out->pieces.resize(row_groups.size());
  scratch.names.Set(file.path, file.etag, column_set);
  for (size_t k = 0; k < row_groups.size(); ++k) {
    const uint32_t rg = row_groups[k];
    parquet::ChunkReadsInto(footer, rg, kept->fields, parquet::kChunkReadGapBytes,
                            &scratch.reads);
    const std::vector<parquet::ByteRange>& reads = scratch.reads;
    FilePieces::Piece& p = out->pieces[k];
    p.samples = static_cast<uint64_t>(footer.meta.row_groups[rg].num_rows);
    p.row_group = rg;
    ShardEntry::FilePiece& piece = p.piece;
    piece.file.assign(file.path);
    piece.file_bytes = size;
    piece.offset = reads.empty() ? 4 : reads.front().offset;
    piece.length = parquet::BytesOfReads(reads);
    piece.tail_bytes = tail.size();
    piece.etag.assign(file.etag);
    scratch.names.Into(rg, &p.name);
  }
  return Status::Ok();
}

// Piece `k` of `f` as a table's shard, by view into `f`: the one rule from
// a piece to a shard (RemoteIndex's entries are made from it too).
ShardParts PartsOf(const FilePieces& f, size_t k) {
  const FilePieces::Piece& p = f.pieces[k];
  ShardParts parts;
  parts.samples = p.samples;
  parts.raw_data = FileParts{p.name, p.piece.length + p.piece.tail_bytes, {}};
  parts.row_group = p.row_group;
  parts.piece = &p.piece;
  return parts;
}

Result<Index> LocalIndex(const StreamOptions& stream, const std::vector<ListedFile>& files,
                         const std::vector<std::string>& columns, Env* env) {
  const std::string root = StreamRoot(stream);
  return parquet::IndexOfLocalParquetFiles(root, files, columns, env);
}

using PiecesSink = std::function<Status(const ListedFile&, const FilePieces&)>;

// The footers' decode while the footer store is made: each tail decoded on
// the reading thread that read it, while it is in memory, and the pieces
// handed to `sink` in file order by the store's writer; the first error in
// file order (a decode's or the sink's) is kept, and no file after it is
// sunk.
class PiecesOfReadTails final : public ParquetTailConsumer {
 public:
  PiecesOfReadTails(const std::vector<ListedFile>& files, const std::string& where,
                    const std::vector<std::string>& columns, const std::string& column_set,
                    const PiecesSink& sink)
      : files_(files), where_(where), columns_(columns), column_set_(column_set), sink_(sink) {}
  ~PiecesOfReadTails() override = default;

  std::unique_ptr<Reader> NewReader() override { return std::make_unique<Decoder>(*this); }

  void Take(size_t file, Result<std::unique_ptr<Answer>> answer) override {
    if (!status_.ok()) return;
    if (!answer.ok()) {
      status_ = answer.status();
      return;
    }
    try {
      status_ = sink_(files_[file], static_cast<const Pieces&>(**answer).pieces);
      spent_.Give(std::unique_ptr<Pieces>(static_cast<Pieces*>(answer->release())));
    } catch (const std::exception& e) {
      status_ = InternalError(files_[file].path + ": footer: " + e.what());
    }
  }

  const Status& status() const { return status_; }

 private:
  struct Pieces final : Answer {
    FilePieces pieces;
  };
  // Answers the writer has sunk, given back to the readers to fill again:
  // a file's answer, its pieces' vector and strings were ~8 allocations
  // and their frees a file (~1.7k instructions), made on 16 readers and
  // freed on the one writer. Moved a batch at a time (one lock each way
  // for kSpentBatch answers); at most the answers alive at once are kept.
  class SpentAnswers {
   public:
    static constexpr size_t kSpentBatch = 32;
    // The writer's: `answer` is kept for a reader.
    void Give(std::unique_ptr<Pieces> answer) {
      given_.push_back(std::move(answer));
      if (given_.size() < kSpentBatch) return;
      std::lock_guard lock(mu_);
      for (auto& a : given_) spent_.push_back(std::move(a));
      given_.clear();
    }
    // A reader's: up to kSpentBatch / 4 answers moved into `*into`.
    void Refill(std::vector<std::unique_ptr<Pieces>>* into) {
      std::lock_guard lock(mu_);
      for (size_t n = 0; n < kSpentBatch / 4 && !spent_.empty(); ++n) {
        into->push_back(std::move(spent_.back()));
        spent_.pop_back();
      }
    }

   private:
    std::vector<std::unique_ptr<Pieces>> given_;  // the writer's, not yet shared
    std::mutex mu_;
    std::vector<std::unique_ptr<Pieces>> spent_;
  };
  // A reading thread's decode: its footer used again file after file, and
  // the shards of its schema while kept (PiecesOfFile).
  class Decoder final : public Reader {
   public:
    explicit Decoder(PiecesOfReadTails& owner) : owner_(owner) {}
    Result<std::unique_ptr<Answer>> Read(size_t file, std::string_view tail) override {
      const ListedFile& f = owner_.files_[file];
      try {
        if (spare_.empty()) owner_.spent_.Refill(&spare_);
        std::unique_ptr<Pieces> answer;
        if (spare_.empty()) {
          answer = std::make_unique<Pieces>();
        } else {
          answer = std::move(spare_.back());
          spare_.pop_back();
        }
        Status made = PiecesOfFile(f, tail, owner_.where_, owner_.columns_, owner_.column_set_,
                                   footer_, kept_, scratch_, &answer->pieces);
        if (!made.ok()) {
          spare_.push_back(std::move(answer));
          return made;
        }
        return std::unique_ptr<Answer>(std::move(answer));
      } catch (const std::exception& e) {
        kept_.reset();
        return InternalError(f.path + ": footer: " + e.what());
      }
    }

   private:
    PiecesOfReadTails& owner_;
    parquet::FileFooter footer_;
    SchemaShards kept_;
    PiecesScratch scratch_;
    std::vector<std::unique_ptr<Pieces>> spare_;  // answers to fill again
  };

  const std::vector<ListedFile>& files_;
  const std::string& where_;
  const std::vector<std::string>& columns_;
  const std::string& column_set_;
  const PiecesSink& sink_;
  SpentAnswers spent_;
  Status status_ = Status::Ok();
};

// Each file's pieces, decoded from its footer: as the tails are read
// (PiecesOfReadTails) where the node keeps no footer store
// (KeepsParquetFooterStore) or this process makes it, else from the node's
// store on several threads (the decode is the
// node's first process's largest cost: 1M footers), a round of
// kDecodeRound files at a time, so that only one round's pieces wait;
// handed to `sink` in file order, and the first error in file order is
// the one returned, as a serial loop would.
// Every tail of `files` read from `remote` and decoded as it is read
// (PiecesOfReadTails), no store kept; with `unstated` (`files` itself),
// files without a size read from their ends, sized as they are read
// (ReadEveryParquetTail). A read's error is returned; else the first
// decode's or sink's, in file order.
Status DecodeReadTails(const StreamOptions& stream, RemoteSource& remote,
                       const std::vector<ListedFile>& files, std::vector<ListedFile>* unstated,
                       const std::vector<std::string>& columns, const PiecesSink& sink) {
  const std::string prefix = RemoteKey(stream, "");
  const std::string where = remote.Describe() + "/" + prefix;
  const std::string column_set = ColumnSetTag(columns);
  PiecesOfReadTails as_read(files, where, columns, column_set, sink);
  SLUICE_RETURN_IF_ERROR(unstated ? ReadEveryParquetTail(unstated, prefix, remote, as_read)
                                  : ReadEveryParquetTail(files, prefix, remote, as_read));
  return as_read.status();
}

Status DecodePieces(const StreamOptions& stream, RemoteSource& remote,
                    const std::vector<ListedFile>& files, const std::string& source,
                    const std::vector<std::string>& columns,
                    std::chrono::milliseconds wait_timeout, Env* env, const std::string& fingerprint,
                    const PiecesSink& sink) {
  if (!KeepsParquetFooterStore(remote)) {
    return DecodeReadTails(stream, remote, files, nullptr, columns, sink);
  }
  const std::string state_dir = JoinPath(StreamRoot(stream), cache_layout::kStateDir);
  const std::string prefix = RemoteKey(stream, "");
  const std::string where = remote.Describe() + "/" + prefix;
  const std::string column_set = ColumnSetTag(columns);
  PiecesOfReadTails as_read(files, where, columns, column_set, sink);
  bool consumed = false;
  SLUICE_ASSIGN_OR_RETURN(
      ParquetFooterStore store,
      LoadOrMakeParquetFooterStore(ParquetFooterStorePath(state_dir), state_dir, source, files,
                                   prefix, remote, wait_timeout, env, &as_read, &consumed,
                                   fingerprint));
  if (consumed) return as_read.status();
  // The store's records are in path order, as a listing is: file i's
  // record is the i-th when no file was left out or reordered.
  auto pieces = [&](const ListedFile& f, size_t i, parquet::FileFooter& footer,
                    SchemaShards& kept, PiecesScratch& scratch, FilePieces* out) -> Status {
    auto held = store.Find(f.path, i);
    if (!held.ok() && held.status().code() == StatusCode::kNotFound) {
      return CorruptError(held.status().message());
    }
    SLUICE_RETURN_IF_ERROR(held.status());
    return PiecesOfFile(f, held->tail, where, columns, column_set, footer, kept, scratch, out);
  };
  // A round's pieces, filled again round after round.
  std::vector<FilePieces> round;
  std::vector<Status> made;
  for (size_t start = 0; start < files.size(); start += kDecodeRound) {
    const size_t n = std::min(kDecodeRound, files.size() - start);
    round.resize(n);
    made.assign(n, Status::Ok());
    ParallelClaims(n, kDecodeClaim, kDecodeThreads, [&](size_t begin, size_t end) {
      parquet::FileFooter footer;  // a claim's files decoded into one
      SchemaShards kept;
      PiecesScratch scratch;
      for (size_t j = begin; j < end; ++j) {
        try {
          made[j] = pieces(files[start + j], start + j, footer, kept, scratch, &round[j]);
        } catch (const std::exception& e) {
          kept.reset();
          made[j] = InternalError(files[start + j].path + ": footer: " + e.what());
        }
      }
    });
    for (size_t j = 0; j < n; ++j) {
      SLUICE_RETURN_IF_ERROR(made[j]);
      SLUICE_RETURN_IF_ERROR(sink(files[start + j], round[j]));
    }
  }
  return Status::Ok();
}

Status NoRowError(const std::string& source, size_t files) {
  return NotFoundError(source + ": no row in the " + std::to_string(files) + " Parquet files");
}

Result<Index> RemoteIndex(const StreamOptions& stream, RemoteSource& remote,
                          const std::vector<ListedFile>& files, const std::string& source,
                          const std::vector<std::string>& columns,
                          std::chrono::milliseconds wait_timeout, Env* env,
                          const std::string& fingerprint) {
  Index index;
  SLUICE_RETURN_IF_ERROR(DecodePieces(
      stream, remote, files, source, columns, wait_timeout, env, fingerprint,
      [&](const ListedFile&, const FilePieces& f) -> Status {
        for (size_t k = 0; k < f.pieces.size(); ++k) {
          const ShardParts parts = PartsOf(f, k);
          ShardEntry& e = index.shards.emplace_back(f.schema->config);
          e.samples = parts.samples;
          e.raw_data.basename = std::string(parts.raw_data.basename);
          e.raw_data.bytes = parts.raw_data.bytes;
          e.row_group = parts.row_group;
          e.piece = *parts.piece;
        }
        return Status::Ok();
      }));
  if (index.shards.empty()) return NoRowError(source, files.size());
  return index;
}

// RemoteIndex's shards straight into a table: each file's pieces added in
// file order as they come, no entry made for any.
class TableOfPieces {
 public:

  // Room for a row group a file of `files`, each named twice (its piece's
  // name holds its path, escaped, and a suffix: the folder, '@', the group
  // and the etag's tag) and its etag once: a hint, grown past when wrong.
  // Without the etag, a local folder's 27-byte tags outgrew it at 1M
  // files: the text (~107 MB) copied once into twice the room. A file
  // listed by name alone has no etag yet: a local tag's usual length.
  void Reserve(const std::vector<ListedFile>& files) {
    size_t text = 0;
    for (const ListedFile& f : files) {
      text += 2 * f.path.size() + (f.size ? f.etag.size() : kLocalFileTagUsualBytes) + 48;
    }
    builder_.Reserve(files.size(), files.size(), text, files.size());
  }
  PiecesSink Sink() {
    return [this](const ListedFile&, const FilePieces& f) -> Status {
      for (size_t k = 0; k < f.pieces.size(); ++k) {
        if (last_ == f.schema) {
          SLUICE_RETURN_IF_ERROR(builder_.AddWithLastConfig(PartsOf(f, k)));
        } else {
          SLUICE_RETURN_IF_ERROR(builder_.Add(f.schema->config, PartsOf(f, k)));
          last_ = f.schema;
        }
      }
      shards_ += f.pieces.size();
      return Status::Ok();
    };
  }
  // The table of `files` (of `source`; NoRowError without a row).
  Result<ShardTable> Finish(const std::string& source, size_t files) && {
    if (shards_ == 0) return NoRowError(source, files);
    return std::move(builder_).Finish();
  }

 private:
  ShardTable::Builder builder_;
  size_t shards_ = 0;
  // The last shard's configuration, held: a file of the same schema object
  // has the same one, not compared again (~0.5k instructions a file).
  SchemaShards last_;
};

Result<ShardTable> RemoteTable(const StreamOptions& stream, RemoteSource& remote,
                               const std::vector<ListedFile>& files, const std::string& source,
                               const std::vector<std::string>& columns,
                               std::chrono::milliseconds wait_timeout, Env* env,
                               const std::string& fingerprint) {
  TableOfPieces table;
  table.Reserve(files);
  SLUICE_RETURN_IF_ERROR(DecodePieces(stream, remote, files, source, columns, wait_timeout, env,
                                      fingerprint, table.Sink()));
  return std::move(table).Finish(source, files.size());
}

// The listing of a stream, selected for Parquet (LoadParquetStreamIndex's
// first step). *fingerprint: ListingFingerprint of the answer when the kept
// listing's is it (every listed file selected, in its order), else "".
Result<std::vector<ListedFile>> ParquetFiles(const StreamOptions& stream,
                                             const FileDatasetOptions& options,
                                             RemoteSource* remote,
                                             std::chrono::milliseconds wait_timeout,
                                             bool* found_files, std::string* source, Env* env,
                                             std::string* fingerprint,
                                             const ListingCompleter* complete = nullptr) {
  if (found_files) *found_files = false;
  std::vector<std::string> uncommitted;
  Result<std::vector<ListedFile>> listed =
      LoadStreamListing(stream, options, remote, wait_timeout, source, &uncommitted, env,
                        fingerprint, complete);
  // A remote listing that failed, where the store can list, is the error
  // to report (a sub-folder's listing, say), not a folder without files.
  if (!listed.ok() && remote && listed.status().code() != StatusCode::kUnimplemented &&
      found_files) {
    *found_files = true;
  }
  SLUICE_ASSIGN_OR_RETURN(std::vector<ListedFile> files, std::move(listed));
  bool unchanged = false;
  SLUICE_ASSIGN_OR_RETURN(files, SelectFiles(std::move(files), ParquetStreamSelection(options),
                                             *source, uncommitted, &unchanged));
  if (!unchanged) fingerprint->clear();
  if (found_files) *found_files = true;
  return files;
}

}  // namespace

FileSelection ParquetStreamSelection(const FileDatasetOptions& options) {
  return options.selection.globs.empty() ? parquet::ParquetFileSelection() : options.selection;
}

std::string RowGroupPieceName(std::string_view file, uint32_t row_group,
                              const std::vector<std::string>& columns, std::string_view etag) {
  PieceNames names;
  names.Set(file, etag, ColumnSetTag(columns));
  return names.Of(row_group);
}

std::string ColumnSetTag(const std::vector<std::string>& columns) {
  if (columns.empty()) return "";
  // The set, not the order: a piece holds the chunks in file order.
  std::vector<std::string> sorted = columns;
  std::sort(sorted.begin(), sorted.end());
  std::string set;
  for (const std::string& c : sorted) set += std::to_string(c.size()) + ":" + c;
  auto hex = HashHex("xxh64", set);
  return "c" + (hex.ok() ? *hex : std::string("0"));
}

Result<Index> LoadParquetStreamIndex(const StreamOptions& stream, const FileDatasetOptions& options,
                                     RemoteSource* remote, std::chrono::milliseconds wait_timeout,
                                     bool* found_files, Env* env) {
  std::string source, fingerprint;
  SLUICE_ASSIGN_OR_RETURN(std::vector<ListedFile> files,
                          ParquetFiles(stream, options, remote, wait_timeout, found_files, &source,
                                       env, &fingerprint));
  if (!remote) return LocalIndex(stream, files, options.columns, env);
  return RemoteIndex(stream, *remote, files, source, options.columns, wait_timeout, env,
                     fingerprint);
}

Result<ShardTable> LoadParquetStreamTable(const StreamOptions& stream,
                                          const FileDatasetOptions& options, RemoteSource* remote,
                                          std::chrono::milliseconds wait_timeout,
                                          bool* found_files, Env* env,
                                          std::unique_ptr<GuessedPieceHead>* guess) {
  if (guess) guess->reset();
  std::string source, fingerprint;
  // Where this process makes the node's listing of a folder on the local
  // disk (LoadStreamListing's `complete`), the footers are read, and the
  // table built, as the listing is sized: each file's name looked up once.
  // The files read are those SelectFiles will keep (its rule, IsSelected,
  // asked of each); its errors still come from it, once all are sized.
  TableOfPieces table;
  std::optional<Status> built;  // the completer's decode: the table is built
  size_t built_files = 0;
  ListingCompleter complete = [&](std::vector<ListedFile>* listed) -> Status {
    const FileSelection selection = ParquetStreamSelection(options);
    std::vector<size_t> at;  // each selected file's place in *listed
    for (size_t i = 0; i < listed->size(); ++i) {
      const std::string& path = (*listed)[i].path;
      if (IsSelected(path, selection) && IsSafeBasename(path)) at.push_back(i);
    }
    // Every file selected (a folder of Parquet files alone): read in
    // place, not moved into a second list (80 MB at a million).
    std::vector<ListedFile> some;
    const bool all = at.size() == listed->size();
    if (!all) {
      some.reserve(at.size());
      for (size_t i : at) some.push_back(std::move((*listed)[i]));
    }
    std::vector<ListedFile>& selected = all ? *listed : some;
    table.Reserve(selected);
    Status decoded =
        DecodeReadTails(stream, *remote, selected, &selected, options.columns, table.Sink());
    bool read_all = true;  // else the reads stopped at an error
    for (const ListedFile& f : selected) read_all = read_all && f.size.has_value();
    if (!all) {
      for (size_t k = 0; k < at.size(); ++k) (*listed)[at[k]] = std::move(some[k]);
    }
    // A read's error fails the listing (it is made again by the next
    // open); a decode's is the open's, after the listing is kept, as
    // where the footers are read after it.
    if (!read_all) return decoded;
    built = std::move(decoded);
    built_files = at.size();
    return Status::Ok();
  };
  SLUICE_ASSIGN_OR_RETURN(std::vector<ListedFile> files,
                          ParquetFiles(stream, options, remote, wait_timeout, found_files, &source,
                                       env, &fingerprint, remote ? &complete : nullptr));
  if (built) {
    SLUICE_RETURN_IF_ERROR(*built);
    if (files.size() != built_files) {
      return InternalError(source + ": " + std::to_string(built_files) +
                           " Parquet files read as listed, " + std::to_string(files.size()) +
                           " selected");
    }
    return std::move(table).Finish(source, files.size());
  }
  // The first row group's head beside the footers: only where they are
  // read from the remote (a round trip to overlap) and every column is
  // (the first chunk is then the file's first bytes).
  if (guess && remote && !files.empty() && files.front().size && options.columns.empty() &&
      !FileExists(ParquetFooterStorePath(JoinPath(StreamRoot(stream), cache_layout::kStateDir)),
                  env)) {
    const ListedFile& first = files.front();
    *guess = std::make_unique<GuessedPieceHead>(*remote, RemoteKey(stream, first.path), first.path,
                                                ObjectVersion(first.etag, *first.size));
  }
  if (!remote) {
    SLUICE_ASSIGN_OR_RETURN(Index index, LocalIndex(stream, files, options.columns, env));
    return ShardTable::FromIndex(index);
  }
  return RemoteTable(stream, *remote, files, source, options.columns, wait_timeout, env,
                     fingerprint);
}

}  // namespace sluice
