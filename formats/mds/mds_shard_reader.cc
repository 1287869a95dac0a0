#include "formats/mds/mds_shard_reader.h"

#include <algorithm>

#include <utility>

#include "base/bytes.h"

namespace sluice {

Result<std::vector<ColumnEncoding>> MdsColumnsFromEntry(const ShardEntry& entry,
                                                        std::string_view what) {
  const std::string where(what);
  const size_t n = entry.column_names.size();
  if (n == 0 || entry.column_encodings.size() != n || entry.column_sizes.size() != n) {
    return CorruptError(where + ": column_names, column_encodings and column_sizes have " +
                        std::to_string(n) + ", " + std::to_string(entry.column_encodings.size()) +
                        " and " + std::to_string(entry.column_sizes.size()) +
                        " entries, expected the same non-zero count");
  }
  std::vector<ColumnEncoding> columns;
  columns.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (i > 0 && !(entry.column_names[i - 1] < entry.column_names[i])) {
      return CorruptError(where + ": column names are not sorted: '" +
                          entry.column_names[i - 1] + "' before '" + entry.column_names[i] + "'");
    }
    auto enc = ParseColumnEncoding(entry.column_encodings[i], entry.column_names[i]);
    if (!enc.ok() && IsCustomEncodingName(entry.column_encodings[i])) {
      // A user's own encoding (Mosaic's readers decode it with the class
      // registered under its name): its fields are handed out as stored,
      // sized as column_sizes says, for the binding to decode.
      enc = CustomColumnEncoding(entry.column_encodings[i], entry.column_names[i],
                                 entry.column_sizes[i]);
      if (!enc.ok()) return CorruptError(where + ": " + enc.status().message());
      columns.push_back(std::move(enc).value());
      continue;
    }
    if (!enc.ok()) return enc.status().WithContext(where);
    if (enc->fixed_size != entry.column_sizes[i]) {
      auto text = [](const std::optional<uint64_t>& s) {
        return s ? std::to_string(*s) : std::string("null");
      };
      return CorruptError(where + ": column '" + entry.column_names[i] + "' (" +
                          entry.column_encodings[i] + ") has size " +
                          text(entry.column_sizes[i]) + ", expected " + text(enc->fixed_size));
    }
    columns.push_back(std::move(enc).value());
  }
  return columns;
}

Status SplitMdsSample(std::string_view sample, const std::vector<ColumnEncoding>& columns,
                      std::string_view shard_name, uint32_t index, uint64_t offset_in_shard,
                      std::vector<std::string_view>* fields) {
  auto corrupt = [&](uint64_t offset, const std::string& what) {
    return CorruptError(std::string(shard_name) + ": sample " + std::to_string(index) +
                        " at offset " + std::to_string(offset) + ": " + what);
  };
  size_t num_variable = 0;
  for (const ColumnEncoding& c : columns) num_variable += c.fixed_size ? 0 : 1;
  const uint64_t header = 4 * uint64_t{num_variable};
  if (sample.size() < header) {
    return corrupt(offset_in_shard, std::to_string(sample.size()) + " bytes, expected at least the " +
                                        std::to_string(header) + "-byte size header");
  }
  fields->resize(columns.size());
  uint64_t pos = header;
  size_t var = 0;
  for (size_t c = 0; c < columns.size(); ++c) {
    uint64_t len;
    if (columns[c].fixed_size) {
      len = *columns[c].fixed_size;
    } else {
      len = LoadLE<uint32_t>(sample.data() + 4 * var);
      ++var;
    }
    if (len > sample.size() - pos) {
      return corrupt(offset_in_shard + pos,
                     "column '" + columns[c].column + "' (" + columns[c].name + ") of " +
                         std::to_string(len) + " bytes runs past the sample end at offset " +
                         std::to_string(offset_in_shard + sample.size()));
    }
    (*fields)[c] = sample.substr(pos, len);
    pos += len;
  }
  if (pos != sample.size()) {
    return corrupt(offset_in_shard, std::to_string(sample.size()) + " bytes, the size header and " +
                                        "column sizes account for " + std::to_string(pos));
  }
  return Status::Ok();
}

Result<MdsShardReader> MdsShardReader::Open(std::string_view shard, std::string_view shard_name,
                                            std::vector<ColumnEncoding> columns) {
  const std::string name(shard_name);
  const uint64_t size = shard.size();
  if (columns.empty()) {
    return InvalidArgumentError(name + ": an MDS shard needs at least one column");
  }
  if (size < 8) {
    return CorruptError(name + ": truncated: " + std::to_string(size) +
                        " bytes, expected at least 8 (sample count and one offset)");
  }
  if (size > kMaxShardFileBytes) {
    return CorruptError(name + ": " + std::to_string(size) +
                        " bytes, more than 32-bit offsets can address");
  }
  const uint32_t n = LoadLE<uint32_t>(shard.data());
  const uint64_t table_end = MdsOffsetsTableEnd(n);
  if (table_end > size) {
    return CorruptError(name + ": sample count " + std::to_string(n) +
                        " at offset 0 needs an offsets table ending at " +
                        std::to_string(table_end) + ", past the file size " + std::to_string(size));
  }
  const char* table = shard.data() + 4;
  const uint32_t first = LoadLE<uint32_t>(table);
  if (first < table_end || first > size) {
    return CorruptError(name + ": offsets[0] = " + std::to_string(first) +
                        " at offset 4, expected the end of the config, between " +
                        std::to_string(table_end) + " and the file size " + std::to_string(size));
  }
  std::string_view config = shard.substr(table_end, first - table_end);
  if (config.size() < 2 || config.front() != '{' || config.back() != '}') {
    return CorruptError(name + ": the config at offset " + std::to_string(table_end) +
                        " (" + std::to_string(config.size()) +
                        " bytes, up to offsets[0]) is not a JSON object");
  }
  uint32_t prev = first;
  for (uint64_t i = 1; i <= n; ++i) {
    const uint32_t off = LoadLE<uint32_t>(table + 4 * i);
    if (off < prev || off > size) {
      return CorruptError(name + ": offsets[" + std::to_string(i) + "] = " + std::to_string(off) +
                          " at offset " + std::to_string(4 + 4 * i) + ", expected between " +
                          std::to_string(prev) + " and the file size " + std::to_string(size));
    }
    prev = off;
  }
  if (prev != size) {
    return CorruptError(name + ": offsets[" + std::to_string(n) + "] = " + std::to_string(prev) +
                        " at offset " + std::to_string(4 + 4 * uint64_t{n}) +
                        ", expected the file size " + std::to_string(size));
  }
  MdsShardReader r;
  r.shard_ = shard;
  r.shard_name_ = name;
  r.columns_ = std::move(columns);
  r.num_samples_ = n;
  r.config_ = config;
  return r;
}

Result<std::string_view> MdsShardReader::SampleBytes(uint32_t i) const {
  if (i >= num_samples_) {
    return OutOfRangeError(shard_name_ + ": sample " + std::to_string(i) + " of " +
                           std::to_string(num_samples_));
  }
  const char* entry = shard_.data() + MdsOffsetEntryAt(i);
  const uint32_t begin = LoadLE<uint32_t>(entry);
  const uint32_t end = LoadLE<uint32_t>(entry + 4);
  return shard_.substr(begin, end - begin);  // Open() checked the table
}

void MdsShardReader::PrefetchOffsets(uint32_t i) const {
  if (i < num_samples_) __builtin_prefetch(shard_.data() + 4 + 4 * uint64_t{i});
}

void MdsShardReader::Prefetch(uint32_t i) const {
  if (i >= num_samples_) return;
  const char* table = shard_.data() + 4;
  const uint64_t begin = LoadLE<uint32_t>(table + 4 * uint64_t{i});
  const uint64_t end = std::min<uint64_t>(LoadLE<uint32_t>(table + 4 * (uint64_t{i} + 1)), shard_.size());
  // Up to 1 KiB: a small sample whole, the head of a large one (the hardware
  // prefetcher follows the consumer's sequential reads from there).
  for (uint64_t at = begin; at < end && at < begin + 1024; at += 64) {
    __builtin_prefetch(shard_.data() + at);
  }
}

Status MdsShardReader::ReadSample(uint32_t i, std::vector<std::string_view>* fields) const {
  SLUICE_ASSIGN_OR_RETURN(std::string_view sample, SampleBytes(i));
  return SplitMdsSample(sample, columns_, shard_name_, i,
                        static_cast<uint64_t>(sample.data() - shard_.data()), fields);
}

Result<std::string_view> MdsShardReader::ReadField(uint32_t i, size_t column) const {
  if (column >= columns_.size()) {
    return OutOfRangeError(shard_name_ + ": column " + std::to_string(column) + " of " +
                           std::to_string(columns_.size()));
  }
  std::vector<std::string_view> fields;
  SLUICE_RETURN_IF_ERROR(ReadSample(i, &fields));
  return fields[column];
}

Status MdsShardReader::ValidateAllSamples() const {
  std::vector<std::string_view> fields;
  for (uint32_t i = 0; i < num_samples_; ++i) SLUICE_RETURN_IF_ERROR(ReadSample(i, &fields));
  return Status::Ok();
}

}  // namespace sluice
