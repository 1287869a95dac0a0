// The ranged parts a Parquet row group's piece is read in (issue 35): each
// of its column chunks' reads (parquet::ChunkReads) cut into parts of one
// size, every part asked at once, each on a connection of its own
// (StreamShards::ReadPiece), so a row group downloads as fast as an MDS
// shard of its size. The one owner of that cut: ReadPiece and the guessed
// head read for the first piece beside the footers (GuessedPieceHead),
// whose parts must be the piece's own to serve it.
//
// The size: the remote's PartSize() (the stores' 8 MiB) for a piece read
// ahead of its use (the prefetcher's, a shard's open) and for the guessed
// head; half of it for the piece a consumer waits on (the first row's
// peek, cold) where no guessed head serves it, so its bytes come on twice
// the connections: a shuffled cold first row's 16 MB group through the
// bench's proxy (15 ms to first byte, ~100 MB/s a connection) arrived in
// 84-99 ms on two connections, in 42-57 ms on four (BENCHMARKS "first35w").
// Not the guessed head, kept as first35v measured it: cut in four, its
// parts beside the footers made a loaded machine's cold construction
// through the proxy slower in one run (0.104 -> 0.147 s, in order, 15
// rounds; near the runs' spread there). Only the peek's piece pays the
// extra GETs (two for 16 MB); every other keeps the store's part size, and
// a pass's throughput is the prefetcher's many pieces at once, not one
// piece's connections.
//
// Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "formats/dataset/format_descriptor.h"
#include "formats/parquet/chunk_reads.h"

namespace sluice {

// Whether a consumer waits on the piece now (the first row's peek).
enum class PieceUse { kAhead, kWaitedOn };

// The size of a piece's parts for `use`, from the remote's PartSize()
// `remote_part` (0 read as 1); never 0.
uint64_t PiecePartSize(uint64_t remote_part, PieceUse use);

// `reads` cut into parts of `part` bytes (0 read as 1), in file order, the
// last of each read shorter; a read of no bytes is one part of none (a
// request the store answers as the piece's checks expect). `first_part`
// (may be null) gets, per read, the index of its first part, then the
// number of parts.
std::vector<DataSpan> PieceParts(const std::vector<parquet::ByteRange>& reads, uint64_t part,
                                 std::vector<size_t>* first_part = nullptr);

}  // namespace sluice
