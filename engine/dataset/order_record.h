// What defines a run's sample order beyond Mosaic's five state keys: the
// record a state carries under "sluice_order", so that a resume can prove it
// continues the order the interrupted run had.
//
//   "sluice_order": {"version": 1, "digest": "<xxh64 hex>", "parts": {
//       "streams": [{"remote", "split", "proportion", "repeat", "choose",
//                    "shards", "samples", "index"}, ...],
//       "sampling": {"epoch_size", "sampling_method", "sampling_granularity",
//                    "partition_algo", "shuffle", "shuffle_algo", "shuffle_seed",
//                    "shuffle_block_size", "batch_size", "batching_method",
//                    "num_canonical_nodes", "replication", and with a
//                    schedule "mixture", "mixture_interpolation",
//                    "mixture_rule"},
//       "worlds": [{"nodes", "ranks_per_node"}, ...],
//       "skips": [[epoch, begin, end], ...],
//       "mixture_past": [{"epoch", "until", "mixture",
//                         "mixture_interpolation"}, ...]}}
//
//  - streams: per stream its remote (redacted: no secret reaches a
//    checkpoint) and split, its weight as configured (null = unset), its
//    shard and sample counts and its index fingerprint (IndexFingerprint).
//    The local folder is not part of it: it is a cache or a mount point,
//    named differently on each machine; the fingerprint names the data.
//  - sampling: the planning options as configured (null = Mosaic's default),
//    except shuffle_seed and num_canonical_nodes, which are the state's own
//    (a resume adopts them, as Mosaic's does). With a schedule, the rule it
//    draws by ("mixture_rule", planner::MixtureRule) is adopted too: a record
//    with a schedule and without the key was saved under the largest-deficit
//    rule ("deficit"), which is then recorded without the key, so that such
//    records keep their digest and resume with the order they had.
//  - worlds: the world shapes (physical nodes, ranks per node) the run ran
//    on, oldest first; a resume on another world appends its own.
//  - skips: the ranges of global positions the run skips (skip_ranges.h),
//    of the state's epoch only.
//  - mixture_past: the schedules a resume replaced in the state's epoch,
//    the past kept (planner::PlanConfig::mixture_past), oldest first; only
//    present when there is one, so that other records keep their digest.
//  - digest: xxh64 of the parts as json.dumps(parts, sort_keys=True).
//
// Pure functions and plain values; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "engine/dataset/dataset_config.h"
#include "formats/index/shard_table.h"
#include "formats/json/py_json.h"

namespace sluice {

inline constexpr int64_t kOrderRecordVersion = 1;

struct WorldShape {
  int64_t nodes = 1;
  int64_t ranks_per_node = 1;
  bool operator==(const WorldShape&) const = default;
};

// Global positions [begin, end) of `epoch`'s order that a run skips.
struct SkipRange {
  int64_t epoch = 0;
  int64_t begin = 0;
  int64_t end = 0;
  bool operator==(const SkipRange&) const = default;
};

struct OrderRecord {
  JsonValue::Array streams;  // one object per stream (StreamOrderPart)
  JsonValue::Object sampling;
  std::vector<WorldShape> worlds;  // oldest first; never empty
  std::vector<SkipRange> skips;
  JsonValue::Array mixture_past;  // MixturePastOrderPart's entries
};

// The fingerprint of the shards an index lists, in order: ListingFingerprint
// (formats/raw/file_listing.h, xxh64 over paths and sizes) of one entry per
// shard, its data file's name and size, a row group's name completed with
// "@<ordinal>" (the same file holds several). The sample counts are not in
// it: the streams part records them beside it.
std::string IndexFingerprint(const ShardTable& index);

// Stream `stream`'s entry of the streams part; `fingerprint` is
// IndexFingerprint of its index.
JsonValue StreamOrderPart(const StreamOptions& stream, const ShardTable& index,
                          const std::string& fingerprint);

// The sampling part for `options`, with the state's seed and canonical nodes.
JsonValue::Object SamplingOrderPart(const DatasetOptions& options, uint64_t shuffle_seed,
                                    int64_t num_canonical_nodes);

// The mixture_past part: `plan`'s past schedules of `epoch`.
JsonValue::Array MixturePastOrderPart(const planner::PlanConfig& plan, int64_t epoch);

// The past schedules a run resumed from `saved` at `sample_in_epoch` of
// `epoch` keeps (planner::PlanConfig::mixture_past): the saved ones of that
// epoch, then, when `now`'s schedule is another than `saved`'s (both with a
// schedule), saved's, which decided the positions up to sample_in_epoch
// (none when it decided none). kInvalidArgument naming the field for an
// entry of another shape.
Result<std::vector<planner::PlanConfig::MixtureChange>> ResumedMixturePast(const OrderRecord& saved,
                                                                          const OrderRecord& now, int64_t epoch,
                                                                          int64_t sample_in_epoch);

// The rule a resume from `saved` draws its schedule by: saved's
// "mixture_rule", "deficit" for a schedule recorded without one (saved
// before Tijdeman's rule), nullopt without a schedule. kInvalidArgument
// naming the field for another value.
Result<std::optional<planner::MixtureRule>> RecordedMixtureRule(const OrderRecord& saved);

// `sampling` (a sampling part) as recorded for a schedule drawn by `rule`:
// "mixture_rule" set, or absent for "deficit"; unchanged without a schedule.
void SetRecordedMixtureRule(JsonValue::Object* sampling, planner::MixtureRule rule);

// {"version", "digest", "parts"} (this key order).
JsonValue OrderRecordJson(const OrderRecord& record);

// Reads OrderRecordJson's value. kInvalidArgument naming the field for a
// value of another shape, another version, or a digest that does not match
// the parts (a state edited by hand, or corrupted).
Result<OrderRecord> ParseOrderRecord(const JsonValue& value);

// The parts a resume may be told to accept as changed ("adapt"): "world"
// (another world shape: Mosaic's elastic resume), "streams" (other data or
// stream options), "sampling" (other planning options, the schedule
// included), "schedule" (another mixture schedule, saved and current both
// having one: the past is kept, ResumedMixturePast).
struct AdaptParts {
  bool world = false;
  bool streams = false;
  bool sampling = false;
  bool schedule = false;
};
// kInvalidArgument naming an unknown part.
Result<AdaptParts> ParseAdaptParts(const std::vector<std::string>& names);

// Ok when `now` (this dataset, with the state's seed and canonical nodes,
// worlds = {its world}) continues the order `saved` records, but for the
// parts `adapt` accepts. Else kInvalidArgument naming every difference,
// saved value then current one, e.g.
//   resume state does not match this dataset: stream 0 (/data/a) index
//   changed: saved "5c1f...", now "09ab..."; sampling batch_size changed:
//   saved 4, now 8 (to resume anyway, adapt "streams", "sampling")
// A change of schedule alone (mixture, mixture_interpolation; saved and
// current both with a schedule) asks for "schedule".
// `stream_names`: how errors name each current stream.
Status CompareOrder(const OrderRecord& saved, const OrderRecord& now, const AdaptParts& adapt,
                    const std::vector<std::string>& stream_names);

}  // namespace sluice
