#include "bindings/cli/convert_parquet.h"

#include <algorithm>

#include "formats/parquet/field_encoding.h"

namespace sluice::cli {

Result<std::vector<std::pair<std::string, std::string>>> ParquetToMdsColumns(
    const DatasetReader& r, std::map<std::string, std::string>* wanted) {
  std::vector<std::pair<std::string, std::string>> columns;
  for (size_t c = 0; c < r.column_names().size(); ++c) {
    const std::string& name = r.column_names()[c];
    SLUICE_ASSIGN_OR_RETURN(std::string enc, parquet::MdsEncodingOf(r.column_encodings()[c]));
    if (auto it = wanted->find(name); it != wanted->end()) {
      if (it->second != enc) {
        return UnimplementedError("--columns: a Parquet column converts to its own MDS encoding ('" +
                                  name + "' is " + r.column_encodings()[c] + ", stored as " + enc +
                                  ")");
      }
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
    const auto where = [&] {
      const ShardEntry& e = r.index().shards[f.where.shard];
      return e.raw_data.basename + ": row group " + std::to_string(e.row_group.value_or(0)) +
             " row " + std::to_string(f.where.index_in_shard) + " (sample " + std::to_string(sample) +
             ") column '" + out.column + "'";
    };
    if (out.kind == EncodingKind::kJson) {
      if (field.data() == nullptr) {
        (*scratch)[w] = JsonValue{};
      } else {
        Result<JsonValue> parsed = ParsePyJson(field);
        if (!parsed.ok()) return parsed.status().WithContext(where());
        (*scratch)[w] = std::move(*parsed);
      }
      (*values)[w] = MdsJson{&(*scratch)[w]};
      continue;
    }
    if (field.data() == nullptr) {
      return InvalidArgumentError(where() + " is null, which MDS's " + out.name +
                                  " cannot hold (only a json column stores a null)");
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
