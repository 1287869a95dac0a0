// The shards of an index, compact: what the engine holds of a dataset of a
// million shards instead of a million ShardEntry values (~1.3 KB each).
//
// Shards of one dataset nearly always share their configuration (format,
// columns, compression, hashes, size_limit, ...): each distinct one is kept
// once, and a shard is a fixed-size record (samples, its configuration's
// number, flags) plus fixed-size records of its files, their names and hash
// texts in one text pool. The records are plain arrays in the layout the
// binary index file stores (shard_table_layout.h), so a table either owns
// them (built from entries) or views a mapped file (FromBytes), read the
// same way.
//
// Thread safety: immutable once built; every const method may be called
// from any thread. Views (string_view, ShardRef) returned by a table are
// valid while the table lives (a table made by FromBytes keeps its
// mapping alive; moving a table keeps its views valid).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "formats/index/index.h"

namespace sluice {

namespace shard_table_layout {
struct ShardRecord;
struct FileRecord;
struct PieceRecord;
}  // namespace shard_table_layout

// One file of a shard, by view (FileInfo without its hashes; ask the table
// for those: ShardTable::entry).
struct FileRef {
  std::string_view basename;
  uint64_t bytes = 0;
};

// ShardEntry::FilePiece by view.
struct PieceRef {
  std::string_view file;
  uint64_t file_bytes = 0;
  uint64_t offset = 0;
  uint64_t length = 0;
  uint64_t tail_bytes = 0;
  std::string_view etag;
};

// The bytes ShardTable::FromIndexJson reads past the end of the text
// (simdjson's padding).
inline constexpr size_t kIndexJsonPadding = 64;

// What Builder::Add records of a shard's file, by view: its hashes as
// (algorithm, hex digest) sorted by algorithm, no algorithm twice.
struct FileParts {
  std::string_view basename;
  uint64_t bytes = 0;
  std::span<const std::pair<std::string_view, std::string_view>> hashes;
};

// A shard's own fields by view: a ShardEntry's without its configuration.
struct ShardParts {
  uint64_t samples = 0;
  FileParts raw_data;
  std::optional<FileParts> zip_data;
  std::optional<FileParts> raw_meta;
  std::optional<FileParts> zip_meta;
  bool has_meta = false;
  std::optional<uint32_t> row_group;
  const ShardEntry::FilePiece* piece = nullptr;  // null: none
};

// A shard of a table: ShardEntry's per-shard fields by view, and its
// configuration (a ShardEntry whose per-shard fields are empty: samples 0,
// no files) for format, columns, compression and the rest.
struct ShardRef {
  const ShardEntry* config = nullptr;
  uint64_t samples = 0;
  FileRef raw_data;
  std::optional<FileRef> zip_data;
  std::optional<FileRef> raw_meta;
  std::optional<FileRef> zip_meta;
  bool has_meta = false;
  std::optional<uint32_t> row_group;
  std::optional<PieceRef> piece;

  const std::string& format() const { return config->format; }
  const std::optional<std::string>& compression() const { return config->compression; }
};

class ShardTable {
 public:
  // Adds entries one at a time (ParseIndexEntries' sink), so a dataset's
  // entries never exist all at once.
  class Builder {
   public:
    Builder();
    ~Builder();
    Builder(Builder&&) noexcept;
    Builder& operator=(Builder&&) noexcept;
    // kInvalidArgument when the table would outgrow what its layout holds
    // (2^32 shards or configurations, a name of 2^32 bytes).
    Status Add(ShardEntry entry);
    // The same shard as an entry whose configuration fields are `config`'s
    // (its per-shard fields are ignored) and whose own fields are `shard`:
    // nothing is kept of either beyond the call.
    Status Add(const ShardEntry& config, const ShardParts& shard);
    // The same shard with the last Add's configuration (the caller knows
    // it is the same: e.g. one shared object, alive since): no
    // configuration compared. kInternal before any Add.
    Status AddWithLastConfig(const ShardParts& shard);
    // Room for about this many shards, files and bytes of names and hash
    // texts, so a large table is not copied as it grows (a hint: Add
    // grows past it). Capacity no Add uses is never touched, so costs
    // address space, not memory.
    void Reserve(size_t shards, size_t files, size_t text_bytes, size_t pieces = 0);
    ShardTable Finish() &&;

   private:
    struct State;
    Status AddOfConfig(uint32_t config, const ShardParts& shard);
    std::unique_ptr<State> s_;
  };

  ShardTable();
  ~ShardTable();
  ShardTable(ShardTable&&) noexcept;
  ShardTable& operator=(ShardTable&&) noexcept;
  ShardTable(const ShardTable&) = delete;
  ShardTable& operator=(const ShardTable&) = delete;

  // Every shard of `index`, in order.
  static Result<ShardTable> FromIndex(const Index& index);

  // index.json's text parsed straight into a table: the table, checks and
  // errors of ParseIndexEntries feeding a Builder, without a ShardEntry
  // per shard (simdjson On-Demand; peak memory about the text plus
  // simdjson's index of it plus the table). The parser reads up to
  // kIndexJsonPadding bytes past the text's end: `readable_bytes` says how
  // far from json_text.data() it may read (e.g. a mapped file's pages); a
  // text without that room is copied once. `source` names the file in
  // errors.
  static Result<ShardTable> FromIndexJson(std::string_view json_text, std::string_view source,
                                          size_t readable_bytes = 0);

  size_t size() const { return num_shards_; }
  bool empty() const { return num_shards_ == 0; }
  uint64_t samples(size_t i) const;
  // Shard i's configuration (see ShardRef::config), and its number: shards
  // with equal numbers have equal configurations. i < size().
  const ShardEntry& config(size_t i) const;
  uint32_t config_id(size_t i) const;
  size_t num_configs() const { return configs_.size(); }
  ShardRef ref(size_t i) const;
  // Shard i as ParseIndex gave it (a copy; file hashes included).
  ShardEntry entry(size_t i) const;

  // The binary index file's bytes (shard_table_layout.h): a header with
  // `source_key` (what the table was built from: the reader compares it
  // to decide whether the file is stale) and a checksum, then the arrays.
  std::string Serialize(uint64_t source_key) const;
  // The same bytes as pieces to write one after another, the table's
  // arrays by view (nothing copied): a table of a million shards is
  // written to its file without a second copy of it in memory. *scratch
  // holds the header and the encoded configurations; the pieces are
  // valid while it and the table are, and unchanged.
  std::vector<std::string_view> SerializedPieces(uint64_t source_key, std::string* scratch) const;

  // A table viewing `bytes` (a mapped binary index file; `owner` keeps
  // them alive and is kept by the table). Everything is checked before the
  // table is returned: magic, layout version, sizes, the checksum, every
  // record's references and every file name (IsSafeBasename) and
  // configuration; kCorrupt naming `source` and what is wrong otherwise,
  // kNotFound when the file was built from another source (`source_key`
  // differs): both mean "rebuild it", never "trust it".
  static Result<ShardTable> FromBytes(std::shared_ptr<const void> owner, std::string_view bytes,
                                      uint64_t source_key, std::string_view source);

 private:
  friend class Builder;
  using ShardRecord = shard_table_layout::ShardRecord;
  using FileRecord = shard_table_layout::FileRecord;
  using PieceRecord = shard_table_layout::PieceRecord;

  FileRef File(uint64_t k) const;
  std::map<std::string, std::string> Hashes(uint64_t k) const;

  // Owned storage (built) or the mapping (FromBytes); the views below point
  // into one of them.
  std::shared_ptr<const void> owner_;
  std::vector<ShardEntry> configs_;
  const ShardRecord* shards_ = nullptr;
  const FileRecord* files_ = nullptr;
  const PieceRecord* pieces_ = nullptr;
  std::string_view text_;
  size_t num_shards_ = 0;
  size_t num_files_ = 0;
  size_t num_pieces_ = 0;
};

}  // namespace sluice
