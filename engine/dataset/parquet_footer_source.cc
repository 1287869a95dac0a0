#include "engine/dataset/parquet_footer_source.h"

#include <utility>

namespace sluice {

ParquetFooterSource::ParquetFooterSource(RemoteSource& remote, std::string state_dir, Env* env)
    : remote_(remote), store_path_(ParquetFooterStorePath(state_dir)), env_(env) {}

Result<std::string> ParquetFooterSource::Tail(const ShardEntry::FilePiece& piece,
                                              const std::string& key, const std::string& group) {
  if (!KeepsParquetFooterStore(remote_)) {
    if (piece.tail_bytes > piece.file_bytes) {
      return CorruptError(group + ": a footer of " + std::to_string(piece.tail_bytes) +
                          " bytes in a file of " + std::to_string(piece.file_bytes));
    }
    const uint64_t at = piece.file_bytes - piece.tail_bytes;
    const std::string where = group + ", bytes [" + std::to_string(at) + ", " +
                              std::to_string(piece.file_bytes) + ") of " + remote_.Describe() +
                              "/" + key;
    auto tail = remote_.GetRangeOnlyOfVersion(key, at, piece.tail_bytes,
                                              ObjectVersion(piece.etag, piece.file_bytes));
    if (!tail.ok()) return tail.status().WithContext(where);
    if (tail->size() != piece.tail_bytes) {
      return ParquetTailShortAnswerError(group, remote_.Describe() + "/" + key, at, piece.tail_bytes,
                                         tail->size(), piece.file_bytes);
    }
    return std::move(*tail);
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (!store_) {
    SLUICE_ASSIGN_OR_RETURN(store_, ParquetFooterStore::Open(store_path_, env_));
  }
  auto held = store_->Find(piece.file);
  if (!held.ok()) {
    return held.status().code() == StatusCode::kNotFound ? CorruptError(held.status().message())
                                                         : held.status();
  }
  if (held->tail.size() != piece.tail_bytes) {
    return CorruptError(group + ": the node's footer store holds " +
                        std::to_string(held->tail.size()) + " footer bytes, the index " +
                        std::to_string(piece.tail_bytes));
  }
  return std::string(held->tail);
}

}  // namespace sluice
