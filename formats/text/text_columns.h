// Columns of Mosaic's split text formats (JSONL `json`, and `csv`/`tsv`/`xsv`):
// every column is one of three encodings, `str`, `int` or `float`.
//
// Plain values and pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "base/status.h"
#include "formats/index/index.h"

namespace sluice {

enum class TextEncoding { kStr, kInt, kFloat };

struct TextColumn {
  std::string name;
  TextEncoding encoding = TextEncoding::kStr;
};

// One value of a text column. For `str`, the view is UTF-8 text: when read
// it points into the caller's shard bytes; when written it only has to live
// for the duration of the call that takes it.
using TextValue = std::variant<int64_t, double, std::string_view>;

// "str" / "int" / "float" -> encoding; anything else is kUnimplemented naming
// the column.
Result<TextEncoding> ParseTextEncoding(std::string_view encoding,
                                       std::string_view column);

// The encoding's name as Mosaic writes it ("str", "int", "float").
const char* TextEncodingName(TextEncoding encoding);

// True when `value` holds the alternative that `encoding` requires.
bool TextValueMatches(TextEncoding encoding, const TextValue& value);

// The columns of a split-format shard entry, sorted by name (the order in
// which Mosaic lays them out). JSON entries declare `columns` (an object);
// CSV/TSV/XSV entries declare `column_names` + `column_encodings` (and
// `columns` is used when those are absent). Errors (kCorrupt, or
// kUnimplemented for an unknown encoding) name the shard's data file:
// no columns, mismatched lengths, names not strictly ascending (Mosaic's
// writers sort them, so unsorted or duplicate names mean a foreign writer).
Result<std::vector<TextColumn>> TextColumnsFromEntry(const ShardEntry& entry);

// Sorts `columns` by name and rejects an empty list, duplicate or empty
// names (kInvalidArgument). Used by the writers on user-given columns.
Status SortAndCheckTextColumns(std::vector<TextColumn>& columns);

}  // namespace sluice
