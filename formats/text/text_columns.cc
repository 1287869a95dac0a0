#include "formats/text/text_columns.h"

#include <algorithm>
#include <charconv>

#include "base/utf8.h"

namespace sluice {

Result<TextEncoding> ParseTextEncoding(std::string_view encoding,
                                       std::string_view column) {
  if (encoding == "str") return TextEncoding::kStr;
  if (encoding == "int") return TextEncoding::kInt;
  if (encoding == "float") return TextEncoding::kFloat;
  return UnimplementedError("column '" + std::string(column) +
                            "': unknown text encoding '" + std::string(encoding) +
                            "' (expected str, int or float)");
}

const char* TextEncodingName(TextEncoding encoding) {
  switch (encoding) {
    case TextEncoding::kStr: return "str";
    case TextEncoding::kInt: return "int";
    case TextEncoding::kFloat: return "float";
  }
  return "?";
}

bool TextValueMatches(TextEncoding encoding, const TextValue& value) {
  switch (encoding) {
    case TextEncoding::kStr: return std::holds_alternative<std::string_view>(value);
    case TextEncoding::kInt:
      return std::holds_alternative<int64_t>(value) || std::holds_alternative<TextBigInt>(value);
    case TextEncoding::kFloat: return std::holds_alternative<double>(value);
  }
  return false;
}

bool AppendTextInt(std::string& out, const TextValue& value) {
  if (const auto* i = std::get_if<int64_t>(&value)) {
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof buf, *i);
    out.append(buf, r.ptr);
    return true;
  }
  if (const auto* big = std::get_if<TextBigInt>(&value)) {
    out.append(big->digits);
    return true;
  }
  return false;
}

Result<std::vector<TextColumn>> TextColumnsFromEntry(const ShardEntry& entry) {
  const std::string& what = entry.raw_data.basename;
  std::vector<TextColumn> columns;
  if (!entry.column_names.empty() || !entry.column_encodings.empty()) {
    if (entry.column_names.size() != entry.column_encodings.size()) {
      return CorruptError(what + ": index entry has " +
                          std::to_string(entry.column_names.size()) +
                          " column_names but " +
                          std::to_string(entry.column_encodings.size()) +
                          " column_encodings");
    }
    for (size_t i = 0; i < entry.column_names.size(); ++i) {
      SLUICE_ASSIGN_OR_RETURN(
          TextEncoding enc,
          ParseTextEncoding(entry.column_encodings[i], entry.column_names[i]));
      columns.push_back({entry.column_names[i], enc});
    }
  } else {
    for (const auto& [name, encoding] : entry.columns) {
      SLUICE_ASSIGN_OR_RETURN(TextEncoding enc, ParseTextEncoding(encoding, name));
      columns.push_back({name, enc});
    }
  }
  if (columns.empty()) {
    return CorruptError(what + ": index entry declares no columns");
  }
  for (size_t i = 1; i < columns.size(); ++i) {
    if (!(columns[i - 1].name < columns[i].name)) {
      return CorruptError(what + ": column names are not sorted and unique ('" +
                          columns[i - 1].name + "' then '" + columns[i].name + "')");
    }
  }
  return columns;
}

Status SortAndCheckTextColumns(std::vector<TextColumn>& columns) {
  if (columns.empty()) return InvalidArgumentError("no columns given");
  std::sort(columns.begin(), columns.end(),
            [](const TextColumn& a, const TextColumn& b) { return a.name < b.name; });
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i].name.empty()) return InvalidArgumentError("empty column name");
    if (FindInvalidUtf8(columns[i].name) != std::string_view::npos) {
      return InvalidArgumentError("column name is not valid UTF-8");
    }
    if (i > 0 && columns[i - 1].name == columns[i].name) {
      return InvalidArgumentError("duplicate column '" + columns[i].name + "'");
    }
  }
  return Status::Ok();
}

}  // namespace sluice
