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
  SLUICE_ASSIGN_OR_RETURN(std::string separator, XsvSeparator(entry));
  SLUICE_ASSIGN_OR_RETURN(SplitShardLines lines, SplitShardLines::Declared(entry));
  // Columns are sorted (TextColumnsFromEntry checks), so this is the header
  // Mosaic writes.
  std::string header;
  for (size_t c = 0; c < lines.columns().size(); ++c) {
    if (c > 0) header += separator;
    header += lines.columns()[c].name;
  }
  header += lines.newline();
  if (data.substr(0, header.size()) != header) {
    return CorruptError(lines.data_name() + ": header line at byte 0 is not the expected '" +
                        HexEncode(header) + "' (hex), found '" +
                        HexEncode(data.substr(0, header.size())) + "'");
  }
  if (header.size() > UINT32_MAX) return CorruptError(lines.data_name() + ": header too long");
  SLUICE_RETURN_IF_ERROR(lines.Attach(entry, data, meta, static_cast<uint32_t>(header.size())));
  return XsvShardReader(std::move(lines), std::move(separator));
}

Result<std::vector<TextValue>> XsvShardReader::Sample(uint32_t i) const {
  SLUICE_ASSIGN_OR_RETURN(std::string_view text, lines_.Text(i));
  const uint64_t begin = lines_.offset(i);
  auto where = [&](uint64_t off) { return lines_.Where(i, off); };
  const std::vector<TextColumn>& columns = lines_.columns();
  std::vector<TextValue> values;
  values.reserve(columns.size());
  size_t pos = 0;
  for (size_t c = 0; c < columns.size(); ++c) {
    size_t end = text.find(separator_, pos);
    const bool last = c + 1 == columns.size();
    if (last ? end != std::string_view::npos : end == std::string_view::npos) {
      size_t fields = 1;
      for (size_t p = text.find(separator_); p != std::string_view::npos;
           p = text.find(separator_, p + separator_.size())) {
        ++fields;
      }
      return CorruptError(where(begin) + ": " + std::to_string(fields) +
                          " fields, expected " + std::to_string(columns.size()));
    }
    if (last) end = text.size();
    std::string_view field = text.substr(pos, end - pos);
    const TextColumn& col = columns[c];
    switch (col.encoding) {
      case TextEncoding::kStr:
        values.emplace_back(field);
        break;
      case TextEncoding::kInt: {
        if (auto v = ParsePyIntText(field)) {
          values.emplace_back(*v);
        } else if (auto big = ParsePyIntDigits(field)) {
          values.emplace_back(TextBigInt{std::move(*big)});
        } else {
          return CorruptError(where(begin + pos) + ": column '" + col.name +
                              "' expected an int (at most " +
                              std::to_string(kPyIntMaxStrDigits) + " digits), found " +
                              Quoted(field));
        }
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
