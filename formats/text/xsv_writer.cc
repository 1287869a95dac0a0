#include "formats/text/xsv_writer.h"

#include "formats/text/split_shard_format.h"

namespace sluice {

Result<std::unique_ptr<XsvWriter>> XsvWriter::Create(const std::string& out_dir,
                                                     XsvWriterOptions options) {
  SLUICE_RETURN_IF_ERROR(ValidateXsvOptions(options));
  std::unique_ptr<XsvWriter> w(new XsvWriter());
  w->options_ = options;
  SLUICE_ASSIGN_OR_RETURN(w->core_, CreateSplitShardWriter(out_dir, options,
                                                           XsvConfigEntry(options),
                                                           XsvHeader(options)));
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
