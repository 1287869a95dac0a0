// sluice verify DATASET: every recorded hash checked and every sample
// decoded (a Parquet file or folder: every page of every column chunk
// decoded, page CRCs checked where the writer stored them). Exit status 0 when all is well, 1 when anything is wrong (all
// problems are listed, one per shard). A remote dataset is fetched shard by
// shard (the next while the current one is checked), each deleted once
// checked.
#include <cstdio>
#include <future>

#include "bindings/cli/commands.h"
#include "bindings/cli/dataset_source.h"
#include "bindings/cli/flags.h"
#include "bindings/cli/progress.h"
#include "formats/dataset/dataset_reader.h"
#include "formats/dataset/format_descriptor.h"
#include "formats/dataset/sample_json.h"

namespace sluice::cli {
namespace {

// Decodes every field of every sample of one loaded shard.
Status DecodeShard(DatasetReader& r, size_t shard_index, Progress& progress) {
  SLUICE_ASSIGN_OR_RETURN(const LoadedShard* shard, r.Shard(shard_index));
  const uint64_t n = shard->entry().samples;
  if (shard->parquet() != nullptr) {
    // Loading the row group decoded every page; a row is a view of it.
    progress.Add(n);
    return Status::Ok();
  }
  SampleFields f;
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t sample = r.shard_start(shard_index) + i;
    SLUICE_RETURN_IF_ERROR(r.Read(sample, &f));
    if (const MdsShardReader* mds = shard->mds()) {
      for (size_t c = 0; c < f.fields.size(); ++c) {
        const ColumnEncoding& enc = mds->columns()[c];
        // Pickles and JPEG/PNG are opaque to a C++ reader; the rest decodes.
        SLUICE_RETURN_IF_ERROR(MdsFieldToJson(enc, f.fields[c]).status().WithContext(
            shard->entry().raw_data.basename + " sample " + std::to_string(i) + " column '" +
            enc.column + "'"));
      }
    } else if (const JsonlShardReader* jsonl = shard->jsonl()) {
      SLUICE_RETURN_IF_ERROR(jsonl->Sample(static_cast<uint32_t>(i)).status());
    } else {
      SLUICE_RETURN_IF_ERROR(shard->xsv()->Sample(static_cast<uint32_t>(i)).status());
    }
    progress.Add(1);
  }
  return Status::Ok();
}

}  // namespace

int RunVerify(const Args& args) {
  auto flags = ParseFlags(args, {}, {});
  if (!flags.ok()) return Error("verify", flags.status(), 2);
  if (flags->positional.size() != 1) {
    std::fputs("usage: sluice verify DATASET\n", stderr);
    return 2;
  }
  auto source = DatasetSource::Open(flags->positional[0]);
  if (!source.ok()) return Error("verify", source.status());
  DatasetSource& src = **source;
  DatasetReaderOptions options;
  options.verify_hashes = true;
  auto reader = DatasetReader::Open(src.folder(), options);
  if (!reader.ok()) return Error("verify", src.Explain(reader.status()));
  DatasetReader& r = **reader;
  const auto& shards = r.index().shards;
  // A remote shard downloads on its own thread while the previous one is
  // checked; a folder has nothing to fetch.
  auto policy = src.is_remote() ? std::launch::async : std::launch::deferred;
  auto fetch = [&](size_t s) {
    return std::async(policy, [&src, &shards, s] { return src.Fetch(shards[s]); });
  };
  size_t bad = 0;
  {
    Progress progress("verify", r.num_samples());
    std::future<Status> next = fetch(0);
    for (size_t s = 0; s < r.num_shards(); ++s) {
      Status st = next.get();
      if (s + 1 < r.num_shards()) next = fetch(s + 1);
      if (st.ok()) st = src.Explain(DecodeShard(r, s, progress));
      src.Drop(shards[s]);
      if (!st.ok()) {
        ++bad;
        std::fprintf(stderr, "FAIL shard %zu (%s): %s\n", s, shards[s].raw_data.basename.c_str(),
                     st.ToString().c_str());
      }
    }
  }
  if (bad > 0) {
    std::printf("FAILED: %zu of %zu shards have problems\n", bad, r.num_shards());
    return 1;
  }
  auto format = ShardFormatOf(shards[0]);
  if (format.ok() && (*format)->fields == FieldForm::kParquetValue) {
    std::printf("ok: %llu rows in %zu row groups, every page decoded (CRCs checked where stored)\n",
                static_cast<unsigned long long>(r.num_samples()), r.num_shards());
    return 0;
  }
  std::printf("ok: %llu samples in %zu shards, hashes and decoding verified\n",
              static_cast<unsigned long long>(r.num_samples()), r.num_shards());
  return 0;
}

}  // namespace sluice::cli
