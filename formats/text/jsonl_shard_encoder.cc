#include "formats/text/jsonl_shard_encoder.h"

#include <algorithm>
#include <cmath>

#include "formats/json/py_json.h"

namespace sluice {

Status ValidateJsonlOptions(JsonlWriterOptions& options) {
  SLUICE_RETURN_IF_ERROR(SortAndCheckTextColumns(options.columns));
  if (options.newline.empty()) return InvalidArgumentError("newline must not be empty");
  return Status::Ok();
}

ShardEntry JsonlConfigEntry(const JsonlWriterOptions& options) {
  ShardEntry e;
  e.format = "json";
  e.version = 2;
  for (const TextColumn& c : options.columns) {
    e.columns.emplace_back(c.name, TextEncodingName(c.encoding));
  }
  e.compression = options.compression;
  e.hashes = options.hashes;
  std::sort(e.hashes.begin(), e.hashes.end());
  e.newline = options.newline;
  e.size_limit = options.size_limit;
  e.has_meta = true;
  return e;
}

Status AppendJsonlLine(const std::vector<TextColumn>& columns,
                       std::span<const TextValue> values, std::string_view newline,
                       std::string& out) {
  if (values.size() != columns.size()) {
    return InvalidArgumentError("sample has " + std::to_string(values.size()) +
                                " values, expected " + std::to_string(columns.size()));
  }
  const size_t start = out.size();
  out.push_back('{');
  for (size_t c = 0; c < columns.size(); ++c) {
    const TextColumn& col = columns[c];
    const bool json_bool = col.encoding == TextEncoding::kInt &&
                           std::holds_alternative<TextBool>(values[c]);
    if (!json_bool && !TextValueMatches(col.encoding, values[c])) {
      out.resize(start);
      return InvalidArgumentError("column '" + col.name + "': expected a value of type " +
                                  TextEncodingName(col.encoding));
    }
    if (c > 0) out.append(", ");
    Status st = AppendPyJsonString(out, col.name);
    if (!st.ok()) {
      out.resize(start);
      return st.WithContext("column name");
    }
    out.append(": ");
    if (AppendTextInt(out, values[c])) continue;
    if (const auto* b = std::get_if<TextBool>(&values[c])) {
      out.append(b->value ? "true" : "false");
    } else if (const auto* d = std::get_if<double>(&values[c])) {
      if (std::isnan(*d)) {
        out.append("NaN");
      } else if (std::isinf(*d)) {
        out.append(*d > 0 ? "Infinity" : "-Infinity");
      } else {
        out.append(PyFloatRepr(*d));
      }
    } else {
      Status s = AppendPyJsonString(out, std::get<std::string_view>(values[c]));
      if (!s.ok()) {
        out.resize(start);
        return s.WithContext("column '" + col.name + "'");
      }
    }
  }
  out.push_back('}');
  out.append(newline);
  return Status::Ok();
}

Result<SplitShardFiles> EncodeJsonlShard(const JsonlWriterOptions& options,
                                         std::span<const std::vector<TextValue>> samples) {
  SplitShardBuilder builder;
  std::string line;
  for (size_t i = 0; i < samples.size(); ++i) {
    line.clear();
    Status st = AppendJsonlLine(options.columns, samples[i], options.newline, line);
    if (!st.ok()) return st.WithContext("sample " + std::to_string(i));
    SLUICE_RETURN_IF_ERROR(builder.AddLine(line));
  }
  SLUICE_ASSIGN_OR_RETURN(std::string config,
                          SerializeShardConfig(JsonlConfigEntry(options)));
  return builder.Finish(config);
}

}  // namespace sluice
