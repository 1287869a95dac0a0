// The footers of a remote stream's Parquet files, read once per node and
// kept in <local>/<split>/.sluice/parquet_footers, so that the node's other
// processes and every later run read no footer again.
//
// Each file's tail (its FileMetaData, length and magic: the bytes a row
// group's piece ends with, ShardEntry::piece) is read with ranged reads:
// the last 64 KiB first (FooterTailRange), a second read only when the
// footer is longer; kConcurrentFooterReads files at once.
//
// The store is one file: a JSON line {"source", "fingerprint", "files":
// [[path, size, tail bytes, etag], ...]} (no etag when unknown) then the
// tails back to back. The fingerprint is ListingFingerprint of the files
// it was made over (paths, sizes and etags), so a store made over another
// listing is made anew: the tails of files listed again with the same
// path, size and (known) etag are taken from the old store, every other
// file's (a file replaced at the same size has a new etag; one of unknown
// etag is never trusted) is read again.
//
// The store file, its lock and its reads go through the Env given (the
// dataset's: DatasetOptions::env); the tails' ranged reads through the
// remote.
//
// Thread-safe (no shared state beyond the files); a ParquetFooterStore is
// immutable once loaded.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/env.h"
#include "base/status.h"
#include "engine/dataset/remote_source.h"
#include "formats/raw/file_listing.h"

namespace sluice {

inline constexpr int kConcurrentFooterReads = 16;

struct ParquetFooterStore {
  // path (relative to the stream's root) -> the file's tail.
  std::map<std::string, std::string, std::less<>> tails;
  // path -> the file's size and etag ("" unknown) when the store was made.
  std::map<std::string, std::pair<uint64_t, std::string>, std::less<>> listed;
};

// <state_dir>/parquet_footers.
std::string ParquetFooterStorePath(const std::string& state_dir);

// The tail of `key` (a file of `size` bytes, named `file` in errors) by at
// most two ranged reads of `remote`. Errors name the file, the store URL
// and the range; a shorter answer than asked is kCorrupt (the file changed
// since it was listed).
Result<std::string> ReadParquetTail(RemoteSource& remote, const std::string& key,
                                    const std::string& file, uint64_t size);

// The store of `files` (sized, in canonical order; keys are `key_prefix` +
// path) at `path`: read if it was made for `source` over these files, else
// made once per node (node_file.h, lock in `state_dir`) by reading every
// tail from `remote`.
Result<ParquetFooterStore> LoadOrMakeParquetFooterStore(
    const std::string& path, const std::string& state_dir, const std::string& source,
    const std::vector<ListedFile>& files, const std::string& key_prefix, RemoteSource& remote,
    std::chrono::milliseconds wait_timeout, Env* env = Env::Default());

// Reads the store at `path` whatever it was made over (the shard fetches'
// view). kCorrupt naming `path` for a store that is not one.
Result<ParquetFooterStore> ReadParquetFooterStore(const std::string& path,
                                                  Env* env = Env::Default());

// The store's bytes, and back (kNotFound when made for another source or
// over other files; kCorrupt naming `name` when it is not a store).
std::string SerializeParquetFooterStore(std::string_view source, std::string_view fingerprint,
                                        const std::vector<ListedFile>& files,
                                        const std::vector<std::string>& tails);
Result<ParquetFooterStore> ParseParquetFooterStore(std::string_view bytes,
                                                   std::string_view source,
                                                   std::string_view fingerprint,
                                                   std::string_view name);

}  // namespace sluice
