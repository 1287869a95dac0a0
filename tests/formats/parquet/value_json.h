// The value of one row of a decoded column as the fixtures' expected.json
// spells it (tests/data/parquet, see the fixtures' README): integers exact,
// floats as Python's repr() in a string, strings, {"hex": ...} for binary,
// decimals as str(Decimal), INT96 as nanoseconds, lists as arrays.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "base/status.h"
#include "formats/json/py_json.h"
#include "formats/parquet/column_buffer.h"

namespace sluice::parquet::testing {

Result<JsonValue> RowAsJson(const ColumnBuffer& column, size_t row);

}  // namespace sluice::parquet::testing
