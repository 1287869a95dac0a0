// sluice_stream_shard_table and sluice_stream_shard_entry: a streaming
// dataset's shards described in bulk (the counts, one call) and one at a time
// (its index entry), so that a binding opens a dataset of millions of shards
// without a call or an object per shard.
#include <string>

#include "bindings/c/c_api_internal.h"
#include "bindings/c/c_api_stream.h"
#include "formats/index/entry_schema.h"
#include "formats/index/index.h"

namespace {

using sluice::capi::CopyOut;
using sluice::capi::Fail;
using sluice::capi::Guard;
using sluice::capi::NullArgument;

}  // namespace

extern "C" {

sluice_status sluice_stream_shard_table(const sluice_stream* s, uint64_t* samples,
                                        uint32_t* streams, uint64_t count) {
  return Guard("sluice_stream_shard_table", [&] {
    if (s == nullptr) return NullArgument("sluice_stream_shard_table", "s");
    const uint64_t n = s->ds->num_shards();
    if (count < n) {
      return Fail(sluice::OutOfRangeError("sluice_stream_shard_table: room for " +
                                          std::to_string(count) + " shards, the dataset has " +
                                          std::to_string(n)));
    }
    if (samples == nullptr && n) return NullArgument("sluice_stream_shard_table", "samples");
    if (streams == nullptr && n) return NullArgument("sluice_stream_shard_table", "streams");
    for (uint64_t g = 0; g < n; ++g) {
      samples[g] = s->ds->shard_samples(static_cast<size_t>(g));
      streams[g] = static_cast<uint32_t>(s->ds->stream_of_shard(static_cast<size_t>(g)));
    }
    return SLUICE_OK;
  });
}

sluice_status sluice_stream_shard_entry(const sluice_stream* s, uint64_t shard, char** out_json,
                                        uint64_t* json_size) {
  return Guard("sluice_stream_shard_entry", [&] {
    if (s == nullptr) return NullArgument("sluice_stream_shard_entry", "s");
    if (out_json == nullptr) return NullArgument("sluice_stream_shard_entry", "out_json");
    *out_json = nullptr;
    if (shard >= s->ds->num_shards()) {
      return Fail(sluice::OutOfRangeError("sluice_stream_shard_entry: shard " +
                                          std::to_string(shard) + " of " +
                                          std::to_string(s->ds->num_shards())));
    }
    const sluice::ShardEntry entry = s->ds->shard_entry(static_cast<size_t>(shard));
    std::string json;
    if (sluice::FindIndexEntrySchema(entry.format) == nullptr) {
      // No index.json describes it (a raw-file stream's file, a Parquet row
      // group): its count is all there is to say.
      json = "{\"samples\": " + std::to_string(entry.samples) + "}";
    } else {
      auto text = sluice::SerializeShardEntry(entry);
      if (!text.ok()) {
        return Fail(text.status().WithContext("sluice_stream_shard_entry: shard " +
                                              std::to_string(shard)));
      }
      json = std::move(*text);
    }
    *out_json = CopyOut(json);
    if (json_size) *json_size = json.size();
    return SLUICE_OK;
  });
}

}  // extern "C"
