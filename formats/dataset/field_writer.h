// FieldWriter: a dataset writer of any format, fed one field per column as
// bytes, the way the C ABI and Python hand samples over. What a field holds
// follows the format's FieldForm (format_descriptor.h): MDS takes each
// column's stored bytes (what EncodeMdsValue gives); the text formats take
// text, read as Python's int() / float() read it for int and float
// columns and kept as is for str. Created through a descriptor's
// open_writer.
//
// Thread safety: one thread at a time. Lifetime: a field given to Set must
// stay valid until the next Write.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "formats/writer/sharded_writer.h"

namespace sluice {

struct FieldWriterOptions {
  ShardedWriterOptions sharded;  // compression, hashes, size_limit
  // Split formats only: the line terminator (unset = "\n") and, for
  // csv/tsv/xsv, the separator (csv/tsv: unset or their own; xsv: needed).
  // A format that has no use for one refuses it: kInvalidArgument "format
  // 'mds' takes no newline or separator", "format 'json' takes no separator".
  std::optional<std::string> newline;
  std::optional<std::string> separator;
  // MDS only: a user's own encodings by name (see CustomColumnEncoding),
  // with their column_sizes entry (nullopt: variable size); the caller
  // gives their stored bytes. Other formats refuse any (kInvalidArgument).
  std::map<std::string, std::optional<uint64_t>> custom_encodings;
};

class FieldWriter {
 public:
  virtual ~FieldWriter() = default;

  // The columns' names in stored order (sorted by name): the column
  // numbers Set takes.
  virtual const std::vector<std::string>& column_names() const = 0;

  // Sets column `column`'s field of the next sample. kInvalidArgument
  // "column '<name>' (<encoding>): '<text>' is not an int64" / "... is not
  // a float" for text that is no number of the column's type.
  virtual Status Set(size_t column, std::string_view field) = 0;

  // Writes the sample made of the fields set since the last Write (every
  // column must have been set). Errors as the format's writer gives them.
  virtual Status Write() = 0;

  // Writes the last shard and index.json.
  virtual Status Finish() = 0;

  // The shard entries written so far.
  virtual const ShardedWriter& core() const = 0;
};

}  // namespace sluice
