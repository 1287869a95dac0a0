// A node's totals of a dataset's counters, summed from the processes that
// read it: each process (each DataLoader worker) keeps one small record file
// of its counts in the node's state folder of the dataset's cache folder
// (cache/state_dir.h), `<state>/metrics/<pid>.<start>.<dataset>.rec`, and
// replaces it whole (a rename) now and then; anyone sums the folder.
//
// Cheap: no per-sample work; the consumer writes its record at most once a
// period, at the end of a pass and when asked (streaming_dataset.h). A
// record holds what adds up over processes: the counts (dataset_metrics.h
// CountFields), the process's last prefetch lead, its least and the least
// after each of its records (lead_minima.h), and per
// store host the HTTP counts and the time to first byte and transfer time
// histograms (fixed log buckets, base/log_histogram.h: histograms of
// processes add bucket by bucket, so the node's percentiles are those of
// the merged histogram, as exact as one process's). At most
// kNodeRecordHosts hosts, the busiest by requests, are kept by name; the
// rest, and a host whose name is longer than kNodeRecordHostName bytes,
// are summed as the host kOtherHosts.
//
// A process that ends keeps its last record, so its totals stay in the sum,
// once: its file is named by its pid and start time (base/file.h
// TempOwner), which no later process shares, and by its dataset's instance
// (a random number made when the dataset opened, kept by forked workers),
// so two datasets of one process do not replace each other's record. A
// record whose process has ended and that was last written longer ago than
// the retention (NodeRecordRetention) is deleted by the next sum: the
// node's totals are those of its running processes and of those that ended
// within the retention.
//
// Thread-safe functions.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "base/env.h"
#include "base/status.h"
#include "engine/dataset/dataset_metrics.h"

namespace sluice {

inline constexpr size_t kNodeRecordHosts = 64;
inline constexpr size_t kNodeRecordHostName = 320;
inline constexpr const char* kOtherHosts = "other";

// The folder of the node's records for the cache folder `local` (made when
// missing): <CacheStateDir(local)>/metrics. Errors name the path.
Result<std::string> NodeMetricsDir(const std::string& local, Env* env = Env::Default());

// The record file name of this process's use of dataset instance `dataset`.
std::string NodeRecordName(uint64_t dataset);

// Writes `m`'s counts, prefetch leads and hosts as the record
// `dir`/NodeRecordName(dataset), replacing it whole.
Status WriteNodeRecord(const std::string& dir, uint64_t dataset, const DatasetMetrics& m,
                       Env* env = Env::Default());

// How long the record of an ended process is kept after its last write:
// `option` seconds when given (the dataset option metrics_retention_s,
// checked by ParseDatasetOptions), else $SLUICE_METRICS_RETENTION_S seconds
// (a decimal integer), default 24 h. A bad variable is kInvalidArgument
// naming it.
Result<std::chrono::seconds> NodeRecordRetention(std::optional<int64_t> option = std::nullopt);

// Deletes the records in `dir` of ended processes last written longer ago
// than NodeRecordRetention(retention_s), as SumNodeRecords does first. A
// dataset calls it when it first writes its record, so that a node where
// nobody sums still forgets its ended processes.
Status PruneNodeRecords(const std::string& dir, Env* env = Env::Default(),
                        std::optional<int64_t> retention_s = std::nullopt);

// A job's or node's window over the records (one per view, kept between
// its sums): the batch count of each record (by file name) at the previous
// sum, and, after SumNodeRecords, the least prefetch leads of the batches
// summed since (the records' LeadMinima after those counts; 0 for none)
// and the number of records that gained batches.
// Exact: the window's counts are those same batches.
struct NodeLeadWindow {
  std::map<std::string, uint64_t> seen;  // replaced by each sum
  uint64_t lead_samples_min = 0, lead_shards_min = 0;
  uint64_t readers = 0;  // the records whose batches grew since the previous sum
};

// The sum of the records in `dir` (of dataset instance `only` when given),
// `processes` the number of records summed: counts added; hosts merged by
// name (counts and histogram buckets added; in_flight 0), each process's
// once (its record that saw the most: host counters are process-wide), and
// http_requests/_retries/_throttles summed from those hosts; the prefetch lead
// (prefetch_lead_samples/_shards) the sum of the last leads of the
// processes still running (a lead of an ended process is no longer ready),
// and its min (lead_samples_min/_shards_min) the least of the records that
// have batches. A file that is not a whole record of this version (a
// foreign file, an older version) is passed over. First deletes the records
// of ended processes older than NodeRecordRetention(retention_s). With
// `window`, also its least leads since its previous sum (see above).
Result<DatasetMetrics> SumNodeRecords(const std::string& dir, std::optional<uint64_t> only,
                                      Env* env = Env::Default(),
                                      std::optional<int64_t> retention_s = std::nullopt,
                                      NodeLeadWindow* window = nullptr);

}  // namespace sluice
