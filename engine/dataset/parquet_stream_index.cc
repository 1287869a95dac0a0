#include "engine/dataset/parquet_stream_index.h"

#include <algorithm>
#include <exception>

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

// Every row group of `file` as a piece: the reads of its chunks of
// `columns` (all when empty), then the footer tail.
Result<std::vector<ShardEntry>> PiecesOfFile(const ListedFile& file, std::string_view tail,
                                             const std::string& url,
                                             const std::vector<std::string>& columns) {
  const uint64_t size = file.size.value_or(0);
  SLUICE_ASSIGN_OR_RETURN(uint32_t length, parquet::ParseFooterLength(tail, size, file.path));
  if (uint64_t{length} + 8 != tail.size()) {
    return CorruptError(file.path + ": the footer store holds a tail of " +
                        std::to_string(tail.size()) + " bytes for a footer of " +
                        std::to_string(length));
  }
  auto footer = parquet::DecodeFooter(tail.substr(0, length), size, file.path);
  if (!footer.ok()) return footer.status().WithContext(url);
  auto entries = parquet::ShardsOfFile(file, *footer, columns);
  if (!entries.ok()) return entries.status().WithContext(url);
  SLUICE_ASSIGN_OR_RETURN(std::vector<size_t> fields,
                          parquet::FieldsNamed(footer->schema, columns, file.path));
  for (ShardEntry& e : *entries) {
    const std::vector<parquet::ByteRange> reads = parquet::ChunkReads(*footer, *e.row_group, fields);
    const uint64_t length = parquet::BytesOfReads(reads);
    const uint64_t first = reads.empty() ? 4 : reads.front().offset;
    e.piece = ShardEntry::FilePiece{file.path, size, first, length, tail.size()};
    e.raw_data.basename = RowGroupPieceName(file.path, *e.row_group, columns, file.etag);
    e.raw_data.bytes = length + tail.size();
  }
  return entries;
}

Result<Index> LocalIndex(const StreamOptions& stream, const std::vector<ListedFile>& files,
                         const std::vector<std::string>& columns, Env* env) {
  const std::string root = StreamRoot(stream);
  return parquet::IndexOfLocalParquetFiles(root, files, columns, env);
}

Result<Index> RemoteIndex(const StreamOptions& stream, RemoteSource& remote,
                          const std::vector<ListedFile>& files, const std::string& source,
                          const std::vector<std::string>& columns,
                          std::chrono::milliseconds wait_timeout, Env* env) {
  const std::string state_dir = JoinPath(StreamRoot(stream), cache_layout::kStateDir);
  const std::string prefix = RemoteKey(stream, "");
  SLUICE_ASSIGN_OR_RETURN(
      ParquetFooterStore store,
      LoadOrMakeParquetFooterStore(ParquetFooterStorePath(state_dir), state_dir, source, files,
                                   prefix, remote, wait_timeout, env));
  // Each file's pieces, decoded from its footer on several threads (the
  // decode is the node's first process's largest serial cost: 1M footers),
  // a round of kDecodeRound files at a time, so that only one round's
  // entries wait beside the index; appended in file order, and the first
  // error in file order is the one returned, as a serial loop would.
  const std::string where = remote.Describe() + "/" + prefix;
  auto pieces = [&](const ListedFile& f) -> Result<std::vector<ShardEntry>> {
    auto held = store.Find(f.path);
    if (!held.ok() && held.status().code() == StatusCode::kNotFound) {
      return CorruptError(held.status().message());
    }
    SLUICE_RETURN_IF_ERROR(held.status());
    return PiecesOfFile(f, held->tail, where + f.path, columns);
  };
  Index index;
  std::vector<Result<std::vector<ShardEntry>>> round;
  for (size_t start = 0; start < files.size(); start += kDecodeRound) {
    const size_t n = std::min(kDecodeRound, files.size() - start);
    round.assign(n, std::vector<ShardEntry>());
    ParallelClaims(n, kDecodeClaim, kDecodeThreads, [&](size_t begin, size_t end) {
      for (size_t j = begin; j < end; ++j) {
        try {
          round[j] = pieces(files[start + j]);
        } catch (const std::exception& e) {
          round[j] = InternalError(files[start + j].path + ": footer: " + e.what());
        }
      }
    });
    for (Result<std::vector<ShardEntry>>& entries : round) {
      SLUICE_RETURN_IF_ERROR(entries.status());
      for (ShardEntry& e : *entries) index.shards.push_back(std::move(e));
    }
  }
  if (index.shards.empty()) {
    return NotFoundError(source + ": no row in the " + std::to_string(files.size()) +
                         " Parquet files");
  }
  return index;
}

}  // namespace

FileSelection ParquetStreamSelection(const FileDatasetOptions& options) {
  return options.selection.globs.empty() ? parquet::ParquetFileSelection() : options.selection;
}

std::string RowGroupPieceName(std::string_view file, uint32_t row_group,
                              const std::vector<std::string>& columns, std::string_view etag) {
  std::string name;
  for (char c : file) {
    if (c == '%') {
      name += "%25";
    } else if (c == '/') {
      name += "%2F";
    } else {
      name += c;
    }
  }
  if (name.size() > kMaxPieceName) {
    auto hex = HashHex("xxh64", file);
    // A sub-folder: an escaped name holds no '/', so none is there.
    name = "long/" + (hex.ok() ? *hex : std::string("0"));
  }
  name = std::string(kPieceFolder) + name + "@" + std::to_string(row_group);
  if (!etag.empty()) {
    auto tag = HashHex("xxh64", etag);
    name += ".e" + (tag.ok() ? *tag : std::string("0"));
  }
  const std::string set = ColumnSetTag(columns);
  return set.empty() ? name : name + "." + set;
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
  if (found_files) *found_files = false;
  std::string source;
  std::vector<std::string> uncommitted;
  Result<std::vector<ListedFile>> listed =
      LoadStreamListing(stream, options, remote, wait_timeout, &source, &uncommitted, env);
  // A remote listing that failed, where the store can list, is the error
  // to report (a sub-folder's listing, say), not a folder without files.
  if (!listed.ok() && remote && listed.status().code() != StatusCode::kUnimplemented &&
      found_files) {
    *found_files = true;
  }
  SLUICE_ASSIGN_OR_RETURN(std::vector<ListedFile> files, std::move(listed));
  SLUICE_ASSIGN_OR_RETURN(files, SelectFiles(std::move(files), ParquetStreamSelection(options),
                                             source, uncommitted));
  if (found_files) *found_files = true;
  if (!remote) return LocalIndex(stream, files, options.columns, env);
  return RemoteIndex(stream, *remote, files, source, options.columns, wait_timeout, env);
}

}  // namespace sluice
