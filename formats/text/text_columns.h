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

// An `int` value beyond int64 (Python ints have no bound; Mosaic writes and
// reads them as str(int)): its canonical decimal text, as ParsePyIntDigits
// gives it.
struct TextBigInt {
  std::string digits;
  bool operator==(const TextBigInt&) const = default;
};

// A Python bool in a JSONL `int` column: Mosaic's JSONWriter accepts it
// (bool is an int in Python) and json.dumps writes true/false, which its
// reader gives back as a bool. CSV/TSV have no such value.
struct TextBool {
  bool value = false;
  bool operator==(const TextBool&) const = default;
};

// One value of a text column. For `str`, the view is UTF-8 text: when read
// it points into the caller's shard bytes; when written it only has to live
// for the duration of the call that takes it. `int` values are int64 when
// they fit and TextBigInt otherwise.
using TextValue = std::variant<int64_t, double, std::string_view, TextBigInt, TextBool>;

// "str" / "int" / "float" -> encoding; anything else is kUnimplemented naming
// the column.
Result<TextEncoding> ParseTextEncoding(std::string_view encoding,
                                       std::string_view column);

// The encoding's name as Mosaic writes it ("str", "int", "float").
const char* TextEncodingName(TextEncoding encoding);

// True when `value` holds an alternative that `encoding` takes in CSV/TSV:
// str a view, int an int64 or a TextBigInt, float a double. JSONL's int
// also takes a TextBool (its encoder checks that itself).
bool TextValueMatches(TextEncoding encoding, const TextValue& value);

// Appends an `int` value's text as both formats write it, str(int) (an
// int64's decimal, a TextBigInt's digits); false, appending nothing, when
// `value` is not one.
bool AppendTextInt(std::string& out, const TextValue& value);

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
