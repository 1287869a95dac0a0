#include "formats/text/jsonl_writer.h"

#include "formats/text/split_shard_format.h"

namespace sluice {

Result<std::unique_ptr<JsonlWriter>> JsonlWriter::Create(const std::string& out_dir,
                                                         JsonlWriterOptions options) {
  SLUICE_RETURN_IF_ERROR(ValidateJsonlOptions(options));
  std::unique_ptr<JsonlWriter> w(new JsonlWriter());
  w->columns_ = options.columns;
  w->newline_ = options.newline;
  SLUICE_ASSIGN_OR_RETURN(
      w->core_, CreateSplitShardWriter(out_dir, options, JsonlConfigEntry(options), ""));
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
