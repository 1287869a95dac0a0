// One sample rendered as JSON in the shape of the compat `expected.jsonl`
// files (tests/data/mosaic/mds/README.md): per column its `encoding`,
// `raw_hex` (the stored bytes) and the decoded value where JSON can hold it
// (`value`, `value_repr` for floats, `value_str` for str_int/str_decimal,
// `image` for pil, `items` for lists, dtype/shape/values for ndarray).
// JPEG/PNG pixels and pickles are not decoded: only raw_hex is given.
// Parquet rows: per column its `encoding`, `raw_hex` and the value as
// formats/parquet/field_encoding.h's FieldValueJson gives it (null for a
// null value); a packed list holding a null element also has
// `element_validity_hex` (its mask, a byte per element) and null in its
// value where the element is null. Used by `sluice cat` and by the
// compatibility tests.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "formats/dataset/dataset_reader.h"
#include "formats/json/py_json.h"
#include "formats/mds/column_encoding.h"

namespace sluice {

// The JSON object of one MDS field.
Result<JsonValue> MdsFieldToJson(const ColumnEncoding& encoding, std::string_view stored);

// The whole sample as one JSON line (sorted keys, ASCII only, no newline).
Result<std::string> SampleToJson(DatasetReader& reader, uint64_t sample);

}  // namespace sluice
