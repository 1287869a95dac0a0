#include "formats/text/jsonl_writer.h"

namespace sluice {

Status JsonlShardFormat::Configure(ShardEntry* entry) {
  // The core has set version, compression, hashes (sorted) and size_limit.
  const ShardEntry mine = JsonlConfigEntry(options_);
  entry->format = mine.format;
  entry->columns = mine.columns;
  entry->newline = mine.newline;
  SLUICE_ASSIGN_OR_RETURN(config_json_, SerializeShardConfig(*entry));
  return Status::Ok();
}

Result<ShardFiles> JsonlShardFormat::BuildShard(const ShardSamples& samples) const {
  SplitShardBuilder builder;
  for (size_t i = 0; i < samples.count(); ++i) {
    SLUICE_RETURN_IF_ERROR(builder.AddLine(samples.sample(i)));
  }
  SplitShardFiles files = builder.Finish(config_json_);
  return ShardFiles{std::move(files.data), std::move(files.meta)};
}

Result<std::unique_ptr<JsonlWriter>> JsonlWriter::Create(const std::string& out_dir,
                                                         JsonlWriterOptions options) {
  SLUICE_RETURN_IF_ERROR(ValidateJsonlOptions(options));
  std::unique_ptr<JsonlWriter> w(new JsonlWriter());
  w->columns_ = options.columns;
  w->newline_ = options.newline;
  ShardedWriterOptions core_options;
  core_options.compression = options.compression;
  core_options.hashes = options.hashes;
  core_options.size_limit = options.size_limit;
  SLUICE_ASSIGN_OR_RETURN(
      w->core_, ShardedWriter::Create(
                    out_dir, std::make_unique<JsonlShardFormat>(std::move(options)),
                    core_options));
  return w;
}

Status JsonlWriter::Write(std::span<const TextValue> values) {
  line_.clear();
  Status st = AppendJsonlLine(columns_, values, newline_, line_);
  if (!st.ok()) return st.WithContext("sample " + std::to_string(core_->samples_written()));
  return core_->Write(line_);
}

Status JsonlWriter::Finish() { return core_->Finish(); }

}  // namespace sluice
