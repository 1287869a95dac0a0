// The MDS format's descriptor functions: columns from the entry's lists,
// MdsShardReader, a FieldWriter over MdsWriter fed stored column bytes, and
// a sample peeked through its offsets entry.
#include <algorithm>

#include "base/bytes.h"
#include "formats/dataset/format_hooks.h"
#include "formats/mds/mds_shard_reader.h"
#include "formats/mds/mds_writer.h"

namespace sluice::format_hooks {
namespace {

class MdsFieldWriter : public FieldWriter {
 public:
  explicit MdsFieldWriter(std::unique_ptr<MdsWriter> writer) : writer_(std::move(writer)) {
    for (const ColumnEncoding& c : writer_->columns()) names_.push_back(c.column);
    fields_.resize(names_.size());
  }
  const std::vector<std::string>& column_names() const override { return names_; }
  Status Set(size_t column, std::string_view field) override {
    if (column >= fields_.size()) return InvalidArgumentError("no column " + std::to_string(column));
    fields_[column] = field;
    return Status::Ok();
  }
  Status Write() override { return writer_->WriteFields(fields_); }
  Status Finish() override { return writer_->Finish(); }
  const ShardedWriter& core() const override { return writer_->core(); }

 private:
  std::unique_ptr<MdsWriter> writer_;
  std::vector<std::string> names_;
  std::vector<std::string_view> fields_;  // reused across samples
};

}  // namespace

Status MdsColumns(const ShardEntry& entry, const CustomEncodings& custom,
                  std::vector<std::string>* names, std::vector<std::string>* encodings) {
  // The lists' lengths and the sizes are checked when a shard loads
  // (MdsColumnsFromEntry); the names are checked here, when the dataset opens.
  for (size_t i = 0; i < entry.column_encodings.size(); ++i) {
    const std::string column = i < entry.column_names.size() ? entry.column_names[i] : "";
    SLUICE_RETURN_IF_ERROR(CheckEncodingRegistered(entry.column_encodings[i], column, custom));
  }
  *names = entry.column_names;
  *encodings = entry.column_encodings;
  return Status::Ok();
}

Result<ShardReader> OpenMdsReader(const ShardEntry& entry, std::string_view data,
                                  std::string_view /*meta*/, bool) {
  const std::string& name = entry.raw_data.basename;
  SLUICE_ASSIGN_OR_RETURN(std::vector<ColumnEncoding> cols, MdsColumnsFromEntry(entry, name));
  SLUICE_ASSIGN_OR_RETURN(MdsShardReader reader, MdsShardReader::Open(data, name, std::move(cols)));
  if (reader.num_samples() != entry.samples) {
    return CorruptError(name + ": holds " + std::to_string(reader.num_samples()) +
                        " samples, index.json says " + std::to_string(entry.samples));
  }
  return ShardReader(std::move(reader));
}

Result<std::unique_ptr<FieldWriter>> OpenMdsWriter(const std::string& out_dir,
                                                   const Columns& columns,
                                                   const FieldWriterOptions& options) {
  if (options.newline || options.separator) {
    return InvalidArgumentError("format 'mds' takes no newline or separator");
  }
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<MdsWriter> writer,
                          MdsWriter::Create(out_dir, columns, options.sharded,
                                            options.custom_encodings));
  return std::unique_ptr<FieldWriter>(new MdsFieldWriter(std::move(writer)));
}

uint64_t MdsHeadBytes(const ShardEntry& entry, uint64_t data_size) {
  // The index's count, bounded by what the file could hold (the reader
  // checks the file's own count when it opens); a page for the config.
  const uint64_t n = std::min<uint64_t>(entry.samples, data_size / 4);
  return std::min<uint64_t>(data_size, MdsOffsetsTableEnd(n) + 4096);
}

DataSpan MdsPeekBoundsAt(uint32_t i) { return {MdsOffsetEntryAt(i), 8}; }

Result<DataSpan> MdsPeekSampleSpan(const ShardEntry& entry, uint32_t i, std::string_view bounds,
                                   std::string_view where) {
  const std::string at = std::to_string(MdsOffsetEntryAt(i));
  if (bounds.size() != 8) {
    return CorruptError(std::string(where) + ": offsets entry at " + at + ": got " +
                        std::to_string(bounds.size()) + " bytes, expected 8");
  }
  const uint64_t begin = LoadLE<uint32_t>(bounds.data());
  const uint64_t end = LoadLE<uint32_t>(bounds.data() + 4);
  const uint64_t table_end = MdsOffsetsTableEnd(entry.samples);
  if (begin < table_end || end < begin || end > entry.raw_data.bytes) {
    return CorruptError(std::string(where) + ": offsets " + std::to_string(begin) + ".." +
                        std::to_string(end) + " at " + at + ", expected ordered, from " +
                        std::to_string(table_end) + " (the offsets table's end) up to " +
                        std::to_string(entry.raw_data.bytes) + " (the shard's size)");
  }
  return DataSpan{begin, end - begin};
}

DataSpan MdsPeekLikelySpan(const ShardEntry& entry, uint32_t i) {
  // The samples' bytes (and the config before them) spread evenly over the
  // samples; an entry whose size cannot hold its table guesses an empty
  // sample at the table's end (its bounds will say it is corrupt).
  const uint64_t table_end = MdsOffsetsTableEnd(entry.samples);
  if (entry.samples == 0 || entry.raw_data.bytes <= table_end) return {table_end, 0};
  const uint64_t average = (entry.raw_data.bytes - table_end) / entry.samples;
  return {table_end + std::min<uint64_t>(i, entry.samples) * average, average};
}

Status MdsPeekSplitSample(const ShardEntry& entry, uint32_t i, uint64_t offset,
                          std::string_view sample, std::vector<std::string_view>* fields) {
  const std::string& name = entry.raw_data.basename;
  SLUICE_ASSIGN_OR_RETURN(std::vector<ColumnEncoding> columns, MdsColumnsFromEntry(entry, name));
  return SplitMdsSample(sample, columns, name, i, offset, fields);
}

}  // namespace sluice::format_hooks
