// sluice convert from a Parquet file or folder to MDS: each column's MDS
// encoding as formats/parquet/field_encoding.h's MdsEncodingOf maps it, each
// row's fields turned into the MDS writer's values. MDS has no null: a null
// value, or a null element of a packed list, in a column that is not json is
// refused, naming the file, row group, row and column. `--columns NAME:json`
// stores any column but a bytes one as JSON instead, nulls included (the
// value `sluice cat` shows: null elements as null).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "formats/dataset/dataset_reader.h"
#include "formats/mds/mds_writer.h"

namespace sluice::cli {

// The writer's columns for `reader`'s Parquet columns. `wanted` (from
// --columns) may name a column only with its own mapping or json
// (kUnimplemented otherwise, as for MDS to MDS); the names it holds are
// erased.
Result<std::vector<std::pair<std::string, std::string>>> ParquetToMdsColumns(
    const DatasetReader& reader, std::map<std::string, std::string>* wanted);

// Sample `sample`'s fields (`fields`, in the reader's column order, read
// with wants_masks) as the
// values of `writer_columns` (sorted by name) into *values; `scratch`
// keeps JSON values alive until the write.
Status ParquetRowToMds(const DatasetReader& reader, uint64_t sample, const SampleFields& fields,
                       const std::vector<ColumnEncoding>& writer_columns,
                       std::vector<MdsValue>* values, std::vector<JsonValue>* scratch);

}  // namespace sluice::cli
