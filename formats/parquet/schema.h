// A Parquet file's schema as the reader uses it: its leaf columns (one per
// column chunk of every row group, in order) and its top-level fields, each
// described by the shape the reader assembles: a primitive, or lists of a
// primitive nested to any depth (list<int32>, list<string>,
// list<list<float>>; pyarrow's large_list and fixed_size_list are stored as
// lists too).
//
// List forms recognised (parquet-format's LogicalTypes.md, including its
// backward-compatibility rules), for a group annotated LIST with one
// repeated child R:
//   3-level  R is a group of one child, the element, whatever the names
//            ("list"/"element" from pyarrow and Spark, "array"/"item",
//            "bag"/"array_element" from Hive and parquet-avro);
//   2-level  R is a primitive: R is the element (Spark's legacy "array");
//            R is a group named "array" or "<list name>_tuple" with one
//            child: R is the element (a struct);
// and, outside a LIST group, a repeated primitive is a list of required
// elements. Groups that are neither (structs), MAP/MAP_KEY_VALUE groups, and
// lists whose elements are structs are described but marked unsupported:
// ReadableField refuses them by name, so no value of theirs is read wrong.
//
// Definition and repetition levels follow the specification: each optional
// or repeated node on a leaf's path adds one definition level, each repeated
// node one repetition level.
//
// Values; immutable after BuildSchema; safe to share between threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "formats/parquet/metadata.h"

namespace sluice::parquet {

struct LeafColumn {
  std::string path;                     // names joined by '.': "ids.list.element"
  std::vector<std::string> path_parts;  // as ColumnMetaData.path_in_schema
  PhysicalType physical_type = PhysicalType::kBoolean;
  int32_t type_length = 0;              // FIXED_LEN_BYTE_ARRAY: bytes per value
  LogicalType logical_type;             // of the leaf element
  std::optional<ConvertedType> converted_type;
  int32_t scale = 0;                    // decimals: from the LogicalType, else
  int32_t precision = 0;                //   the element's scale/precision
  int16_t max_definition_level = 0;
  int16_t max_repetition_level = 0;
  size_t field = 0;                     // index into Schema::fields
};

// How one top-level field's levels become values: `slots` runs from the
// field itself (slot 0) through each list's element down to the leaf value
// (slot list_depth). A slot is present (not null) when the definition level
// is at least `present_from`; a list slot has entries when it is at least
// `entries_from`. Entries of list slot s carry repetition level s + 1.
struct FieldSlot {
  int16_t present_from = 0;
  int16_t entries_from = 0;  // list slots only
  bool nullable = false;     // the slot's node is optional
};

struct Field {
  std::string name;
  size_t list_depth = 0;         // 0 primitive, 1 list<...>, 2 list<list<...>>
  std::vector<FieldSlot> slots;  // list_depth + 1 of them
  size_t first_leaf = 0;         // index into Schema::leaves
  size_t leaf_count = 0;         // 1 when supported
  // Set when the reader cannot read the field: what it is, e.g. "a struct",
  // "a map (MAP)", "a list of structs".
  std::optional<std::string> unsupported;
};

struct Schema {
  std::vector<LeafColumn> leaves;
  std::vector<Field> fields;
};

// Limits on a schema a reader will walk (nesting is recursion-free, but
// levels are int16 and each node costs memory).
inline constexpr size_t kMaxSchemaDepth = 64;

// Builds the schema from the footer's flattened SchemaElement list. Errors
// (kCorrupt, "<file>: schema: element <i> (\"<name>\"): ..."): an empty
// list, a root without children, children counts that do not fit the list
// or elements left over, a leaf without a type or of an unknown one, a
// FIXED_LEN_BYTE_ARRAY without a positive type_length, a non-root element
// without a repetition, nesting deeper than kMaxSchemaDepth.
Result<Schema> BuildSchema(const FileMetaData& meta, std::string_view file);

// OK when the field can be read; else kUnimplemented "<file>: column
// \"<name>\": <what it is> is not supported (primitives and lists of
// primitives are)".
Status ReadableField(const Schema& schema, size_t field, std::string_view file);

}  // namespace sluice::parquet
