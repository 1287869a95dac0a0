#include "formats/text/xsv_shard_encoder.h"

#include <algorithm>

#include "base/utf8.h"
#include "formats/json/py_json.h"

namespace sluice {

Status ValidateXsvOptions(XsvWriterOptions& options) {
  if (options.format == "csv" || options.format == "tsv") {
    const char* own = options.format == "csv" ? "," : "\t";
    if (!options.separator.empty() && options.separator != own) {
      return InvalidArgumentError("format '" + options.format +
                                  "' has a fixed separator; use format 'xsv' for another");
    }
    options.separator = own;
  } else if (options.format == "xsv") {
    if (options.separator.empty()) {
      return InvalidArgumentError("format 'xsv' needs a non-empty separator");
    }
  } else {
    return InvalidArgumentError("unknown split text format '" + options.format +
                                "' (expected csv, tsv or xsv)");
  }
  if (options.newline.empty()) return InvalidArgumentError("newline must not be empty");
  if (FindInvalidUtf8(options.separator) != std::string::npos ||
      FindInvalidUtf8(options.newline) != std::string::npos) {
    return InvalidArgumentError("separator and newline must be valid UTF-8");
  }
  SLUICE_RETURN_IF_ERROR(SortAndCheckTextColumns(options.columns));
  for (const TextColumn& c : options.columns) {
    if (c.name.find(options.separator) != std::string::npos ||
        c.name.find(options.newline) != std::string::npos) {
      return InvalidArgumentError("column name '" + c.name +
                                  "' contains the separator or the newline");
    }
  }
  return Status::Ok();
}

ShardEntry XsvConfigEntry(const XsvWriterOptions& options) {
  ShardEntry e;
  e.format = options.format;
  e.version = 2;
  for (const TextColumn& c : options.columns) {
    e.column_names.push_back(c.name);
    e.column_encodings.push_back(TextEncodingName(c.encoding));
  }
  e.compression = options.compression;
  e.hashes = options.hashes;
  std::sort(e.hashes.begin(), e.hashes.end());
  e.newline = options.newline;
  if (options.format == "xsv") e.separator = options.separator;
  e.size_limit = options.size_limit;
  e.has_meta = true;
  return e;
}

std::string XsvHeader(const XsvWriterOptions& options) {
  std::string header;
  for (size_t c = 0; c < options.columns.size(); ++c) {
    if (c > 0) header += options.separator;
    header += options.columns[c].name;
  }
  header += options.newline;
  return header;
}

Status AppendXsvLine(const XsvWriterOptions& options, std::span<const TextValue> values,
                     std::string& out) {
  const auto& columns = options.columns;
  if (values.size() != columns.size()) {
    return InvalidArgumentError("sample has " + std::to_string(values.size()) +
                                " values, expected " + std::to_string(columns.size()));
  }
  const size_t start = out.size();
  auto fail = [&](Status st) {
    out.resize(start);
    return st;
  };
  for (size_t c = 0; c < columns.size(); ++c) {
    const TextColumn& col = columns[c];
    if (!TextValueMatches(col.encoding, values[c])) {
      return fail(InvalidArgumentError("column '" + col.name +
                                       "': expected a value of type " +
                                       TextEncodingName(col.encoding)));
    }
    if (c > 0) out.append(options.separator);
    if (AppendTextInt(out, values[c])) continue;
    if (const auto* d = std::get_if<double>(&values[c])) {
      out.append(PyFloatRepr(*d));  // str(float) == repr(float)
    } else {
      std::string_view s = std::get<std::string_view>(values[c]);
      if (size_t bad = FindInvalidUtf8(s); bad != std::string_view::npos) {
        return fail(InvalidArgumentError("column '" + col.name +
                                         "': invalid UTF-8 at byte " + std::to_string(bad)));
      }
      if (s.find(options.separator) != std::string_view::npos) {
        return fail(InvalidArgumentError("column '" + col.name +
                                         "': value contains the separator"));
      }
      if (s.find(options.newline) != std::string_view::npos) {
        return fail(InvalidArgumentError("column '" + col.name +
                                         "': value contains the newline"));
      }
      out.append(s);
    }
  }
  out.append(options.newline);
  return Status::Ok();
}

Result<SplitShardFiles> EncodeXsvShard(const XsvWriterOptions& options,
                                       std::span<const std::vector<TextValue>> samples) {
  SplitShardBuilder builder(XsvHeader(options));
  std::string line;
  for (size_t i = 0; i < samples.size(); ++i) {
    line.clear();
    Status st = AppendXsvLine(options, samples[i], line);
    if (!st.ok()) return st.WithContext("sample " + std::to_string(i));
    SLUICE_RETURN_IF_ERROR(builder.AddLine(line));
  }
  SLUICE_ASSIGN_OR_RETURN(std::string config, SerializeShardConfig(XsvConfigEntry(options)));
  return builder.Finish(config);
}

}  // namespace sluice
