// A stream's index, loaded once per node: its index.json, or for a
// raw-file stream (StreamOptions::files) the index built from its listing
// (file_listing_index.h), or for a stream of Parquet files
// (StreamOptions::parquet) the index built from their footers
// (parquet_stream_index.h). A stream that says neither and has no
// index.json is a stream of Parquet files when its root holds any (the
// detection rule: LoadStreamIndex, nowhere else); else the missing
// index.json is the error. A node remembers that answer: where a process
// of it found the stream to be Parquet files, later ones map the table it
// kept (whatever its size) and ask the remote for no index.json, as a warm
// MDS stream reads its cached index.json (an index.json the remote gets
// later is not seen in either case; a new cache folder sees it).
//
// With a remote, <local>/<split>/index.json is downloaded by the first
// process on the node that wants it (node_file.h); the others wait for it.
// Without a remote the file is read in place. An index.json of at least
// `binary_index_from_bytes` is parsed once per node: the first process to
// want it writes its ShardTable's binary form to index.bin in the folder's
// cache state folder (engine/cache/state_dir.h), keyed by the index.json
// it was made from (device, inode, size, modification time), and every
// process maps that file: a million shards open in a fraction of a second,
// their records shared by the node's processes through the page cache. A
// file that is stale, damaged or of another layout is made again, never
// read; where it cannot be written, the process keeps what it parsed. A
// remote raw-file or Parquet stream whose node listing (and footer store,
// where the node keeps one: KeepsParquetFooterStore)
// come to at least `binary_index_from_bytes` gets the same: its table is
// kept beside them as .sluice/listing_index.bin or
// .sluice/parquet_index[.<column set>].bin, keyed by the options that
// shape it and the identity of those files, made once per node by its
// first opener under a node lock (the others wait, up to `wait_timeout`,
// then build alone), and mapped by every later
// open instead of reading and decoding them. Every shard file name must be
// a safe relative path (IsSafeBasename), so nothing escapes the folder.
// Thread-safe (no shared state beyond the files).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "base/status.h"
#include "engine/dataset/dataset_config.h"
#include "engine/dataset/guessed_piece_head.h"
#include "engine/dataset/remote_source.h"
#include "engine/dataset/sample_peek.h"
#include "formats/index/index.h"
#include "formats/index/shard_table.h"

namespace sluice {

// <local>/<split> (or <local> when split is empty).
std::string StreamRoot(const StreamOptions& stream);
// <split>/<basename> (or <basename>): the object key under the remote root.
std::string RemoteKey(const StreamOptions& stream, const std::string& basename);

// `remote` is null for a local-only stream. An index with no shards, or a
// shard file name that is unsafe -> kCorrupt naming the index. When
// `index_json_bytes` is given it is set to the size of the index.json the
// index was read from, 0 for an index built otherwise (a raw-file stream).
// Every file it reads or writes goes through `env`: index.json, its
// download's temporary, the node's binary index, a listing's node file and
// the Parquet footer store (the remote's downloads: through the Env it was
// opened with).
// `guess` (may be null): when the index is an index.json that is not on the
// node yet (it is about to be downloaded), the head of the stream's first
// shard by Mosaic's name is read beside it into *guess (GuessedHead: the
// caller keeps it, and `remote`, for the first sample's peek); else *guess
// is left null.
// `piece_guess` (may be null): when the index is built from Parquet
// footers this process reads from the remote (a cold node), the head of
// the first listed file is read beside them into *piece_guess
// (LoadParquetStreamTable's `guess`: the caller keeps it, and `remote`,
// for the first row's piece); else *piece_guess is left null.
Result<ShardTable> LoadStreamIndex(const StreamOptions& stream, RemoteSource* remote,
                                   std::chrono::milliseconds wait_timeout,
                                   uint64_t* index_json_bytes = nullptr,
                                   uint64_t binary_index_from_bytes = UINT64_MAX,
                                   Env* env = Env::Default(),
                                   std::unique_ptr<GuessedHead>* guess = nullptr,
                                   std::unique_ptr<GuessedPieceHead>* piece_guess = nullptr);

// Called each time a remote raw-file or Parquet stream's table is built
// rather than mapped (tests: counting builds). Not thread-safe; set before
// opening.
void SetListedTableBuildHookForTesting(std::function<void()> hook);

}  // namespace sluice
