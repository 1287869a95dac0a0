// Turns a field's definition and repetition levels into the list slots and
// leaf slots of a ColumnBuffer (column_buffer.h), following the field's
// FieldSlot shape (schema.h): for each level pair, the slots from the one
// its repetition level opens down to the first that is null or empty, or to
// the leaf.
//
// Checks, each kCorrupt naming the level's index in the chunk: a level above
// its maximum, a first level pair that does not start a row, a repetition
// level that continues a list that is null, empty or not open.
// Not thread-safe; one assembler per buffer.
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/status.h"
#include "formats/parquet/column_buffer.h"
#include "formats/parquet/schema.h"

namespace sluice::parquet {

class LevelAssembler {
 public:
  // `field` must outlive the assembler; `out` gets field's list levels.
  LevelAssembler(const Field& field, const LeafColumn& leaf, ColumnBuffer* out);

  // Appends `n` level pairs; `def` (or `rep`) may be null when the leaf's
  // maximum definition (or repetition) level is 0, meaning all zeros. Leaf
  // slots are appended to out->validity; the caller fills their values.
  Status Append(const uint32_t* def, const uint32_t* rep, size_t n);

  uint64_t levels_seen() const { return seen_; }
  // Leaf slots appended so far that are not null.
  uint64_t present_slots() const { return present_; }

 private:
  Status AppendList(const uint32_t* def, const uint32_t* rep, size_t n);

  const Field& field_;
  ColumnBuffer* out_;
  uint32_t max_def_;
  uint32_t max_rep_;
  size_t open_ = 0;  // list levels open with an entry after the last pair
  uint64_t seen_ = 0;
  uint64_t present_ = 0;
};

}  // namespace sluice::parquet
