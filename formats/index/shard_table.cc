#include "formats/index/shard_table.h"

#include <cstring>
#include <new>
#include <stdexcept>

#include "formats/index/shard_table_config.h"
#include "formats/index/shard_table_layout.h"

namespace sluice {

using namespace shard_table_layout;

namespace {

// What a built table owns; a mapped one owns the mapping instead.
struct OwnedStorage {
  std::vector<ShardRecord> shards;
  std::vector<FileRecord> files;
  std::vector<PieceRecord> pieces;
  std::string text;
};

void PutLength(size_t n, std::string* out) {
  const uint32_t v = static_cast<uint32_t>(n);
  char b[4];
  std::memcpy(b, &v, 4);
  out->append(b, 4);
}

// True when `entry`'s configuration fields equal `config`'s (what
// EncodeShardConfig encodes).
bool SameConfig(const ShardEntry& config, const ShardEntry& entry) {
  return config.format == entry.format && config.version == entry.version &&
         config.column_names == entry.column_names &&
         config.column_encodings == entry.column_encodings &&
         config.column_sizes == entry.column_sizes && config.columns == entry.columns &&
         config.compression == entry.compression && config.hashes == entry.hashes &&
         config.newline == entry.newline && config.separator == entry.separator &&
         config.size_limit == entry.size_limit;
}

}  // namespace

struct ShardTable::Builder::State {
  OwnedStorage storage;
  std::vector<ShardEntry> configs;
  std::unordered_map<std::string, uint32_t> config_ids;
  std::string key;  // scratch: the configuration being looked up
  uint32_t last_config = 0;
};

ShardTable::Builder::Builder() : s_(std::make_unique<State>()) {}
ShardTable::Builder::~Builder() = default;
ShardTable::Builder::Builder(Builder&&) noexcept = default;
ShardTable::Builder& ShardTable::Builder::operator=(Builder&&) noexcept = default;

Status ShardTable::Builder::Add(ShardEntry e) {
  // Each file's hashes by view, sorted as the map holds them.
  std::vector<std::pair<std::string_view, std::string_view>> hashes[4];
  auto parts = [&hashes](int k, const FileInfo& f) {
    for (const auto& [algorithm, hex] : f.hashes) hashes[k].emplace_back(algorithm, hex);
    return FileParts{f.basename, f.bytes, hashes[k]};
  };
  ShardParts shard;
  shard.samples = e.samples;
  shard.raw_data = parts(0, e.raw_data);
  if (e.zip_data) shard.zip_data = parts(1, *e.zip_data);
  if (e.raw_meta) shard.raw_meta = parts(2, *e.raw_meta);
  if (e.zip_meta) shard.zip_meta = parts(3, *e.zip_meta);
  shard.has_meta = e.has_meta;
  shard.row_group = e.row_group;
  if (e.piece) shard.piece = &*e.piece;
  return Add(e, shard);
}

Status ShardTable::Builder::Add(const ShardEntry& e, const ShardParts& shard) {
  if (s_->storage.shards.size() >= UINT32_MAX) {
    return InvalidArgumentError("an index of more than 2^32 shards");
  }
  // Shards in a row nearly always share their configuration: compare with
  // the last one before encoding and hashing this one.
  uint32_t config;
  bool fresh = false;
  if (!s_->configs.empty() && SameConfig(s_->configs[s_->last_config], e)) {
    config = s_->last_config;
  } else {
    s_->key.clear();
    EncodeShardConfig(e, &s_->key);
    auto [it, inserted] =
        s_->config_ids.try_emplace(s_->key, static_cast<uint32_t>(s_->configs.size()));
    config = it->second;
    fresh = inserted;
  }
  s_->last_config = config;
  if (fresh) {
    ShardEntry config;
    config.format = e.format;
    config.version = e.version;
    config.column_names = e.column_names;
    config.column_encodings = e.column_encodings;
    config.column_sizes = e.column_sizes;
    config.columns = e.columns;
    config.compression = e.compression;
    config.hashes = e.hashes;
    config.newline = e.newline;
    config.separator = e.separator;
    config.size_limit = e.size_limit;
    s_->configs.push_back(std::move(config));
  }
  return AddOfConfig(config, shard);
}

Status ShardTable::Builder::AddWithLastConfig(const ShardParts& shard) {
  if (s_->configs.empty()) {
    return InternalError("a shard added with the last configuration before any");
  }
  return AddOfConfig(s_->last_config, shard);
}

Status ShardTable::Builder::AddOfConfig(uint32_t config, const ShardParts& shard) {
  OwnedStorage& st = s_->storage;
  if (st.shards.size() >= UINT32_MAX) {
    return InvalidArgumentError("an index of more than 2^32 shards");
  }
  auto add_file = [&](const FileParts& f) -> Status {
    if (f.basename.size() >= UINT32_MAX) return InvalidArgumentError("a file name of 2^32 bytes");
    FileRecord r{f.bytes, st.text.size(), static_cast<uint32_t>(f.basename.size()), 0};
    st.text.append(f.basename);
    const size_t hashes_at = st.text.size();
    for (const auto& [algorithm, hex] : f.hashes) {
      PutLength(algorithm.size(), &st.text);
      st.text.append(algorithm);
      PutLength(hex.size(), &st.text);
      st.text.append(hex);
    }
    if (st.text.size() - hashes_at >= UINT32_MAX) return InvalidArgumentError("hashes of 2^32 bytes");
    r.hash_bytes = static_cast<uint32_t>(st.text.size() - hashes_at);
    st.files.push_back(r);
    return Status::Ok();
  };
  ShardRecord r{shard.samples, st.files.size(), config, 0, 0, 0};
  SLUICE_RETURN_IF_ERROR(add_file(shard.raw_data));
  for (auto [file, flag] : {std::pair{&shard.zip_data, kHasZipData},
                            std::pair{&shard.raw_meta, kHasRawMeta},
                            std::pair{&shard.zip_meta, kHasZipMeta}}) {
    if (!*file) continue;
    r.flags |= flag;
    SLUICE_RETURN_IF_ERROR(add_file(**file));
  }
  if (shard.has_meta) r.flags |= kHasMetaKeys;
  if (shard.row_group) {
    r.flags |= kHasRowGroup;
    r.row_group = *shard.row_group;
  }
  if (shard.piece) {
    r.flags |= kHasPiece;
    r.piece = static_cast<uint32_t>(st.pieces.size());
    const ShardEntry::FilePiece& p = *shard.piece;
    if (p.file.size() >= UINT32_MAX || p.etag.size() >= UINT32_MAX) {
      return InvalidArgumentError("a file name or etag of 2^32 bytes");
    }
    st.pieces.push_back(PieceRecord{st.text.size(), p.file_bytes, p.offset, p.length, p.tail_bytes,
                                    static_cast<uint32_t>(p.file.size()),
                                    static_cast<uint32_t>(p.etag.size())});
    st.text.append(p.file);
    st.text.append(p.etag);
  }
  st.shards.push_back(r);
  return Status::Ok();
}

void ShardTable::Builder::Reserve(size_t shards, size_t files, size_t text_bytes,
                                  size_t pieces) {
  // A hint: where the address space is not granted (strict overcommit, a
  // ulimit -v), Add grows the arrays as it goes instead.
  try {
    s_->storage.shards.reserve(shards);
    s_->storage.files.reserve(files);
    s_->storage.text.reserve(text_bytes);
    s_->storage.pieces.reserve(pieces);
  } catch (const std::bad_alloc&) {
  } catch (const std::length_error&) {
  }
}

ShardTable ShardTable::Builder::Finish() && {
  ShardTable t;
  auto storage = std::make_shared<OwnedStorage>(std::move(s_->storage));
  t.configs_ = std::move(s_->configs);
  t.shards_ = storage->shards.data();
  t.files_ = storage->files.data();
  t.pieces_ = storage->pieces.data();
  t.text_ = storage->text;
  t.num_shards_ = storage->shards.size();
  t.num_files_ = storage->files.size();
  t.num_pieces_ = storage->pieces.size();
  t.owner_ = std::move(storage);
  s_ = std::make_unique<State>();
  return t;
}

ShardTable::ShardTable() = default;
ShardTable::~ShardTable() = default;
ShardTable::ShardTable(ShardTable&&) noexcept = default;
ShardTable& ShardTable::operator=(ShardTable&&) noexcept = default;

Result<ShardTable> ShardTable::FromIndex(const Index& index) {
  Builder b;
  for (const ShardEntry& e : index.shards) SLUICE_RETURN_IF_ERROR(b.Add(e));
  return std::move(b).Finish();
}

uint64_t ShardTable::samples(size_t i) const { return shards_[i].samples; }

const ShardEntry& ShardTable::config(size_t i) const { return configs_[shards_[i].config]; }

uint32_t ShardTable::config_id(size_t i) const { return shards_[i].config; }

FileRef ShardTable::File(uint64_t k) const {
  const FileRecord& f = files_[k];
  return FileRef{text_.substr(f.text, f.name_bytes), f.bytes};
}

std::map<std::string, std::string> ShardTable::Hashes(uint64_t k) const {
  const FileRecord& f = files_[k];
  std::string_view h = text_.substr(f.text + f.name_bytes, f.hash_bytes);
  std::map<std::string, std::string> out;
  auto take = [&h] {
    uint32_t n;
    std::memcpy(&n, h.data(), 4);
    std::string s(h.substr(4, n));
    h.remove_prefix(4 + n);
    return s;
  };
  // Well formed: built by Add, or checked by FromBytes.
  while (!h.empty()) {
    std::string algorithm = take();
    out.emplace(std::move(algorithm), take());
  }
  return out;
}

ShardRef ShardTable::ref(size_t i) const {
  const ShardRecord& r = shards_[i];
  ShardRef s;
  s.config = &configs_[r.config];
  s.samples = r.samples;
  uint64_t k = r.first_file;
  s.raw_data = File(k++);
  if (r.flags & kHasZipData) s.zip_data = File(k++);
  if (r.flags & kHasRawMeta) s.raw_meta = File(k++);
  if (r.flags & kHasZipMeta) s.zip_meta = File(k++);
  s.has_meta = (r.flags & kHasMetaKeys) != 0;
  if (r.flags & kHasRowGroup) s.row_group = r.row_group;
  if (r.flags & kHasPiece) {
    const PieceRecord& p = pieces_[r.piece];
    s.piece = PieceRef{text_.substr(p.text, p.name_bytes), p.file_bytes, p.offset, p.length,
                       p.tail_bytes, text_.substr(p.text + p.name_bytes, p.etag_bytes)};
  }
  return s;
}

ShardEntry ShardTable::entry(size_t i) const {
  const ShardRecord& r = shards_[i];
  ShardEntry e = configs_[r.config];
  e.samples = r.samples;
  uint64_t k = r.first_file;
  auto file = [&] {
    FileRef f = File(k);
    FileInfo info{std::string(f.basename), f.bytes, Hashes(k)};
    ++k;
    return info;
  };
  e.raw_data = file();
  if (r.flags & kHasZipData) e.zip_data = file();
  if (r.flags & kHasRawMeta) e.raw_meta = file();
  if (r.flags & kHasZipMeta) e.zip_meta = file();
  e.has_meta = (r.flags & kHasMetaKeys) != 0;
  if (r.flags & kHasRowGroup) e.row_group = r.row_group;
  if (r.flags & kHasPiece) {
    const PieceRecord& p = pieces_[r.piece];
    e.piece = ShardEntry::FilePiece{std::string(text_.substr(p.text, p.name_bytes)), p.file_bytes,
                                    p.offset, p.length, p.tail_bytes,
                                    std::string(text_.substr(p.text + p.name_bytes, p.etag_bytes))};
  }
  return e;
}

}  // namespace sluice
