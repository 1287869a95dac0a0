// Test helpers for Parquet datasets: a field's bytes, read by its encoding
// name (formats/parquet/field_encoding.h's table), in the form of the
// fixtures' expected.json (tests/data/parquet/README.md), and the encoding
// name each fixture's arrow_type should map to. Written from the table, not
// from the reader's code, so the two can disagree.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "formats/json/py_json.h"

namespace sluice::testing {

// null for a field whose data pointer is null.
Result<JsonValue> ParquetFieldAsExpected(std::string_view encoding, std::string_view bytes);

// "int32" -> "int32", "large_list<element: large_string>" -> "list<str>",
// "timestamp[us, tz=America/New_York]" -> "timestamp[us,UTC]", ...
std::string EncodingOfArrowType(std::string_view arrow_type);

// json.dumps of `v` (or "<error>").
std::string DumpForTest(const JsonValue& v);

// The fixtures with values (not bad_*), as paths of their expected.json
// relative to tests/data/parquet, sorted.
std::vector<std::string> ParquetFixtureNames();

// A name for a parameterized test from such a path.
std::string ParquetFixtureTestName(const std::string& rel);

}  // namespace sluice::testing
