#include "formats/raw/raw_file_reader.h"

#include <string>

namespace sluice {

Result<RawFileReader> RawFileReader::Open(const ShardEntry& entry, std::string_view data) {
  const std::string& name = entry.raw_data.basename;
  if (entry.samples != 1) {
    return CorruptError(name + ": a raw file is one sample, its entry says " +
                        std::to_string(entry.samples));
  }
  if (data.size() != entry.raw_data.bytes) {
    return CorruptError(name + ": has " + std::to_string(data.size()) +
                        " bytes, the listing says " + std::to_string(entry.raw_data.bytes));
  }
  RawFileReader r;
  r.name_ = name;
  r.data_ = data;
  return r;
}

Result<std::string_view> RawFileReader::Sample(uint32_t i) const {
  if (i != 0) {
    return OutOfRangeError(std::string(name_) + ": sample " + std::to_string(i) +
                           " of a raw file, which holds sample 0 only");
  }
  return data_;
}

}  // namespace sluice
