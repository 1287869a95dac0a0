// ShardTable <-> the binary index file (shard_table_layout.h). Reading
// trusts nothing: the file sits in a node-local folder other processes
// write, and a crash, a full disk or another build of Sluice may have left
// anything there, so every count, offset and name is checked before a view
// is handed out.
#include <cstring>
#include <memory>
#include <span>

#include "formats/index/shard_table.h"
#include "formats/index/shard_table_config.h"
#include "formats/index/shard_table_layout.h"

namespace sluice {

using namespace shard_table_layout;

namespace {

uint32_t FilesOf(uint32_t flags) {
  return 1 + ((flags & kHasZipData) != 0) + ((flags & kHasRawMeta) != 0) +
         ((flags & kHasZipMeta) != 0);
}

// True when `h` is a well-formed hash text (length-prefixed pairs).
bool WellFormedHashes(std::string_view h) {
  while (!h.empty()) {
    for (int part = 0; part < 2; ++part) {
      if (h.size() < 4) return false;
      uint32_t n;
      std::memcpy(&n, h.data(), 4);
      if (n > h.size() - 4) return false;
      h.remove_prefix(4 + n);
    }
  }
  return true;
}

// An aligned copy of bytes that are not 8-byte aligned (a mapping always
// is; a string handed in by a test or a reader of a buffer may not be).
struct AlignedCopy {
  std::vector<uint64_t> words;
  std::shared_ptr<const void> owner;
};

}  // namespace

std::vector<std::string_view> ShardTable::SerializedPieces(uint64_t source_key,
                                                          std::string* scratch) const {
  scratch->assign(sizeof(FileHeader), '\0');
  for (const ShardEntry& c : configs_) EncodeShardConfig(c, scratch);
  const std::string_view configs = std::string_view(*scratch).substr(sizeof(FileHeader));
  FileHeader h{};
  h.shard_count = num_shards_;
  h.file_count = num_files_;
  h.piece_count = num_pieces_;
  h.config_count = configs_.size();
  h.config_bytes = configs.size();
  h.text_bytes = text_.size();
  auto bytes = [](const auto* data, size_t n) {
    return std::string_view(reinterpret_cast<const char*>(data), n * sizeof(*data));
  };
  std::vector<std::string_view> pieces = {std::string_view(scratch->data(), sizeof(h)),
                                          bytes(shards_, num_shards_), bytes(files_, num_files_),
                                          bytes(pieces_, num_pieces_), configs, text_};
  h.head = SealKeyedHead(kKind, source_key, std::span(pieces).subspan(1));
  std::memcpy(scratch->data(), &h, sizeof(h));
  return pieces;
}

std::string ShardTable::Serialize(uint64_t source_key) const {
  std::string scratch, out;
  for (std::string_view piece : SerializedPieces(source_key, &scratch)) out.append(piece);
  return out;
}

Result<ShardTable> ShardTable::FromBytes(std::shared_ptr<const void> owner, std::string_view bytes,
                                         uint64_t source_key, std::string_view source) {
  const std::string src(source);
  auto corrupt = [&](const std::string& what) { return CorruptError(src + ": " + what); };
  if (reinterpret_cast<uintptr_t>(bytes.data()) % alignof(uint64_t) != 0) {
    auto copy = std::make_shared<AlignedCopy>();
    copy->words.resize((bytes.size() + 7) / 8);
    std::memcpy(copy->words.data(), bytes.data(), bytes.size());
    copy->owner = std::move(owner);
    bytes = std::string_view(reinterpret_cast<const char*>(copy->words.data()), bytes.size());
    owner = std::move(copy);
  }
  SLUICE_ASSIGN_OR_RETURN(const KeyedFileHead head, ReadKeyedHead(bytes, kKind, source_key, source));
  FileHeader h;
  std::memcpy(&h, bytes.data(), sizeof(h));
  // Every section's size, checked against the file's before any is used.
  SLUICE_RETURN_IF_ERROR(CheckKeyedBody(bytes, head,
                                        {{h.shard_count, sizeof(ShardRecord)},
                                         {h.file_count, sizeof(FileRecord)},
                                         {h.piece_count, sizeof(PieceRecord)},
                                         {h.config_bytes, 1},
                                         {h.text_bytes, 1}},
                                        source));
  ShardTable t;
  const char* at = bytes.data() + sizeof(h);
  t.shards_ = reinterpret_cast<const ShardRecord*>(at);
  at += h.shard_count * sizeof(ShardRecord);
  t.files_ = reinterpret_cast<const FileRecord*>(at);
  at += h.file_count * sizeof(FileRecord);
  t.pieces_ = reinterpret_cast<const PieceRecord*>(at);
  at += h.piece_count * sizeof(PieceRecord);
  std::string_view configs(at, h.config_bytes);
  at += h.config_bytes;
  t.text_ = std::string_view(at, h.text_bytes);
  t.num_shards_ = h.shard_count;
  t.num_files_ = h.file_count;
  t.num_pieces_ = h.piece_count;
  if (h.config_count > configs.size()) return corrupt("more configurations than bytes");
  for (uint64_t c = 0; c < h.config_count; ++c) {
    SLUICE_ASSIGN_OR_RETURN(ShardEntry config, DecodeShardConfig(&configs, source));
    t.configs_.push_back(std::move(config));
  }
  if (!configs.empty()) return corrupt("bytes after the last configuration");

  uint64_t next_file = 0;
  for (uint64_t i = 0; i < h.shard_count; ++i) {
    const ShardRecord& r = t.shards_[i];
    if (r.config >= h.config_count || (r.flags & ~kKnownFlags) != 0 ||
        r.first_file != next_file || FilesOf(r.flags) > h.file_count - next_file ||
        ((r.flags & kHasPiece) && r.piece >= h.piece_count) || r.samples > kMaxEntrySamples) {
      return corrupt("shard " + std::to_string(i) + ": a record out of bounds");
    }
    next_file += FilesOf(r.flags);
  }
  if (next_file != h.file_count) return corrupt("files no shard has");
  for (uint64_t k = 0; k < h.file_count; ++k) {
    const FileRecord& f = t.files_[k];
    if (f.text > h.text_bytes || uint64_t{f.name_bytes} + f.hash_bytes > h.text_bytes - f.text ||
        f.bytes > kMaxEntryBytes) {
      return corrupt("file " + std::to_string(k) + ": a record out of bounds");
    }
    if (!IsSafeBasename(t.text_.substr(f.text, f.name_bytes)) ||
        !WellFormedHashes(t.text_.substr(f.text + f.name_bytes, f.hash_bytes))) {
      return corrupt("file " + std::to_string(k) + ": an unsafe name or malformed hashes");
    }
  }
  for (uint64_t p = 0; p < h.piece_count; ++p) {
    const PieceRecord& r = t.pieces_[p];
    if (r.text > h.text_bytes || uint64_t{r.name_bytes} + r.etag_bytes > h.text_bytes - r.text ||
        !IsSafeBasename(t.text_.substr(r.text, r.name_bytes))) {
      return corrupt("piece " + std::to_string(p) + ": a record out of bounds or an unsafe name");
    }
  }
  t.owner_ = std::move(owner);
  return t;
}

}  // namespace sluice
