// The raw-file format's descriptor functions: one "data" column of the
// file's bytes, read by RawFileReader.
#include "formats/dataset/format_hooks.h"
#include "formats/raw/raw_file_reader.h"

namespace sluice::format_hooks {

Status RawColumns(const ShardEntry&, const CustomEncodings&, std::vector<std::string>* names,
                  std::vector<std::string>* encodings) {
  *names = {std::string(kRawFileColumn)};
  *encodings = {std::string(kRawFileEncoding)};
  return Status::Ok();
}

Result<ShardReader> OpenRawReader(const ShardEntry& entry, std::string_view data,
                                  std::string_view, bool) {
  SLUICE_ASSIGN_OR_RETURN(RawFileReader reader, RawFileReader::Open(entry, data));
  return ShardReader(reader);
}

}  // namespace sluice::format_hooks
