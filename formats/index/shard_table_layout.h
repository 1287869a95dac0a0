// The binary index file: a ShardTable as bytes, mapped by every process of
// a node instead of parsing index.json again. Little-endian, every section
// 8-byte aligned, in this order after the header:
//
//   ShardRecord[shard_count]   per shard: samples, configuration, flags,
//                              row group, piece, first file
//   FileRecord[file_count]     a shard's files in a row: raw_data, then
//                              zip_data, raw_meta, zip_meta where its flags
//                              say it has them
//   PieceRecord[piece_count]   ShardEntry::piece of the shards that have one
//   configs                    config_count encoded configurations
//                              (shard_table_config.h), config_bytes long
//   text                       names and hash texts, text_bytes long
//
// The header starts with base/binary_file.h's keyed head (magic, layout
// version, header size, key, the XXH3-64 checksum of every byte after the
// header). A file of another layout version, magic or size is not read: it
// is rebuilt.
#pragma once

#include <cstdint>

#include "base/binary_file.h"

namespace sluice::shard_table_layout {

struct FileHeader {
  KeyedFileHead head;  // key: what the table was built from (the caller's)
  uint64_t shard_count;
  uint64_t file_count;
  uint64_t piece_count;
  uint64_t config_count;
  uint64_t config_bytes;
  uint64_t text_bytes;
};
static_assert(sizeof(FileHeader) == 80);

// Magic "SLUICEIX", layout 1 (base/binary_file.h checks the head).
inline constexpr BinaryFileKind kKind{"SLUICEIX", 1, sizeof(FileHeader), "a binary index",
                                      "built from another index"};

// ShardRecord::flags.
inline constexpr uint32_t kHasZipData = 1;
inline constexpr uint32_t kHasRawMeta = 2;
inline constexpr uint32_t kHasZipMeta = 4;
inline constexpr uint32_t kHasMetaKeys = 8;  // ShardEntry::has_meta
inline constexpr uint32_t kHasRowGroup = 16;
inline constexpr uint32_t kHasPiece = 32;
inline constexpr uint32_t kKnownFlags = 63;

struct ShardRecord {
  uint64_t samples;
  uint64_t first_file;  // index of its raw_data in the FileRecords
  uint32_t config;
  uint32_t flags;
  uint32_t row_group;  // with kHasRowGroup
  uint32_t piece;      // with kHasPiece: index in the PieceRecords
};
static_assert(sizeof(ShardRecord) == 32);

// A file's basename is text[text, text + name_bytes); its hashes follow it,
// hash_bytes long: per hash (sorted by algorithm) the algorithm's name and
// the digest's hex text, each a u32 length and the bytes.
struct FileRecord {
  uint64_t bytes;
  uint64_t text;
  uint32_t name_bytes;
  uint32_t hash_bytes;
};
static_assert(sizeof(FileRecord) == 24);

struct PieceRecord {
  uint64_t text;  // the piece's file name: text[text, text + name_bytes)
  uint64_t file_bytes;
  uint64_t offset;
  uint64_t length;
  uint64_t tail_bytes;
  uint32_t name_bytes;
  uint32_t etag_bytes;  // its listed etag follows the name in the text
};
static_assert(sizeof(PieceRecord) == 48);

}  // namespace sluice::shard_table_layout
