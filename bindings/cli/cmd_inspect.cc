// sluice inspect DATASET: what a dataset holds, from its index.json alone
// (a Parquet file or folder: from the files' footers, inspect_parquet.h).
#include <cstdio>
#include <map>
#include <optional>
#include <vector>

#include "bindings/cli/commands.h"
#include "bindings/cli/dataset_source.h"
#include "bindings/cli/flags.h"
#include "bindings/cli/inspect_parquet.h"
#include "formats/dataset/dataset_reader.h"
#include "base/file.h"
#include "formats/dataset/format_descriptor.h"
#include "formats/index/shard_table.h"

namespace sluice::cli {

int RunInspect(const Args& args) {
  auto flags = ParseFlags(args, {}, {"shards"});
  if (!flags.ok()) return Error("inspect", flags.status(), 2);
  if (flags->positional.size() != 1) {
    std::fputs("usage: sluice inspect DATASET [--shards]\n", stderr);
    return 2;
  }
  auto source = DatasetSource::Open(flags->positional[0]);
  if (!source.ok()) return Error("inspect", source.status());
  // An index.json is read into a ShardTable (a million shards cost no
  // ShardEntry each); a Parquet dataset has no index.json to read.
  if (!FileExists(JoinPath((*source)->folder(), "index.json"))) {
    auto reader = DatasetReader::Open((*source)->folder());
    if (!reader.ok()) return Error("inspect", (*source)->Explain(reader.status()));
    Status st = InspectParquet(**reader, (*source)->name(), stdout);
    return st.ok() ? 0 : Error("inspect", st);
  }
  auto opened = OpenDatasetTable((*source)->folder());
  if (!opened.ok()) return Error("inspect", (*source)->Explain(opened.status()));
  const ShardTable& shards = opened->table;
  uint64_t raw_bytes = 0, stored_bytes = 0;
  std::map<std::string, size_t> formats, compressions;
  const std::string none = "none";
  for (size_t i = 0; i < shards.size(); ++i) {
    const ShardRef e = shards.ref(i);
    raw_bytes += e.raw_data.bytes + (e.raw_meta ? e.raw_meta->bytes : 0);
    stored_bytes += (e.zip_data ? e.zip_data->bytes : e.raw_data.bytes) +
                    (e.zip_meta ? e.zip_meta->bytes : e.raw_meta ? e.raw_meta->bytes : 0);
    formats[e.format()]++;
    compressions[e.compression() ? *e.compression() : none]++;
  }
  std::printf("dataset:     %s\n", (*source)->name().c_str());
  std::printf("samples:     %llu\n", static_cast<unsigned long long>(opened->num_samples));
  std::printf("shards:      %zu\n", shards.size());
  std::printf("format:     ");
  for (const auto& [f, n] : formats) std::printf(" %s (%zu shards)", f.c_str(), n);
  std::printf("\ncompression:");
  for (const auto& [c, n] : compressions) std::printf(" %s (%zu shards)", c.c_str(), n);
  std::printf("\nbytes:       %llu stored, %llu decompressed\n",
              static_cast<unsigned long long>(stored_bytes),
              static_cast<unsigned long long>(raw_bytes));
  std::printf("hashes:     ");
  const ShardEntry& first = shards.config(0);
  for (const std::string& h : first.hashes) std::printf(" %s", h.c_str());
  std::printf("%s\ncolumns:\n", first.hashes.empty() ? " none" : "");
  // Sizes are shown for formats whose entries record them (MDS's
  // column_sizes, one per column; ParseIndex leaves other formats' empty).
  const std::vector<std::optional<uint64_t>>& sizes = first.column_sizes;
  const std::vector<std::string>& names = opened->column_names;
  const std::vector<std::string>& encodings = opened->column_encodings;
  for (size_t c = 0; c < names.size(); ++c) {
    std::string size = "variable";
    if (c < sizes.size() && sizes[c]) size = std::to_string(*sizes[c]) + " bytes";
    std::printf("  %-24s %-24s %s\n", names[c].c_str(), encodings[c].c_str(),
                sizes.empty() ? "" : size.c_str());
  }
  if (flags->Has("shards")) {
    std::printf("shards:\n");
    for (size_t i = 0; i < shards.size(); ++i) {
      const ShardRef e = shards.ref(i);
      const std::string name(e.raw_data.basename);
      std::printf("  %5zu %-36s %8llu samples %12llu bytes", i, name.c_str(),
                  static_cast<unsigned long long>(e.samples),
                  static_cast<unsigned long long>(e.raw_data.bytes));
      if (e.zip_data) {
        std::printf("  %.*s %llu bytes", static_cast<int>(e.zip_data->basename.size()),
                    e.zip_data->basename.data(),
                    static_cast<unsigned long long>(e.zip_data->bytes));
      }
      std::printf("\n");
    }
  }
  return 0;
}

}  // namespace sluice::cli
