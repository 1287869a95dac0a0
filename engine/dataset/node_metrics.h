// A node's totals of a dataset's counters, summed from the processes that
// read it: each process (each DataLoader worker) keeps one small record file
// of its counts in the node's state folder of the dataset's cache folder
// (cache/state_dir.h), `<state>/metrics/<pid>.<start>.<dataset>.rec`, and
// replaces it whole (a rename) now and then; anyone sums the folder.
//
// Cheap: no per-sample work; the consumer writes its record at most once a
// period, at the end of a pass and when asked (streaming_dataset.h). A
// record holds counts only (dataset_metrics.h's, no gauges, no per-host
// figures): a sum of counts is a node's count. A process that ends keeps
// its last record, so its totals stay in the sum, once: its file is named
// by its pid and start time (base/file.h TempOwner), which no later process
// shares, and by its dataset's instance (a random number made when the
// dataset opened, kept by forked workers), so two datasets of one process
// do not replace each other's record. Records accumulate, one per reading
// process and dataset, until the folder is deleted.
//
// Thread-safe functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/env.h"
#include "base/status.h"
#include "engine/dataset/dataset_metrics.h"

namespace sluice {

// The folder of the node's records for the cache folder `local` (made when
// missing): <CacheStateDir(local)>/metrics. Errors name the path.
Result<std::string> NodeMetricsDir(const std::string& local, Env* env = Env::Default());

// The record file name of this process's use of dataset instance `dataset`.
std::string NodeRecordName(uint64_t dataset);

// Writes `m`'s counts as the record `dir`/NodeRecordName(dataset),
// replacing it whole.
Status WriteNodeRecord(const std::string& dir, uint64_t dataset, const DatasetMetrics& m,
                       Env* env = Env::Default());

// The sum of the records in `dir` (of dataset instance `only` when given):
// counts only, `processes` the number of records summed. A file that is not
// a whole record of this version (a foreign file) is passed over.
Result<DatasetMetrics> SumNodeRecords(const std::string& dir, std::optional<uint64_t> only,
                                      Env* env = Env::Default());

}  // namespace sluice
