#include "bindings/cli/bench/bench_dataset.h"

#include "base/file.h"
#include "formats/index/index.h"

namespace sluice::bench {
namespace {

uint64_t Stored(const ShardEntry& e, const FileInfo& raw, const std::optional<FileInfo>& zip) {
  return e.compression && zip ? zip->bytes : raw.bytes;
}

}  // namespace

Result<std::vector<ShardBytes>> LoadShardBytes(const BenchOptions& options, int64_t node) {
  std::vector<ShardBytes> out;
  for (size_t s = 0; s < options.dataset.streams.size(); ++s) {
    const std::string& split = options.dataset.streams[s].split;
    std::string folder = options.CacheFolder(node, s);
    std::string path = JoinPath(split.empty() ? folder : JoinPath(folder, split), "index.json");
    SLUICE_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
    SLUICE_ASSIGN_OR_RETURN(Index index, ParseIndex(text, path));
    for (const ShardEntry& e : index.shards) {
      ShardBytes b;
      b.samples = e.samples;
      b.stored = Stored(e, e.raw_data, e.zip_data);
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

std::vector<uint32_t> ShardOfSample(const std::vector<ShardBytes>& shards) {
  std::vector<uint32_t> of;
  for (size_t g = 0; g < shards.size(); ++g) of.insert(of.end(), shards[g].samples, static_cast<uint32_t>(g));
  return of;
}

}  // namespace sluice::bench
