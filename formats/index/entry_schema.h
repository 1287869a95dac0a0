// Which keys an index.json shard entry of each of Mosaic's formats carries
// beyond the ones every entry has (format, version, compression, hashes,
// size_limit, samples, raw_data, zip_data).
//
// This is the index.json part of a shard format's descriptor
// (formats/dataset/shard_format.h, which points at these rows). It lives
// here because ParseIndex and the Serialize* functions sit below the format
// readers; formats whose index is not an index.json (Parquet footers, file
// listings) have no row. The one owner of "is this format split (newline,
// raw_meta, zip_meta)" and "how does its entry spell its columns".
//
// Constant data; thread-safe. Pointers stay valid for the whole program.
#pragma once

#include <string_view>

namespace sluice {

// How an entry spells its columns.
enum class EntryColumns {
  kListsWithSizes,  // column_encodings, column_names, column_sizes ("mds")
  kObject,          // columns: {name: encoding} ("json")
  kLists,           // column_encodings, column_names ("csv", "tsv", "xsv")
};

struct IndexEntrySchema {
  std::string_view format;  // the entry's `format` value
  EntryColumns columns;
  // A split format: each shard has a meta file beside its data file, and the
  // entry carries `newline`, `raw_meta` and `zip_meta`.
  bool has_meta;
  bool has_separator;  // the entry carries `separator` ("xsv")
};

// Every row, in a fixed order.
inline constexpr IndexEntrySchema kIndexEntrySchemas[] = {
    {"mds", EntryColumns::kListsWithSizes, /*has_meta=*/false, /*has_separator=*/false},
    {"json", EntryColumns::kObject, /*has_meta=*/true, /*has_separator=*/false},
    {"csv", EntryColumns::kLists, /*has_meta=*/true, /*has_separator=*/false},
    {"tsv", EntryColumns::kLists, /*has_meta=*/true, /*has_separator=*/false},
    {"xsv", EntryColumns::kLists, /*has_meta=*/true, /*has_separator=*/true},
};

// The row for `format`, or nullptr when index.json entries never hold it
// (callers word their own error: ParseIndex kUnimplemented, the
// serializers kInvalidArgument). constexpr, so that tables of descriptors
// pointing at rows are constant-initialized.
constexpr const IndexEntrySchema* FindIndexEntrySchema(std::string_view format) {
  for (const IndexEntrySchema& s : kIndexEntrySchemas) {
    if (s.format == format) return &s;
  }
  return nullptr;
}

}  // namespace sluice
