// Where a fetched row group's footer tail comes from (StreamShards::
// ReadPiece): the one owner of that choice. Where the node keeps a footer
// store (KeepsParquetFooterStore: every store but a folder on a local
// disk), from the store, mapped once; else from the file itself, its last
// bytes read again (a page-cache read), of the version the file was
// listed with, checked as the piece's chunks are (the remote's
// GetRangeOnlyOfVersion: size and etag), so a file changed since the
// listing fails with the remote's changed-file error, never a tail of
// its new bytes.
//
// Thread-safe; `remote` and `env` must outlive the source.
#pragma once

#include <mutex>
#include <optional>
#include <string>

#include "base/env.h"
#include "base/status.h"
#include "engine/dataset/parquet_footer_store.h"
#include "engine/dataset/remote_source.h"
#include "formats/index/index.h"

namespace sluice {

class ParquetFooterSource {
 public:
  // `state_dir`: the stream's state folder, where the store is.
  ParquetFooterSource(RemoteSource& remote, std::string state_dir, Env* env);

  // The last `piece.tail_bytes` bytes of `piece.file` (the remote's `key`)
  // as listed. Errors are `group`'s (e.g. "a.parquet: row group 3"): with
  // the range and URL read from the file; naming the store and both byte
  // counts when the store holds another tail (kCorrupt), or none (kCorrupt).
  Result<std::string> Tail(const ShardEntry::FilePiece& piece, const std::string& key,
                           const std::string& group);

 private:
  RemoteSource& remote_;
  const std::string store_path_;
  Env* const env_;
  std::mutex mu_;
  std::optional<ParquetFooterStore> store_;  // mapped by the first Tail that needs it
};

}  // namespace sluice
