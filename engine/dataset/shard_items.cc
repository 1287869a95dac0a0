#include "engine/dataset/shard_items.h"

#include <optional>
#include <string_view>
#include <unordered_map>

#include "formats/dataset/format_descriptor.h"

namespace sluice {

Result<ShardItems> ShardItems::Of(const ShardTable& index, std::string_view index_json) {
  // Shards are numbered as a computed layout while they fit one; the first
  // that does not turns the numbers so far into tables and the rest follow.
  ShardItems items;
  std::unordered_map<std::string_view, size_t> shared_file;
  auto list_so_far = [&](size_t shards) {
    if (items.layout_ == Layout::kListed) return;
    items.data_.reserve(index.size());
    items.meta_.reserve(index.size());
    items.sources_.reserve(items.num_entries_);
    for (size_t i = 0; i < shards; ++i) {
      items.data_.push_back(items.data(i));
      items.meta_.push_back(items.meta(i));
    }
    for (size_t k = 0; k < items.num_entries_; ++k) items.sources_.push_back(items.source(k));
    items.layout_ = Layout::kListed;
  };
  for (size_t i = 0; i < index.size(); ++i) {
    const ShardRef e = index.ref(i);
    if (e.row_group && !e.piece) {
      list_so_far(i);
      auto [it, fresh] = shared_file.try_emplace(e.raw_data.basename, items.num_entries_);
      items.data_.push_back(it->second);
      items.meta_.push_back(-1);
      if (fresh) {
        items.sources_.push_back(uint64_t{i} << 1);
        ++items.num_entries_;
      }
      continue;
    }
    SLUICE_ASSIGN_OR_RETURN(const std::optional<FileRef> meta, RequiredMetaFileOf(e, index_json));
    if (i == 0 && meta) items.layout_ = Layout::kDataAndMeta;
    const bool fits = items.layout_ == Layout::kListed ||
                      (items.layout_ == Layout::kDataAndMeta) == meta.has_value();
    if (!fits) list_so_far(i);
    if (items.layout_ == Layout::kListed) {
      items.data_.push_back(items.num_entries_);
      items.sources_.push_back(uint64_t{i} << 1);
      if (meta) {
        items.meta_.push_back(static_cast<int64_t>(items.num_entries_ + 1));
        items.sources_.push_back(uint64_t{i} << 1 | 1);
      } else {
        items.meta_.push_back(-1);
      }
    }
    items.num_entries_ += meta ? 2 : 1;
  }
  return items;
}

size_t ShardItems::data(size_t shard) const {
  switch (layout_) {
    case Layout::kOnePerShard: return shard;
    case Layout::kDataAndMeta: return 2 * shard;
    case Layout::kListed: break;
  }
  return data_[shard];
}

int64_t ShardItems::meta(size_t shard) const {
  switch (layout_) {
    case Layout::kOnePerShard: return -1;
    case Layout::kDataAndMeta: return static_cast<int64_t>(2 * shard + 1);
    case Layout::kListed: break;
  }
  return meta_[shard];
}

uint64_t ShardItems::source(size_t k) const {
  switch (layout_) {
    case Layout::kOnePerShard: return uint64_t{k} << 1;
    case Layout::kDataAndMeta: return uint64_t{k >> 1} << 1 | (k & 1);
    case Layout::kListed: break;
  }
  return sources_[k];
}

}  // namespace sluice
