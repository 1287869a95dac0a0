#include "formats/text/xsv_writer.h"

namespace sluice {

Status XsvShardFormat::Configure(ShardEntry* entry) {
  // The core has set version, compression, hashes (sorted) and size_limit.
  const ShardEntry mine = XsvConfigEntry(options_);
  entry->format = mine.format;
  entry->column_names = mine.column_names;
  entry->column_encodings = mine.column_encodings;
  entry->newline = mine.newline;
  entry->separator = mine.separator;
  header_ = XsvHeader(options_);
  if (header_.size() > UINT32_MAX) {
    return InvalidArgumentError("header line longer than 4 GiB - 1");
  }
  SLUICE_ASSIGN_OR_RETURN(config_json_, SerializeShardConfig(*entry));
  return Status::Ok();
}

Result<ShardFiles> XsvShardFormat::BuildShard(const ShardSamples& samples) const {
  SplitShardBuilder builder(header_);
  for (size_t i = 0; i < samples.count(); ++i) {
    SLUICE_RETURN_IF_ERROR(builder.AddLine(samples.sample(i)));
  }
  SplitShardFiles files = builder.Finish(config_json_);
  return ShardFiles{std::move(files.data), std::move(files.meta)};
}

Result<std::unique_ptr<XsvWriter>> XsvWriter::Create(const std::string& out_dir,
                                                     XsvWriterOptions options) {
  SLUICE_RETURN_IF_ERROR(ValidateXsvOptions(options));
  std::unique_ptr<XsvWriter> w(new XsvWriter());
  w->options_ = options;
  ShardedWriterOptions core_options;
  core_options.compression = options.compression;
  core_options.hashes = options.hashes;
  core_options.size_limit = options.size_limit;
  SLUICE_ASSIGN_OR_RETURN(
      w->core_, ShardedWriter::Create(
                    out_dir, std::make_unique<XsvShardFormat>(std::move(options)),
                    core_options));
  return w;
}

Status XsvWriter::Write(std::span<const TextValue> values) {
  line_.clear();
  Status st = AppendXsvLine(options_, values, line_);
  if (!st.ok()) return st.WithContext("sample " + std::to_string(core_->samples_written()));
  return core_->Write(line_);
}

Status XsvWriter::Finish() { return core_->Finish(); }

}  // namespace sluice
