#include "bindings/cli/convert_parquet.h"

#include <algorithm>

#include "formats/parquet/field_encoding.h"

namespace sluice::cli {
namespace {

// A Parquet field's value as the JSON document a json column stores: the
// value `sluice cat` shows, floats as numbers (null for a null field, null
// elements where `validity` says so); lists of strings and nested lists are
// JSON text already. Bytes have no JSON form (ParquetToMdsColumns refuses
// them).
Result<JsonValue> FieldAsJson(std::string_view encoding, std::string_view field,
                              std::string_view validity) {
  if (field.data() == nullptr) return JsonValue{};
  SLUICE_ASSIGN_OR_RETURN(auto members, validity.data() != nullptr
                                            ? parquet::MaskedFieldValueJson(encoding, field, validity,
                                                                            parquet::FloatForm::kNumber)
                                            : parquet::FieldValueJson(encoding, field,
                                                                      parquet::FloatForm::kNumber));
  if (members.size() != 1) {
    return InternalError("a " + std::string(encoding) + " field has no JSON value");
  }
  return std::move(members[0].second);
}

}  // namespace

Result<std::vector<std::pair<std::string, std::string>>> ParquetToMdsColumns(
    const DatasetReader& r, std::map<std::string, std::string>* wanted) {
  std::vector<std::pair<std::string, std::string>> columns;
  for (size_t c = 0; c < r.column_names().size(); ++c) {
    const std::string& name = r.column_names()[c];
    const std::string& parquet_enc = r.column_encodings()[c];
    SLUICE_ASSIGN_OR_RETURN(std::string enc, parquet::MdsEncodingOf(parquet_enc));
    if (auto it = wanted->find(name); it != wanted->end()) {
      // json keeps what the column's own mapping cannot: nulls, and null
      // elements of packed lists. Bytes have no JSON form.
      const bool as_json = it->second == "json" && parquet_enc != "bytes";
      if (it->second != enc && !as_json) {
        return UnimplementedError("--columns: a Parquet column converts to its own MDS encoding ('" +
                                  name + "' is " + parquet_enc + ", stored as " + enc +
                                  (parquet_enc == "bytes" ? ")" : "; or json, which keeps nulls)"));
      }
      enc = it->second;
      wanted->erase(it);
    }
    columns.emplace_back(name, std::move(enc));
  }
  return columns;
}

Status ParquetRowToMds(const DatasetReader& r, uint64_t sample, const SampleFields& f,
                       const std::vector<ColumnEncoding>& writer_columns,
                       std::vector<MdsValue>* values, std::vector<JsonValue>* scratch) {
  const auto& names = r.column_names();
  for (size_t w = 0; w < writer_columns.size(); ++w) {
    const ColumnEncoding& out = writer_columns[w];
    const size_t c = static_cast<size_t>(std::find(names.begin(), names.end(), out.column) - names.begin());
    if (c >= names.size()) return InternalError("convert: no column '" + out.column + "'");
    const std::string_view field = f.fields[c];
    // The field's element validity when it is a packed list holding a
    // null element (found by its data pointer, as SampleFields says).
    const auto mask = std::find_if(f.masked.begin(), f.masked.end(), [&](const parquet::MaskedField& m) {
      return field.data() != nullptr && m.field.data() == field.data();
    });
    const bool has_null_element = mask != f.masked.end();
    const auto where = [&] {
      const ShardEntry& e = r.index().shards[f.where.shard];
      return e.raw_data.basename + ": row group " + std::to_string(e.row_group.value_or(0)) +
             " row " + std::to_string(f.where.index_in_shard) + " (sample " + std::to_string(sample) +
             ") column '" + out.column + "'";
    };
    if (out.kind == EncodingKind::kJson) {
      Result<JsonValue> value = FieldAsJson(r.column_encodings()[c], field,
                                            has_null_element ? mask->validity : std::string_view());
      if (!value.ok()) return value.status().WithContext(where());
      (*scratch)[w] = std::move(*value);
      (*values)[w] = MdsJson{&(*scratch)[w]};
      continue;
    }
    if (field.data() == nullptr) {
      return InvalidArgumentError(where() + " is null, which MDS's " + out.name +
                                  " cannot hold (keep nulls with --columns " + out.column + ":json)");
    }
    if (has_null_element) {
      const size_t at = static_cast<size_t>(
          std::find(mask->validity.begin(), mask->validity.end(), '\0') - mask->validity.begin());
      return InvalidArgumentError(where() + " holds a null element (element " + std::to_string(at) +
                                  "), which MDS's " + out.name + " cannot hold (keep nulls with "
                                  "--columns " + out.column + ":json)");
    }
    if (out.kind == EncodingKind::kNdarray) {
      const NdDtype dtype = *NdDtypeFromName(out.name.substr(std::string("ndarray:").size()));
      (*values)[w] = MdsNdArray{dtype, {field.size() / NdDtypeItemSize(dtype)}, field};
    } else if (out.kind == EncodingKind::kStrDecimal) {
      (*values)[w] = MdsText{field};
    } else {
      (*values)[w] = MdsBytes{field};  // the same bytes (field_encoding.h's MdsEncodingOf)
    }
  }
  return Status::Ok();
}

}  // namespace sluice::cli
