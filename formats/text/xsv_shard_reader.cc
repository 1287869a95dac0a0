#include "formats/text/xsv_shard_reader.h"

#include "base/bytes.h"
#include "formats/json/py_number_text.h"

namespace sluice {
namespace {

// A field quoted for an error message, cut short so that a hostile line
// cannot make the message unbounded.
std::string Quoted(std::string_view field) {
  constexpr size_t kMax = 64;
  if (field.size() <= kMax) return "'" + std::string(field) + "'";
  return "'" + std::string(field.substr(0, kMax)) + "...' (" +
         std::to_string(field.size()) + " bytes)";
}

}  // namespace

Result<std::string> XsvSeparator(const ShardEntry& entry) {
  if (entry.format == "csv") return std::string(",");
  if (entry.format == "tsv") return std::string("\t");
  if (entry.format == "xsv") {
    if (!entry.separator || entry.separator->empty()) {
      return CorruptError(entry.raw_data.basename +
                          ": xsv index entry has no separator");
    }
    return *entry.separator;
  }
  return InvalidArgumentError(entry.raw_data.basename + ": format '" + entry.format +
                              "' is not a CSV/TSV/XSV shard");
}

Result<XsvShardReader> XsvShardReader::Open(const ShardEntry& entry,
                                            std::string_view data,
                                            std::string_view meta) {
  XsvShardReader r;
  r.data_name_ = entry.raw_data.basename;
  SLUICE_ASSIGN_OR_RETURN(r.separator_, XsvSeparator(entry));
  SLUICE_ASSIGN_OR_RETURN(r.columns_, TextColumnsFromEntry(entry));
  r.newline_ = entry.newline.value_or("\n");
  if (r.newline_.empty()) return CorruptError(r.data_name_ + ": empty newline in index entry");
  // Columns are sorted (TextColumnsFromEntry checks), so this is the header
  // Mosaic writes.
  std::string header;
  for (size_t c = 0; c < r.columns_.size(); ++c) {
    if (c > 0) header += r.separator_;
    header += r.columns_[c].name;
  }
  header += r.newline_;
  if (data.substr(0, header.size()) != header) {
    return CorruptError(r.data_name_ + ": header line at byte 0 is not the expected '" +
                        HexEncode(header) + "' (hex), found '" +
                        HexEncode(data.substr(0, header.size())) + "'");
  }
  if (header.size() > UINT32_MAX) return CorruptError(r.data_name_ + ": header too long");
  const std::string meta_name =
      entry.raw_meta ? entry.raw_meta->basename : r.data_name_ + ".meta";
  SLUICE_ASSIGN_OR_RETURN(
      r.meta_, SplitMeta::Parse(meta, data.size(), entry.samples,
                                static_cast<uint32_t>(header.size()), meta_name,
                                r.data_name_));
  r.data_ = data;
  return r;
}

Result<std::string_view> XsvShardReader::Line(uint32_t i) const {
  if (i >= size()) {
    return OutOfRangeError(data_name_ + ": sample " + std::to_string(i) +
                           " out of range (shard has " + std::to_string(size()) + ")");
  }
  uint32_t begin = meta_.offset(i), end = meta_.offset(i + 1);
  return data_.substr(begin, end - begin);
}

Result<std::vector<TextValue>> XsvShardReader::Sample(uint32_t i) const {
  SLUICE_ASSIGN_OR_RETURN(std::string_view line, Line(i));
  const uint64_t begin = meta_.offset(i);
  auto where = [&](uint64_t off) {
    return data_name_ + ": sample " + std::to_string(i) + " at byte " + std::to_string(off);
  };
  if (line.size() < newline_.size() ||
      line.substr(line.size() - newline_.size()) != newline_) {
    return CorruptError(where(begin) + ": line does not end with the shard's newline");
  }
  std::string_view text = line.substr(0, line.size() - newline_.size());
  if (size_t bad = FindInvalidUtf8(text); bad != std::string_view::npos) {
    return CorruptError(where(begin + bad) + ": invalid UTF-8");
  }
  std::vector<TextValue> values;
  values.reserve(columns_.size());
  size_t pos = 0;
  for (size_t c = 0; c < columns_.size(); ++c) {
    size_t end = text.find(separator_, pos);
    const bool last = c + 1 == columns_.size();
    if (last ? end != std::string_view::npos : end == std::string_view::npos) {
      size_t fields = 1;
      for (size_t p = text.find(separator_); p != std::string_view::npos;
           p = text.find(separator_, p + separator_.size())) {
        ++fields;
      }
      return CorruptError(where(begin) + ": " + std::to_string(fields) +
                          " fields, expected " + std::to_string(columns_.size()));
    }
    if (last) end = text.size();
    std::string_view field = text.substr(pos, end - pos);
    const TextColumn& col = columns_[c];
    switch (col.encoding) {
      case TextEncoding::kStr:
        values.emplace_back(field);
        break;
      case TextEncoding::kInt: {
        auto v = ParsePyIntText(field);
        if (!v) {
          return CorruptError(where(begin + pos) + ": column '" + col.name +
                              "' expected an int64, found " + Quoted(field));
        }
        values.emplace_back(*v);
        break;
      }
      case TextEncoding::kFloat: {
        auto v = ParsePyFloatText(field);
        if (!v) {
          return CorruptError(where(begin + pos) + ": column '" + col.name +
                              "' expected a float, found " + Quoted(field));
        }
        values.emplace_back(*v);
        break;
      }
    }
    pos = end + separator_.size();
  }
  return values;
}

}  // namespace sluice
