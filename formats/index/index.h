// index.json: the list of shards of a dataset folder, as Mosaic writes it.
//
// Plain values; thread-safe to read. See tests/data/mosaic/mds/README.md.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace sluice {

// One file of a shard: {"basename", "bytes", "hashes": {algo: hex}}.
struct FileInfo {
  std::string basename;                       // relative to the dataset root
  uint64_t bytes = 0;
  std::map<std::string, std::string> hashes;  // sorted by algorithm name
};

// One entry of "shards". Fields absent from a format are left unset/empty.
struct ShardEntry {
  std::string format;  // "mds", "json", "csv", "tsv", "xsv" (entry_schema.h), "raw", "parquet"
  int version = 2;
  // MDS: parallel vectors in sorted column-name order. column_sizes[i] unset
  // = variable size (JSON null).
  std::vector<std::string> column_names;
  std::vector<std::string> column_encodings;
  std::vector<std::optional<uint64_t>> column_sizes;
  // JSON / XSV: column name -> encoding ("str", "int", "float"), sorted by
  // name. (XSV entries also carry column_names/column_encodings as Mosaic does.)
  // ParseIndex fills both views for json/csv/tsv/xsv entries. Serializing
  // uses the view the format stores ("json": columns; XSV: the lists) and,
  // when that one is empty, derives it from the other.
  std::vector<std::pair<std::string, std::string>> columns;
  std::optional<std::string> compression;  // e.g. "zstd:19"; unset = null
  std::vector<std::string> hashes;         // algorithm names, sorted
  std::optional<std::string> newline;      // split formats only
  std::optional<std::string> separator;    // "xsv" only
  std::optional<uint64_t> size_limit;      // unset = null
  uint64_t samples = 0;
  FileInfo raw_data;
  std::optional<FileInfo> zip_data;        // unset = null
  std::optional<FileInfo> raw_meta;        // split formats only
  std::optional<FileInfo> zip_meta;        // split formats only; may be null
  bool has_meta = false;                   // raw_meta/zip_meta keys present
                                           // (always for split formats)
  // "parquet" only (never in an index.json): the ordinal of the row group
  // this shard is, in raw_data's footer.
  std::optional<uint32_t> row_group;
  // "parquet" streamed from a remote (never in an index.json): raw_data is
  // then not the stored file but a piece cut from it: the reads of the
  // row group's chunks of the entry's columns (formats/parquet/
  // chunk_reads.h), `length` bytes in all from `offset` (the first read's)
  // on, followed by the file's last `tail_bytes` bytes (its footer);
  // raw_data.bytes = length + tail_bytes. `file` is relative to the
  // stream's root; `etag` is the version it was listed with (ListedFile::
  // etag, "" unknown), which every read of the piece asks for.
  struct FilePiece {
    std::string file;
    uint64_t file_bytes = 0;
    uint64_t offset = 0;
    uint64_t length = 0;
    uint64_t tail_bytes = 0;
    std::string etag;
  };
  std::optional<FilePiece> piece;
};

// The bounds ParseIndex puts on an entry's counts (and a binary index's
// reader on its records): a shard's samples, and any byte count.
inline constexpr uint64_t kMaxEntrySamples = uint64_t{1} << 32;
inline constexpr uint64_t kMaxEntryBytes = uint64_t{1} << 48;

// The largest shard file the formats can hold: MDS sample offsets and the
// split formats' line offsets (JSONL, CSV/TSV/XSV) are u32, so a data file
// ends at offset 2^32 - 1 at most. The one owner of that limit: ParseIndex
// refuses a larger raw_data.bytes, the MDS reader a larger shard, the MDS
// writer a shard that would grow past it. A shard's decompressed size is
// bounded by it before anything is allocated for it.
inline constexpr uint64_t kMaxShardFileBytes = UINT32_MAX;

// The largest split-format meta file for `samples` samples (at most 2^32):
// u32 n, n + 1 u32 offsets, then a config no larger than a shard file.
constexpr uint64_t MaxSplitMetaBytes(uint64_t samples) {
  return 4 * (samples + 2) + kMaxShardFileBytes;
}

struct Index {
  int version = 2;
  std::vector<ShardEntry> shards;
};

// Parses index.json text. `source` names the file in error messages.
// Rejects: malformed JSON, missing or mistyped fields, basenames that are
// absolute or contain "..", absurd counts (samples > 2^32, bytes > 2^48),
// a raw_data.bytes the format cannot hold (> kMaxShardFileBytes) or a
// raw_meta.bytes above MaxSplitMetaBytes(samples): sizes that later bound
// decompression must be possible before anything trusts them.
// Errors name the source, the shard and the field, e.g.
//   "corrupt: s3://b/d/index.json: shard 3: field 'raw_data.bytes': ..."
// kCorrupt for bad content (also: duplicate keys, NaN or >64-bit numbers,
// column lists of different lengths, duplicate column names, `zip_data`
// null while `compression` is set or the reverse); kUnimplemented for an
// unknown format or a version other than 2. Keys Sluice does not know are
// ignored. Thread-safe; the result owns its strings.
Result<Index> ParseIndex(std::string_view json_text, std::string_view source);

// As ParseIndex, handing each entry to `sink` in order as it is parsed (so
// a million entries never exist at once); the first error, ParseIndex's or
// the sink's, stops it and is returned.
Status ParseIndexEntries(std::string_view json_text, std::string_view source,
                         const std::function<Status(ShardEntry)>& sink);

// The writer's form: json.dump({"shards": [...], "version": 2}, sort_keys=True).
Result<std::string> SerializeIndexSorted(const Index& index);

// merge_index's form: {"version": 2, "shards": [...]}, entries keyed sorted.
Result<std::string> SerializeIndexMerged(const Index& index);

// The "shards" array alone, each entry as SerializeShardEntry writes it:
// what bindings read of an index.json (their shard descriptions) in the
// engine's spelling, so that no binding parses index.json itself.
Result<std::string> SerializeShardEntries(const Index& index);

// One sub-dataset of merge_index: its index.json text, the name errors give
// it, and the folder name its files' basenames get in front ("part0":
// "shard.00000.mds" -> "part0/shard.00000.mds"; "" leaves them).
struct IndexPart {
  std::string_view text;
  std::string_view source;
  std::string_view prefix;
};

// Mosaic's merge_index: the parts' shards in order, basenames prefixed as
// os.path.join(prefix, basename) does, written by SerializeIndexMerged.
// Byte-identical to Mosaic's output for sub-indexes its writers wrote (they
// sort their keys; keys Sluice does not know are not carried over). Errors:
// ParseIndex's for a part; kInvalidArgument for a prefix that makes a
// basename unsafe (IsSafeBasename). Pure; thread-safe.
Result<std::string> MergeIndexes(const std::vector<IndexPart>& parts);

// One shard entry as json.dumps(entry, sort_keys=True) (no basenames'
// folder logic; used by writers and merge). Which keys appear depends on
// `format` (see SerializeShardConfig) plus samples, raw_data, zip_data and,
// for split formats, raw_meta/zip_meta. kInvalidArgument for an entry that
// cannot be written: unknown format, lists of different lengths, a split
// format without newline/raw_meta, xsv without separator, non-UTF-8 text.
// The Serialize* functions are pure and thread-safe.
Result<std::string> SerializeShardEntry(const ShardEntry& entry);

// The shard's own config JSON embedded in an MDS shard / JSONL/XSV meta file:
// json.dumps of the entry restricted to the writer config keys, sorted
// (MDS: column_encodings, column_names, column_sizes, compression, format,
// hashes, size_limit, version; JSON: columns, compression, format, hashes,
// newline, size_limit, version; csv/tsv: column_encodings, column_names,
// compression, format, hashes, newline, size_limit, version; xsv: those
// plus separator). Needs no file info, so writers call it before the shard
// exists.
Result<std::string> SerializeShardConfig(const ShardEntry& entry);

// True when `basename` is a safe relative path: not empty, not absolute, no
// ".." component, no NUL, no backslash.
bool IsSafeBasename(std::string_view basename);

// Mosaic's name for shard `shard` (from 0) of `format`, uncompressed:
// "shard.00000.mds" (its writers' "shard.{:05}.{format}"; a compressed
// shard's stored file has "." and the compression appended). Writers name
// shards by it; a cold stream's first-sample peek guesses its first shard
// by it.
std::string ShardBasename(size_t shard, std::string_view format);

}  // namespace sluice
