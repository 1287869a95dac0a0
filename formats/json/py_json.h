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

// How deep JSON values may nest, reading or writing: Python's json fails
// (RecursionError) near its default recursion limit of 1000, and deeper
// input must not exhaust the stack here.
inline constexpr int kPyJsonMaxDepth = 1000;

// Python repr(float): shortest round-trip digits; fixed notation when the
// decimal exponent is in [-4, 16) (always with a '.'), else "d.ddde+XX";
// "inf", "-inf", "nan" (whatever the NaN's sign bit), "-0.0".
std::string PyFloatRepr(double v);

// Appends a JSON string literal as json.dumps(ensure_ascii=True) writes it:
// quotes, \" \\ \n \r \t \b \f escapes, other control and non-ASCII code
// points as \uXXXX (lower-case hex, surrogate pairs above the BMP).
// Invalid UTF-8 is an error (kInvalidArgument) naming the byte offset, and
// then `out` is left as it was. Encoded surrogates (ED A0..BF xx) are
// accepted and written as \udXXX, because a Python str can hold a lone
// surrogate and ParsePyJson keeps one in that form.
Status AppendPyJsonString(std::string& out, std::string_view utf8);

// A parsed JSON value. Objects keep their key order as read.
// Integers outside int64 keep their decimal text in `big_int`.
struct JsonValue {
  struct BigInt { std::string digits; };  // e.g. "-1000000000000000000000000000007"
  using Array = std::vector<JsonValue>;
  using Object = std::vector<std::pair<std::string, JsonValue>>;
  // `{}` (the same null as without it) lets clang 14 with libstdc++ 12
  // (the fuzz build) instantiate Object's pair without a circular check.
  std::variant<std::nullptr_t, bool, int64_t, BigInt, double, std::string, Array, Object> v{};
};

// Parses one JSON text as json.loads does: NaN, Infinity and -Infinity are
// accepted; a number with a fraction or exponent is a double (out-of-range
// ones become +-inf or +-0.0, as float() does), any other is an int (BigInt
// beyond int64); a repeated object key keeps its first position and its last
// value (a dict); \u escapes of lone surrogates are kept as 3-byte
// generalized UTF-8, while raw text must be strict UTF-8; whitespace may
// surround the value (so a JSONL line with its newline parses).
// Errors are kCorrupt, "JSON at byte offset N: what". Bounded: nesting
// deeper than 1000 and integers longer than 4300 digits are refused (CPython
// raises for both), so hostile input cannot exhaust the stack or memory.
Result<JsonValue> ParsePyJson(std::string_view text);

// json.dumps(value, sort_keys=sort_keys): separators ", " and ": ",
// ensure_ascii, floats as PyFloatRepr (NaN/Infinity/-Infinity literals),
// keys sorted by code point at every level when `sort_keys`.
// kInvalidArgument for strings that are not UTF-8 (see AppendPyJsonString),
// a BigInt that is not a decimal integer, or nesting deeper than 1000.
Result<std::string> DumpPyJson(const JsonValue& value, bool sort_keys);

// The value of member `key` when `value` is an object that has it (keys
// are unique after ParsePyJson), else nullptr. The pointer lives as long as
// `value`.
const JsonValue* JsonMember(const JsonValue& value, std::string_view key);
// That member's text when it is a string, else "".
std::string JsonStringMember(const JsonValue& value, std::string_view key);

}  // namespace sluice
