// Text exactly as CPython's json and float repr write it, so files Sluice
// writes are byte-identical to Mosaic's (index.json, shard configs, the
// `json` column encoding, JSONL lines, str_float and CSV values).
//
// Also a small JSON value model for values read back (json columns, JSONL
// lines, index.json is parsed separately with simdjson).
// Pure functions and plain values; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "base/status.h"

namespace sluice {

// Python repr(float): shortest round-trip digits; fixed notation when the
// decimal exponent is in [-4, 16) (always with a '.'), else "d.ddde+XX";
// "inf", "-inf", "nan", "-0.0".
std::string PyFloatRepr(double v);

// Appends a JSON string literal as json.dumps(ensure_ascii=True) writes it:
// quotes, \" \\ \n \r \t \b \f escapes, other control and non-ASCII code
// points as \uXXXX (lower-case hex, surrogate pairs above the BMP).
// Invalid UTF-8 is an error (kInvalidArgument) naming the byte offset.
Status AppendPyJsonString(std::string& out, std::string_view utf8);

// A parsed JSON value. Objects keep their key order as read.
// Integers outside int64 keep their decimal text in `big_int`.
struct JsonValue {
  struct BigInt { std::string digits; };  // e.g. "-1000000000000000000000000000007"
  using Array = std::vector<JsonValue>;
  using Object = std::vector<std::pair<std::string, JsonValue>>;
  std::variant<std::nullptr_t, bool, int64_t, BigInt, double, std::string, Array, Object> v;
};

// Parses one JSON text (Python's json.loads dialect: NaN, Infinity and
// -Infinity are accepted). Errors give the byte offset.
Result<JsonValue> ParsePyJson(std::string_view text);

// json.dumps(value, sort_keys=sort_keys): separators ", " and ": ",
// ensure_ascii, floats as PyFloatRepr (NaN/Infinity/-Infinity literals).
Result<std::string> DumpPyJson(const JsonValue& value, bool sort_keys);

}  // namespace sluice
