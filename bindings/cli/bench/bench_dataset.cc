#include "bindings/cli/bench/bench_dataset.h"

#include "formats/index/shard_table.h"

namespace sluice::bench {
namespace {

uint64_t Stored(const ShardRef& e, const FileRef& raw, const std::optional<FileRef>& zip) {
  return e.compression() && zip ? zip->bytes : raw.bytes;
}

}  // namespace

std::vector<ShardBytes> ShardBytesOf(const StreamingDataset& dataset) {
  std::vector<ShardBytes> out;
  for (size_t s = 0; s < dataset.num_streams(); ++s) {
    const ShardTable& index = dataset.stream_index(s);
    out.reserve(out.size() + index.size());
    for (size_t i = 0; i < index.size(); ++i) {
      const ShardRef e = index.ref(i);
      ShardBytes b;
      b.samples = e.samples;
      // A Parquet row group's piece downloads its chunks; the footer it
      // holds comes from the node's footer store.
      b.stored = e.piece ? e.piece->length : Stored(e, e.raw_data, e.zip_data);
      b.cached = e.raw_data.bytes;
      if (e.raw_meta) {
        b.stored += Stored(e, *e.raw_meta, e.zip_meta);
        b.cached += e.raw_meta->bytes;
      }
      out.push_back(b);
    }
  }
  return out;
}

}  // namespace sluice::bench
