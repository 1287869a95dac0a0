// The split text formats' descriptor functions: columns from the entry
// (TextColumnsFromEntry), JsonlShardReader / XsvShardReader, and a
// FieldWriter over JsonlWriter / XsvWriter that reads each field's text as
// Python's int() / float() read it (ints of any size; for JSONL also
// true/false in an int column).
#include "formats/dataset/format_hooks.h"

#include <type_traits>

#include "formats/json/py_number_text.h"
#include "formats/text/jsonl_writer.h"
#include "formats/text/text_columns.h"
#include "formats/text/xsv_writer.h"

namespace sluice::format_hooks {
namespace {

// `text` as a value of `column`'s encoding. `json_bools`: an int column
// also takes "true" / "false" (JSONL, where Mosaic writes a Python bool so).
Status ParseTextField(const TextColumn& column, std::string_view text, bool json_bools,
                      TextValue* out) {
  switch (column.encoding) {
    case TextEncoding::kStr:
      *out = text;
      return Status::Ok();
    case TextEncoding::kInt: {
      if (auto v = ParsePyIntText(text)) {
        *out = *v;
      } else if (auto big = ParsePyIntDigits(text)) {
        *out = TextBigInt{std::move(*big)};
      } else if (json_bools && (text == "true" || text == "false")) {
        *out = TextBool{text == "true"};
      } else {
        return InvalidArgumentError("column '" + column.name + "' (int): '" +
                                    std::string(text.substr(0, 64)) + "' is not an int (at most " +
                                    std::to_string(kPyIntMaxStrDigits) + " digits)" +
                                    (json_bools ? " nor true/false" : ""));
      }
      return Status::Ok();
    }
    case TextEncoding::kFloat: {
      auto v = ParsePyFloatText(text);
      if (!v) {
        return InvalidArgumentError("column '" + column.name + "' (float): '" +
                                    std::string(text.substr(0, 64)) + "' is not a float");
      }
      *out = *v;
      return Status::Ok();
    }
  }
  return InternalError("unknown text encoding");
}

// W: JsonlWriter or XsvWriter.
template <typename W>
class TextFieldWriter : public FieldWriter {
 public:
  explicit TextFieldWriter(std::unique_ptr<W> writer) : writer_(std::move(writer)) {
    for (const TextColumn& c : writer_->columns()) names_.push_back(c.name);
    values_.resize(names_.size());
  }
  const std::vector<std::string>& column_names() const override { return names_; }
  Status Set(size_t column, std::string_view field) override {
    if (column >= values_.size()) return InvalidArgumentError("no column " + std::to_string(column));
    return ParseTextField(writer_->columns()[column], field,
                          std::is_same_v<W, JsonlWriter>, &values_[column]);
  }
  Status Write() override { return writer_->Write(values_); }
  Status Finish() override { return writer_->Finish(); }
  const ShardedWriter& core() const override { return writer_->core(); }

 private:
  std::unique_ptr<W> writer_;
  std::vector<std::string> names_;
  std::vector<TextValue> values_;  // reused across samples
};

Status NoCustomEncodings(const std::string& format, const FieldWriterOptions& options) {
  if (options.custom_encodings.empty()) return Status::Ok();
  return InvalidArgumentError("format '" + format + "' takes no custom encodings (MDS only)");
}

Result<std::vector<TextColumn>> ParseColumns(const Columns& columns) {
  std::vector<TextColumn> out;
  for (const auto& [name, enc] : columns) {
    SLUICE_ASSIGN_OR_RETURN(TextEncoding e, ParseTextEncoding(enc, name));
    out.push_back({name, e});
  }
  return out;
}

Result<std::unique_ptr<FieldWriter>> OpenXsvFamily(const std::string& format,
                                                   const std::string& out_dir,
                                                   const Columns& columns,
                                                   const FieldWriterOptions& options) {
  SLUICE_RETURN_IF_ERROR(NoCustomEncodings(format, options));
  XsvWriterOptions x;
  x.format = format;
  x.separator = options.separator.value_or("");
  x.newline = options.newline.value_or("\n");
  SLUICE_ASSIGN_OR_RETURN(x.columns, ParseColumns(columns));
  x.compression = options.sharded.compression;
  x.hashes = options.sharded.hashes;
  x.size_limit = options.sharded.size_limit;
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<XsvWriter> w, XsvWriter::Create(out_dir, std::move(x)));
  return std::unique_ptr<FieldWriter>(new TextFieldWriter<XsvWriter>(std::move(w)));
}

}  // namespace

Status TextColumns(const ShardEntry& entry, const CustomEncodings&,
                   std::vector<std::string>* names, std::vector<std::string>* encodings) {
  names->clear();
  encodings->clear();
  SLUICE_ASSIGN_OR_RETURN(std::vector<TextColumn> cols, TextColumnsFromEntry(entry));
  for (const TextColumn& c : cols) {
    names->push_back(c.name);
    encodings->push_back(TextEncodingName(c.encoding));
  }
  return Status::Ok();
}

Result<ShardReader> OpenJsonlReader(const ShardEntry& entry, std::string_view data,
                                    std::string_view meta, bool) {
  SLUICE_ASSIGN_OR_RETURN(JsonlShardReader r, JsonlShardReader::Open(entry, data, meta));
  return ShardReader(std::move(r));
}

Result<ShardReader> OpenXsvReader(const ShardEntry& entry, std::string_view data,
                                  std::string_view meta, bool) {
  SLUICE_ASSIGN_OR_RETURN(XsvShardReader r, XsvShardReader::Open(entry, data, meta));
  return ShardReader(std::move(r));
}

Result<std::unique_ptr<FieldWriter>> OpenJsonlWriter(const std::string& out_dir,
                                                     const Columns& columns,
                                                     const FieldWriterOptions& options) {
  if (options.separator) return InvalidArgumentError("format 'json' takes no separator");
  SLUICE_RETURN_IF_ERROR(NoCustomEncodings("json", options));
  JsonlWriterOptions j;
  SLUICE_ASSIGN_OR_RETURN(j.columns, ParseColumns(columns));
  j.newline = options.newline.value_or("\n");
  j.compression = options.sharded.compression;
  j.hashes = options.sharded.hashes;
  j.size_limit = options.sharded.size_limit;
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<JsonlWriter> w, JsonlWriter::Create(out_dir, std::move(j)));
  return std::unique_ptr<FieldWriter>(new TextFieldWriter<JsonlWriter>(std::move(w)));
}

Result<std::unique_ptr<FieldWriter>> OpenCsvWriter(const std::string& out_dir,
                                                   const Columns& columns,
                                                   const FieldWriterOptions& options) {
  return OpenXsvFamily("csv", out_dir, columns, options);
}

Result<std::unique_ptr<FieldWriter>> OpenTsvWriter(const std::string& out_dir,
                                                   const Columns& columns,
                                                   const FieldWriterOptions& options) {
  return OpenXsvFamily("tsv", out_dir, columns, options);
}

Result<std::unique_ptr<FieldWriter>> OpenXsvWriter(const std::string& out_dir,
                                                   const Columns& columns,
                                                   const FieldWriterOptions& options) {
  return OpenXsvFamily("xsv", out_dir, columns, options);
}

}  // namespace sluice::format_hooks
