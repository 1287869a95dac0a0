#include "engine/dataset/dataset_shards.h"

#include <algorithm>
#include <string>
#include <utility>

namespace sluice {

Result<std::unique_ptr<DatasetShards>> DatasetShards::Open(
    const DatasetOptions& options, const std::vector<std::shared_ptr<const ShardTable>>& indexes,
    const std::vector<std::shared_ptr<RemoteSource>>& remotes,
    const std::vector<std::optional<uint64_t>>& limits, std::vector<size_t> first_shard,
    size_t num_columns, std::unordered_set<size_t> skipped) {
  std::unique_ptr<DatasetShards> d(new DatasetShards());
  for (size_t s = 0; s < indexes.size(); ++s) {
    auto shards = StreamShards::Open(options.streams[s], indexes[s], remotes[s], limits[s],
                                     options.wait_timeout, options.env);
    if (!shards.ok()) return shards.status().WithContext("stream " + std::to_string(s));
    if (options.serve_in_flight && !options.skip_corrupt_shards && !options.skip_missing_files) {
      (*shards)->ServeInFlight();
    }
    d->streams_.push_back(std::move(*shards));
    d->files_.push_back(options.streams[s].files.has_value());
  }
  d->first_shard_ = std::move(first_shard);
  d->skip_corrupt_ = options.skip_corrupt_shards;
  d->skip_missing_ = options.skip_missing_files;
  d->num_columns_ = num_columns;
  d->skipped_ = std::move(skipped);
  d->open_.resize(d->first_shard_.empty() ? 0 : d->first_shard_.back());
  return d;
}

size_t StreamOfShard(const std::vector<size_t>& first_shard, size_t g) {
  auto it = std::upper_bound(first_shard.begin(), first_shard.end(), g);
  return static_cast<size_t>(it - first_shard.begin()) - 1;
}

std::shared_ptr<const OpenedShard> DatasetShards::AlreadyHad(size_t g) {
  if (skip_corrupt_ || skip_missing_) {
    std::lock_guard<std::mutex> lock(skipped_mu_);
    if (skipped_.count(g)) return OpenedShard::Skipped();
  }
  std::lock_guard<std::mutex> lock(open_mu_);
  return g < open_.size() ? open_[g].lock() : nullptr;
}

Result<std::shared_ptr<const OpenedShard>> DatasetShards::Open(size_t g,
                                                               const std::atomic<bool>* cancel,
                                                               bool wait, bool consumer_waits) {
  const size_t s = StreamOfShard(first_shard_, g);
  if (std::shared_ptr<const OpenedShard> had = AlreadyHad(g)) return had;
  auto shard = streams_[s]->OpenShard(g - first_shard_[s], num_columns_, cancel, wait,
                                      consumer_waits && !skip_corrupt_);
  if (!shard.ok()) {
    if (Skippable(s, shard.status())) {
      std::lock_guard<std::mutex> lock(skipped_mu_);
      skipped_.insert(g);
      return OpenedShard::Skipped();
    }
    return shard.status();
  }
  std::shared_ptr<const OpenedShard> opened(std::move(*shard));
  if (opened) {  // null: not to be had without waiting
    std::lock_guard<std::mutex> lock(open_mu_);
    if (g < open_.size()) open_[g] = opened;
  }
  return opened;
}

std::shared_ptr<const OpenedShard> DatasetShards::HeldForTesting(size_t g) {
  std::lock_guard<std::mutex> lock(open_mu_);
  return g < open_.size() ? open_[g].lock() : nullptr;
}

uint64_t DatasetShards::HeldBytes(size_t g) const {
  const size_t s = StreamOfShard(first_shard_, g);
  return streams_[s]->HeldBytes(g - first_shard_[s]);
}

Result<std::shared_ptr<const OpenedShard>> DatasetShards::OpenRanged(size_t g) {
  const size_t s = StreamOfShard(first_shard_, g);
  if (std::shared_ptr<const OpenedShard> had = AlreadyHad(g)) return had;
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<OpenedShard> ranged,
                          streams_[s]->OpenRangedShard(g - first_shard_[s]));
  if (ranged) return std::shared_ptr<const OpenedShard>(std::move(ranged));
  return Open(g, nullptr, true, false);
}

bool DatasetShards::OpenDecodes(size_t g) const {
  if (first_shard_.empty() || g >= first_shard_.back()) return false;
  const size_t s = StreamOfShard(first_shard_, g);
  return streams_[s]->OpenDecodes(g - first_shard_[s]);
}

bool DatasetShards::Peekable(size_t g) {
  if (skip_corrupt_ || g >= first_shard_.back()) return false;
  const size_t s = StreamOfShard(first_shard_, g);
  return streams_[s]->Peekable(g - first_shard_[s]);
}

Result<std::optional<PeekedSample>> DatasetShards::ReadInFlight(size_t g, uint32_t i, bool wait,
                                                                std::stop_token stop,
                                                                bool* blocked) {
  if (g >= first_shard_.back()) return std::optional<PeekedSample>();
  const size_t s = StreamOfShard(first_shard_, g);
  return streams_[s]->ReadInFlight(g - first_shard_[s], i, wait, std::move(stop), blocked);
}

bool DatasetShards::MayServeInFlight(size_t g) const {
  if (g >= first_shard_.back()) return false;
  const size_t s = StreamOfShard(first_shard_, g);
  return streams_[s]->MayServeInFlight(g - first_shard_[s]);
}

Result<PeekedSample> DatasetShards::PeekSample(size_t g, uint32_t i, std::stop_token cancel) {
  if (g >= first_shard_.back()) {
    return OutOfRangeError("shard " + std::to_string(g) + " does not exist");
  }
  const size_t s = StreamOfShard(first_shard_, g);
  return streams_[s]->PeekSample(g - first_shard_[s], i, std::move(cancel));
}

void DatasetShards::PeekDone(size_t g) {
  if (g >= first_shard_.back()) return;
  const size_t s = StreamOfShard(first_shard_, g);
  streams_[s]->PeekDone(g - first_shard_[s]);
}

bool DatasetShards::Skippable(size_t stream, const Status& s) const {
  if (skip_corrupt_ && IsCorruption(s)) return true;
  if (!skip_missing_ || !files_[stream]) return false;
  return s.code() == StatusCode::kNotFound || s.code() == StatusCode::kPermissionDenied ||
         s.code() == StatusCode::kCorrupt;
}

std::unordered_set<size_t> DatasetShards::skipped() const {
  std::lock_guard<std::mutex> lock(skipped_mu_);
  return skipped_;
}

size_t DatasetShards::skipped_count() const {
  std::lock_guard<std::mutex> lock(skipped_mu_);
  return skipped_.size();
}

}  // namespace sluice
