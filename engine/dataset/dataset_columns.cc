#include "engine/dataset/dataset_columns.h"

#include <algorithm>

#include "engine/dataset/dataset_shards.h"

namespace sluice {
namespace {

// LayOut for a stream whose columns are not the dataset's: out->fields, in
// the stream's order, moved to their dataset columns (`columns`, of
// `num_columns`).
void ReorderFields(const std::vector<uint32_t>& columns, size_t num_columns, SampleFields* out) {
  // The scratch keeps its capacity: no allocation per sample.
  thread_local std::vector<std::string_view> own;
  own.assign(out->fields.begin(), out->fields.end());
  out->fields.assign(num_columns, std::string_view());
  for (size_t k = 0; k < own.size() && k < columns.size(); ++k) {
    out->fields[columns[k]] = own[k];
  }
}

}  // namespace

Status DatasetColumns::AddStream(const std::vector<std::string>& names) {
  // Checked before anything changes, so a refused stream leaves no trace.
  for (const std::string& name : names) {
    if (std::count(names.begin(), names.end(), name) != 1) {
      return CorruptError("column '" + name + "' is named more than once");
    }
  }
  Stream stream;
  stream.names = names;
  for (const std::string& name : names) {
    auto it = std::find(names_.begin(), names_.end(), name);
    if (it == names_.end()) {
      names_.push_back(name);
      it = names_.end() - 1;
      // Streams added before lack the new column.
      for (Stream& earlier : streams_) earlier.position.push_back(kAbsent);
    }
    stream.columns.push_back(static_cast<uint32_t>(it - names_.begin()));
  }
  stream.position.assign(names_.size(), kAbsent);
  for (size_t k = 0; k < stream.columns.size(); ++k) {
    stream.position[stream.columns[k]] = static_cast<uint32_t>(k);
  }
  streams_.push_back(std::move(stream));
  // A stream's fields need reordering once the dataset has a column it
  // lacks or another order; decided again as names are added.
  for (Stream& s : streams_) s.same_as_dataset = s.names == names_;
  return Status::Ok();
}

Status DatasetColumns::Read(const OpenedShard& shard, size_t g, uint32_t i,
                            SampleFields* out) const {
  // The stream is found once a sample, for the read and the layout both:
  // StreamOfShard is a search, and a second one with LayOut's call cost 57
  // instructions a sample of a warm pass (BENCHMARKS.md, branch perf33f).
  const Stream& stream = streams_[StreamOfShard(first_shard_, g)];
  SLUICE_RETURN_IF_ERROR(shard.Read(i, stream.names, out));
  if (!stream.same_as_dataset) ReorderFields(stream.columns, names_.size(), out);
  return Status::Ok();
}

void DatasetColumns::LayOut(size_t g, SampleFields* out) const {
  const Stream& stream = streams_[StreamOfShard(first_shard_, g)];
  if (!stream.same_as_dataset) ReorderFields(stream.columns, names_.size(), out);
}

}  // namespace sluice
