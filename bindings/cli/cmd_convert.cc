// sluice convert IN OUT: a dataset (MDS, JSONL, CSV/TSV; a Parquet file or
// folder) or a plain .jsonl/.csv/.tsv file into an MDS dataset, with a column spec, another
// compression, hashes or size limit. IN and OUT may be folders or store
// URLs: a remote IN is fetched shard by shard into a temporary folder, a
// remote OUT is written to a temporary folder and then uploaded.
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <map>

#include "bindings/cli/commands.h"
#include "bindings/cli/convert_parquet.h"
#include "bindings/cli/dataset_source.h"
#include "bindings/cli/flags.h"
#include "bindings/cli/progress.h"
#include "bindings/cli/upload_folder.h"
#include "formats/dataset/dataset_reader.h"
#include "formats/dataset/format_descriptor.h"
#include "formats/json/py_json.h"
#include "formats/mds/mds_writer.h"
#include "formats/json/py_number_text.h"
#include "stores/common/store_keys.h"
#include "stores/file/file_store.h"
#include "stores/store.h"

namespace sluice::cli {
namespace {

constexpr const char* kConvertUsage =
    "usage: sluice convert IN OUT [--columns NAME:ENCODING,...] [--compression NAME]\n"
    "                             [--hashes ALGO,...] [--size-limit BYTES|100kb|none]\n"
    "  IN   a dataset (MDS, JSONL, CSV/TSV) or a .jsonl, .csv or .tsv file: a path\n"
    "       or a store URL (s3://, gs://, azure://, oci://, dbfs:/, http(s)://, file://);\n"
    "       or a local Parquet file or folder of Parquet files\n"
    "  OUT  the MDS dataset to write: a folder or a writable store URL\n"
    "  --columns  MDS encodings by column (required for plain files; for text\n"
    "             datasets it overrides the defaults int->int, float->float64, str->str;\n"
    "             for Parquet, NAME:json keeps a column's nulls and null list elements)\n";

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t at = s.find(sep, start);
    out.push_back(s.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) return out;
    start = at + 1;
  }
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Result<std::vector<std::pair<std::string, std::string>>> ParseColumnSpec(const std::string& spec) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& item : Split(spec, ',')) {
    size_t colon = item.find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == item.size()) {
      return InvalidArgumentError("--columns: expected NAME:ENCODING, got '" + item + "'");
    }
    out.emplace_back(item.substr(0, colon), item.substr(colon + 1));
  }
  return out;
}

// One value for an MDS column from a JSON value (JSONL) or a text field
// (CSV/TSV); `what` names the sample and column in errors.
Result<MdsValue> FromJson(const ColumnEncoding& enc, const JsonValue& v, const std::string& what) {
  auto mismatch = [&](const char* expected) {
    return InvalidArgumentError(what + ": column '" + enc.column + "' (" + enc.name +
                                ") expects " + expected);
  };
  switch (enc.kind) {
    case EncodingKind::kInt: case EncodingKind::kInt8: case EncodingKind::kInt16:
    case EncodingKind::kInt32: case EncodingKind::kInt64:
      if (auto* i = std::get_if<int64_t>(&v.v)) return MdsValue(*i);
      return mismatch("an integer");
    case EncodingKind::kUInt8: case EncodingKind::kUInt16: case EncodingKind::kUInt32:
    case EncodingKind::kUInt64:
      if (auto* i = std::get_if<int64_t>(&v.v); i && *i >= 0) {
        return MdsValue(static_cast<uint64_t>(*i));
      }
      if (auto* b = std::get_if<JsonValue::BigInt>(&v.v)) {
        uint64_t u = 0;
        auto [end, ec] = std::from_chars(b->digits.data(), b->digits.data() + b->digits.size(), u);
        if (ec == std::errc() && end == b->digits.data() + b->digits.size()) return MdsValue(u);
      }
      return mismatch("a non-negative integer");
    case EncodingKind::kFloat16: case EncodingKind::kFloat32: case EncodingKind::kFloat64:
    case EncodingKind::kStrFloat:
      if (auto* d = std::get_if<double>(&v.v)) return MdsValue(*d);
      if (auto* i = std::get_if<int64_t>(&v.v)) return MdsValue(static_cast<double>(*i));
      return mismatch("a number");
    case EncodingKind::kStrInt:
      if (auto* i = std::get_if<int64_t>(&v.v)) return MdsValue(*i);
      if (auto* b = std::get_if<JsonValue::BigInt>(&v.v)) return MdsValue(MdsText{b->digits});
      if (auto* s = std::get_if<std::string>(&v.v)) return MdsValue(MdsText{*s});
      return mismatch("an integer");
    case EncodingKind::kStr: case EncodingKind::kStrDecimal: case EncodingKind::kBytes:
      if (auto* s = std::get_if<std::string>(&v.v)) {
        return enc.kind == EncodingKind::kBytes ? MdsValue(MdsBytes{*s}) : MdsValue(MdsText{*s});
      }
      return mismatch("a string");
    case EncodingKind::kJson:
      return MdsValue(MdsJson{&v});
    default:
      return UnimplementedError(what + ": convert cannot produce column '" + enc.column +
                                "' of encoding " + enc.name + " from text");
  }
}

Result<MdsValue> FromText(const ColumnEncoding& enc, std::string_view text, const std::string& what,
                          JsonValue* scratch) {
  switch (enc.kind) {
    case EncodingKind::kStr: case EncodingKind::kStrDecimal: case EncodingKind::kStrInt:
      scratch->v = std::string(text);
      break;
    case EncodingKind::kBytes:
      return MdsValue(MdsBytes{text});
    case EncodingKind::kFloat16: case EncodingKind::kFloat32: case EncodingKind::kFloat64:
    case EncodingKind::kStrFloat: {
      std::optional<double> d = ParsePyFloatText(text);
      if (!d) {
        return InvalidArgumentError(what + ": column '" + enc.column + "': '" + std::string(text) +
                                    "' is not a float");
      }
      scratch->v = *d;
      break;
    }
    case EncodingKind::kJson: {
      auto j = ParsePyJson(text);
      if (!j.ok()) return j.status().WithContext(what + ": column '" + enc.column + "'");
      *scratch = std::move(*j);
      break;
    }
    default: {
      std::optional<int64_t> i = ParsePyIntText(text);
      if (!i) {
        return InvalidArgumentError(what + ": column '" + enc.column + "': '" + std::string(text) +
                                    "' is not an int64 integer");
      }
      scratch->v = *i;
    }
  }
  return FromJson(enc, *scratch, what);
}

struct Job {
  std::unique_ptr<MdsWriter> writer;
  std::vector<MdsValue> values;
  std::vector<JsonValue> scratch;  // keeps JSON values alive during Write
};

// `out` is the local folder to write.
Status ConvertDataset(DatasetSource& src, const Flags& flags, Job& job,
                      const ShardedWriterOptions& options, const std::string& out) {
  const std::string& in = src.name();
  SLUICE_ASSIGN_OR_RETURN(auto reader, DatasetReader::Open(src.folder()));
  DatasetReader& r = *reader;
  // Read fields are stored MDS bytes, JSON value text or plain text, by format.
  SLUICE_ASSIGN_OR_RETURN(const ShardFormatDescriptor* format, ShardFormatOf(r.index().shards[0]));
  bool is_mds = format->fields == FieldForm::kStoredBytes;
  const bool is_parquet = format->fields == FieldForm::kParquetValue;
  std::vector<std::pair<std::string, std::string>> columns;
  std::map<std::string, std::string> wanted;
  if (auto spec = flags.Get("columns")) {
    SLUICE_ASSIGN_OR_RETURN(auto parsed, ParseColumnSpec(*spec));
    for (auto& [n, e] : parsed) wanted[n] = e;
  }
  if (is_parquet) {
    SLUICE_ASSIGN_OR_RETURN(columns, ParquetToMdsColumns(r, &wanted));
  }
  for (size_t c = 0; c < r.column_names().size() && !is_parquet; ++c) {
    const std::string& name = r.column_names()[c];
    std::string enc = r.column_encodings()[c];
    if (!is_mds) enc = enc == "float" ? "float64" : enc;  // "int" and "str" keep their names
    if (auto it = wanted.find(name); it != wanted.end()) {
      if (is_mds && it->second != enc) {
        return UnimplementedError("--columns: MDS to MDS keeps each column's encoding ('" + name +
                                  "' is " + enc + ")");
      }
      enc = it->second;
      wanted.erase(it);
    }
    columns.emplace_back(name, enc);
  }
  if (!wanted.empty()) {
    return InvalidArgumentError("--columns names '" + wanted.begin()->first +
                                "', which " + in + " does not have");
  }
  SLUICE_ASSIGN_OR_RETURN(job.writer, MdsWriter::Create(out, columns, options));
  // Writer columns are sorted by name, as are the reader's.
  const auto& out_cols = job.writer->columns();
  Progress progress("convert", r.num_samples());
  SampleFields f;
  f.wants_masks = is_parquet;  // null elements: kept as null in json, named otherwise
  job.values.resize(out_cols.size());
  job.scratch.resize(out_cols.size());
  for (size_t shard = 0; shard < r.num_shards(); ++shard) {
    SLUICE_RETURN_IF_ERROR(src.Fetch(r.index().shards[shard]));
    SLUICE_ASSIGN_OR_RETURN(const ShardFormatDescriptor* shard_format,
                            ShardFormatOf(r.index().shards[shard]));
    bool json = shard_format->fields == FieldForm::kJsonText;
    for (uint64_t i = r.shard_start(shard); i < r.shard_start(shard + 1); ++i) {
      SLUICE_RETURN_IF_ERROR(src.Explain(r.Read(i, &f)));
      if (is_parquet) {
        SLUICE_RETURN_IF_ERROR(ParquetRowToMds(r, i, f, out_cols, &job.values, &job.scratch));
        SLUICE_RETURN_IF_ERROR(job.writer->Write(job.values));
      } else if (is_mds) {
        SLUICE_RETURN_IF_ERROR(job.writer->WriteFields(f.fields));
      } else {
        std::string what = in + " sample " + std::to_string(i);
        for (size_t c = 0; c < out_cols.size(); ++c) {
          if (json) {
            SLUICE_ASSIGN_OR_RETURN(job.scratch[c], ParsePyJson(f.fields[c]));
            SLUICE_ASSIGN_OR_RETURN(job.values[c], FromJson(out_cols[c], job.scratch[c], what));
          } else {
            SLUICE_ASSIGN_OR_RETURN(job.values[c],
                                    FromText(out_cols[c], f.fields[c], what, &job.scratch[c]));
          }
        }
        SLUICE_RETURN_IF_ERROR(job.writer->Write(job.values));
      }
      progress.Add(1);
    }
    src.Drop(r.index().shards[shard]);
  }
  return job.writer->Finish();
}

// `path` is the local file, `in` its name for errors (the URL when it was
// fetched), `out` the local folder to write.
Status ConvertFile(const std::string& path, const std::string& in, const Flags& flags, Job& job,
                   const ShardedWriterOptions& options, const std::string& out) {
  auto spec = flags.Get("columns");
  if (!spec) return InvalidArgumentError("--columns is required to convert the plain file " + in);
  SLUICE_ASSIGN_OR_RETURN(auto columns, ParseColumnSpec(*spec));
  SLUICE_ASSIGN_OR_RETURN(job.writer, MdsWriter::Create(out, columns, options));
  const auto& cols = job.writer->columns();
  job.values.resize(cols.size());
  job.scratch.resize(cols.size());
  std::ifstream file(path, std::ios::binary);
  if (!file) return NotFoundError("cannot open " + in);
  bool jsonl = EndsWith(in, ".jsonl") || EndsWith(in, ".json");
  char sep = EndsWith(in, ".tsv") ? '\t' : ',';
  std::vector<size_t> field_of;  // CSV: for each writer column, its field index
  Progress progress("convert", 0);
  std::string line;
  for (uint64_t lineno = 1; std::getline(file, line); ++lineno) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::string what = in + " line " + std::to_string(lineno);
    if (jsonl) {
      if (line.empty()) continue;
      SLUICE_ASSIGN_OR_RETURN(JsonValue obj, ParsePyJson(line));
      auto* members = std::get_if<JsonValue::Object>(&obj.v);
      if (!members) return InvalidArgumentError(what + ": expected a JSON object");
      for (size_t c = 0; c < cols.size(); ++c) {
        auto it = std::find_if(members->begin(), members->end(),
                               [&](const auto& m) { return m.first == cols[c].column; });
        if (it == members->end()) {
          return InvalidArgumentError(what + ": has no member '" + cols[c].column + "'");
        }
        job.scratch[c] = std::move(it->second);
        SLUICE_ASSIGN_OR_RETURN(job.values[c], FromJson(cols[c], job.scratch[c], what));
      }
    } else if (lineno == 1) {  // the header names the fields
      std::vector<std::string> header = Split(line, sep);
      for (const ColumnEncoding& col : cols) {
        auto it = std::find(header.begin(), header.end(), col.column);
        if (it == header.end()) {
          return InvalidArgumentError(in + ": the header has no column '" + col.column + "'");
        }
        field_of.push_back(static_cast<size_t>(it - header.begin()));
      }
      continue;
    } else {
      std::vector<std::string> fields = Split(line, sep);
      for (size_t c = 0; c < cols.size(); ++c) {
        if (field_of[c] >= fields.size()) {
          return InvalidArgumentError(what + ": has " + std::to_string(fields.size()) +
                                      " fields, column '" + cols[c].column + "' is field " +
                                      std::to_string(field_of[c] + 1));
        }
        SLUICE_ASSIGN_OR_RETURN(job.values[c],
                                FromText(cols[c], fields[field_of[c]], what, &job.scratch[c]));
      }
    }
    SLUICE_RETURN_IF_ERROR(job.writer->Write(job.values));
    progress.Add(1);
  }
  return job.writer->Finish();
}

// IN as a dataset, or as a plain file when it holds no index.json.
Status ConvertInput(const std::string& in, const Flags& flags, Job& job,
                    const ShardedWriterOptions& options, const std::string& out) {
  if (!IsStoreUrl(in)) {
    SLUICE_ASSIGN_OR_RETURN(std::string path, FileUrlToPath(in));
    // A Parquet file or folder is a dataset without an index.json.
    const bool plain = EndsWith(in, ".jsonl") || EndsWith(in, ".json") || EndsWith(in, ".csv") ||
                       EndsWith(in, ".tsv");
    if (!FileExists(JoinPath(path, "index.json")) && plain) {
      return ConvertFile(path, in, flags, job, options, out);
    }
  }
  auto source = DatasetSource::Open(in);
  if (source.ok()) return ConvertDataset(**source, flags, job, options, out);
  if (source.status().code() != StatusCode::kNotFound) return source.status();
  // No index.json under the URL: the URL may name a plain file.
  SLUICE_ASSIGN_OR_RETURN(auto temp, TempFolder::Create());
  auto path = FetchRemoteFile(in, temp->path());
  if (!path.ok()) return source.status();  // a missing dataset says most
  return ConvertFile(*path, UrlForErrors(in), flags, job, options, out);
}

}  // namespace

int RunConvert(const Args& args) {
  auto flags = ParseFlags(args, {"columns", "compression", "hashes", "size-limit"}, {"help"});
  if (!flags.ok()) return Error("convert", flags.status(), 2);
  if (flags->Has("help") || flags->positional.size() != 2) {
    std::fputs(kConvertUsage, flags->Has("help") ? stdout : stderr);
    return flags->Has("help") ? 0 : 2;
  }
  ShardedWriterOptions options;
  if (auto c = flags->Get("compression")) options.compression = *c;
  if (auto h = flags->Get("hashes")) options.hashes = Split(*h, ',');
  if (auto s = flags->Get("size-limit")) {
    if (*s == "none") {
      options.size_limit.reset();
    } else {
      auto limit = ParseSizeLimit(*s);
      if (!limit.ok()) return Error("convert", limit.status(), 2);
      options.size_limit = *limit;
    }
  }
  const std::string& out = flags->positional[1];
  // A remote OUT is written locally first, then uploaded.
  std::unique_ptr<TempFolder> out_temp;
  if (IsStoreUrl(out)) {
    auto temp = TempFolder::Create();
    if (!temp.ok()) return Error("convert", temp.status());
    out_temp = std::move(*temp);
  }
  std::string out_folder = out;
  if (out_temp) {
    out_folder = out_temp->path();
  } else {
    auto path = FileUrlToPath(out);
    if (!path.ok()) return Error("convert", path.status(), 2);
    out_folder = *path;
  }
  Job job;
  Status st = ConvertInput(flags->positional[0], *flags, job, options, out_folder);
  if (st.ok() && out_temp) st = UploadFolder(out_folder, out);
  if (!st.ok()) return Error("convert", st);
  std::printf("wrote %llu samples in %zu shards to %s\n",
              static_cast<unsigned long long>(job.writer->core().samples_written()),
              job.writer->core().shards().size(), UrlForErrors(out).c_str());
  return 0;
}

}  // namespace sluice::cli
