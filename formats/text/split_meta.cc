#include "formats/text/split_meta.h"

#include "base/bytes.h"
#include "formats/json/py_json.h"

namespace sluice {

uint32_t SplitMeta::offset(uint32_t i) const {
  return LoadLE<uint32_t>(offsets_.data() + size_t{4} * i);
}

Result<SplitMeta> SplitMeta::Parse(std::string_view meta, uint64_t data_size,
                                   uint64_t expected_samples, uint32_t first_offset,
                                   std::string_view meta_name,
                                   std::string_view data_name) {
  const std::string mname(meta_name);
  if (meta.size() < 4) {
    return CorruptError(mname + ": truncated meta file: " + std::to_string(meta.size()) +
                        " bytes, expected at least 4 for the sample count");
  }
  SplitMeta m;
  m.n_ = LoadLE<uint32_t>(meta.data());
  if (m.n_ != expected_samples) {
    return CorruptError(mname + ": meta file holds " + std::to_string(m.n_) +
                        " samples, index entry says " + std::to_string(expected_samples));
  }
  const uint64_t offsets_end = 4 + uint64_t{4} * (uint64_t{m.n_} + 1);
  if (meta.size() < offsets_end) {
    return CorruptError(mname + ": truncated meta file: " + std::to_string(meta.size()) +
                        " bytes, expected at least " + std::to_string(offsets_end) +
                        " for " + std::to_string(m.n_) + " samples");
  }
  m.offsets_ = meta.substr(4, offsets_end - 4);
  m.config_ = meta.substr(offsets_end);
  const std::string dname(data_name);
  if (m.offset(0) != first_offset) {
    return CorruptError(mname + ": offsets[0] is " + std::to_string(m.offset(0)) +
                        ", expected " + std::to_string(first_offset) + " for " + dname);
  }
  if (m.offset(0) > data_size) {
    return CorruptError(mname + ": offsets[0] = " + std::to_string(m.offset(0)) +
                        " is past the end of " + dname + " (size " +
                        std::to_string(data_size) + ")");
  }
  for (uint32_t i = 0; i < m.n_; ++i) {
    uint32_t a = m.offset(i), b = m.offset(i + 1);
    if (b < a) {
      return CorruptError(mname + ": sample " + std::to_string(i) + ": offsets[" +
                          std::to_string(i + 1) + "] = " + std::to_string(b) +
                          " is before offsets[" + std::to_string(i) + "] = " +
                          std::to_string(a));
    }
    if (b > data_size) {
      return CorruptError(mname + ": sample " + std::to_string(i) + ": end offset " +
                          std::to_string(b) + " is past the end of " + dname +
                          " (size " + std::to_string(data_size) + ")");
    }
  }
  if (m.offset(m.n_) != data_size) {
    return CorruptError(mname + ": last offset " + std::to_string(m.offset(m.n_)) +
                        " does not match the size of " + dname + " (" +
                        std::to_string(data_size) + ")");
  }
  auto config = ParsePyJson(m.config_);
  if (!config.ok()) {
    return CorruptError(mname + ": config at byte " + std::to_string(offsets_end) +
                        " is not JSON: " + config.status().message());
  }
  if (!std::holds_alternative<JsonValue::Object>(config->v)) {
    return CorruptError(mname + ": config at byte " + std::to_string(offsets_end) +
                        " is not a JSON object");
  }
  return m;
}

std::string EncodeSplitMeta(const std::vector<uint32_t>& offsets,
                            std::string_view config_json) {
  std::string out;
  out.reserve(4 + 4 * offsets.size() + config_json.size());
  AppendLE<uint32_t>(out, static_cast<uint32_t>(offsets.empty() ? 0 : offsets.size() - 1));
  for (uint32_t o : offsets) AppendLE<uint32_t>(out, o);
  out.append(config_json);
  return out;
}

}  // namespace sluice
