// sluice inspect on a Parquet file or folder: the dataset's columns (name,
// encoding, physical and logical type, repetition), then each file's row
// groups with, per column chunk, its codec, encodings, sizes and
// statistics, read from the files' footers.
#pragma once

#include <cstdio>
#include <string>

#include "base/status.h"
#include "formats/dataset/dataset_reader.h"

namespace sluice::cli {

// Prints the report for `reader` (a Parquet dataset) named `name` to `out`.
Status InspectParquet(const DatasetReader& reader, const std::string& name, std::FILE* out);

}  // namespace sluice::cli
