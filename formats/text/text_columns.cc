#include "formats/text/text_columns.h"

#include <algorithm>

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
    case TextEncoding::kInt: return std::holds_alternative<int64_t>(value);
    case TextEncoding::kFloat: return std::holds_alternative<double>(value);
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

size_t FindInvalidUtf8(std::string_view text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    unsigned char c = s[i];
    if (c < 0x80) { ++i; continue; }
    size_t len;
    unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the 2nd byte
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;       // overlong
      if (c == 0xED) hi = 0x9F;       // surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;       // overlong
      if (c == 0xF4) hi = 0x8F;       // above U+10FFFF
    } else {
      return i;
    }
    if (n - i < len) return i;
    if (s[i + 1] < lo || s[i + 1] > hi) return i;
    for (size_t k = 2; k < len; ++k) {
      if (s[i + k] < 0x80 || s[i + k] > 0xBF) return i;
    }
    i += len;
  }
  return std::string_view::npos;
}

}  // namespace sluice
