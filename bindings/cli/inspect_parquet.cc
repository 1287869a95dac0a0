#include "bindings/cli/inspect_parquet.h"

#include <cstring>
#include <set>

#include "base/bytes.h"
#include "base/file.h"
#include "formats/parquet/decimal_text.h"
#include "formats/parquet/field_encoding.h"
#include "formats/parquet/footer.h"

namespace sluice::cli {
namespace {

using parquet::FieldBytes;
using parquet::FieldEncoding;

constexpr size_t kMaxStatText = 40;

std::string Shorten(std::string s) {
  if (s.size() <= kMaxStatText) return s;
  return s.substr(0, kMaxStatText) + "...";
}

// A statistic's value (PLAIN-encoded, as the footer stores it) as text.
std::string StatText(const parquet::LeafColumn& leaf, const std::string& v) {
  const FieldEncoding enc = parquet::LeafValueEncoding(leaf);
  switch (enc.bytes) {
    case FieldBytes::kFixed: {
      if (v.size() < enc.width) return "?";
      auto members = parquet::FieldValueJson(enc.name, std::string_view(v).substr(0, enc.width));
      if (!members.ok() || members->empty()) return "?";
      const JsonValue& j = members->front().second;
      if (const auto* repr = std::get_if<std::string>(&j.v)) return *repr;  // floats
      auto text = DumpPyJson(j, false);
      return text.ok() ? *text : "?";
    }
    case FieldBytes::kDecimalText:
      if (leaf.physical_type == parquet::PhysicalType::kInt32 && v.size() == 4) {
        return parquet::DecimalText(parquet::BigEndianOf(LoadLE<uint32_t>(v.data()), 4), leaf.scale);
      }
      if (leaf.physical_type == parquet::PhysicalType::kInt64 && v.size() == 8) {
        return parquet::DecimalText(parquet::BigEndianOf(LoadLE<uint64_t>(v.data()), 8), leaf.scale);
      }
      return parquet::DecimalText(v, leaf.scale);
    case FieldBytes::kView:
      if (enc.name == "str") {
        std::string quoted;
        if (AppendPyJsonString(quoted, Shorten(v)).ok()) return quoted;
      }
      return "0x" + Shorten(HexEncode(v));
    default:
      return "?";
  }
}

std::string Stats(const parquet::LeafColumn& leaf, const parquet::ColumnMetaData& m) {
  if (!m.statistics) return "";
  const parquet::Statistics& s = *m.statistics;
  std::string out;
  if (s.null_count) out += "  nulls " + std::to_string(*s.null_count);
  // The deprecated min/max are in signed order: shown only for signed types.
  const std::optional<std::string>& min = s.min_value ? s.min_value : s.min;
  const std::optional<std::string>& max = s.max_value ? s.max_value : s.max;
  if (min) out += "  min " + StatText(leaf, *min);
  if (max) out += "  max " + StatText(leaf, *max);
  return out;
}

std::string Encodings(const std::vector<parquet::Encoding>& encodings) {
  std::set<std::string> names;  // writers list them in any order
  for (parquet::Encoding e : encodings) names.insert(parquet::EncodingName(e));
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ",") + n;
  return out;
}

Result<parquet::FileFooter> ReadFileFooter(const std::string& root, const std::string& rel) {
  const std::string path = JoinPath(root, rel);
  SLUICE_ASSIGN_OR_RETURN(MappedFile map, MappedFile::Open(path));
  const std::string_view data = map.data();
  parquet::RangeReader read = [data](uint64_t offset, uint64_t size, std::string* out) {
    if (offset > data.size() || size > data.size() - offset) return OutOfRangeError("past the end");
    out->assign(data.substr(offset, size));
    return Status::Ok();
  };
  return parquet::ReadFooter(data.size(), read, rel);
}

}  // namespace

Status InspectParquet(const DatasetReader& r, const std::string& name, std::FILE* out) {
  const auto& shards = r.index().shards;
  std::vector<std::string> files;
  uint64_t bytes = 0;
  for (const ShardEntry& e : shards) {
    if (!files.empty() && files.back() == e.raw_data.basename) continue;
    files.push_back(e.raw_data.basename);
    bytes += e.raw_data.bytes;
  }
  SLUICE_ASSIGN_OR_RETURN(parquet::FileFooter first, ReadFileFooter(r.root(), files[0]));
  std::fprintf(out, "dataset:     %s\n", name.c_str());
  std::fprintf(out, "samples:     %llu\n", static_cast<unsigned long long>(r.num_samples()));
  std::fprintf(out, "shards:      %zu (row groups)\n", shards.size());
  std::fprintf(out, "format:      parquet (%zu files)\n", files.size());
  std::fprintf(out, "bytes:       %llu stored\n", static_cast<unsigned long long>(bytes));
  std::fprintf(out, "columns:\n");
  for (size_t c = 0; c < r.column_names().size(); ++c) {
    const parquet::Field& field = first.schema.fields[c];
    const parquet::LeafColumn& leaf = first.schema.leaves[field.first_leaf];
    std::string type = parquet::PhysicalTypeName(leaf.physical_type);
    if (leaf.physical_type == parquet::PhysicalType::kFixedLenByteArray) {
      type += "(" + std::to_string(leaf.type_length) + ")";
    }
    const std::string logical = parquet::LogicalTypeName(leaf.logical_type);
    if (!logical.empty()) {
      type += " " + logical;
    } else if (leaf.converted_type) {
      type += " " + parquet::ConvertedTypeName(*leaf.converted_type);
    }
    std::fprintf(out, "  %-24s %-24s %-32s %s\n", r.column_names()[c].c_str(),
                 r.column_encodings()[c].c_str(), type.c_str(),
                 field.slots[0].nullable ? "optional" : "required");
  }
  std::fprintf(out, "files:\n");
  for (const std::string& file : files) {
    SLUICE_ASSIGN_OR_RETURN(parquet::FileFooter f, ReadFileFooter(r.root(), file));
    std::fprintf(out, "  %s: %llu bytes, %lld rows, %zu row groups, created by %s\n", file.c_str(),
                 static_cast<unsigned long long>(f.file_size), static_cast<long long>(f.meta.num_rows),
                 f.meta.row_groups.size(), f.meta.created_by.value_or("(unknown)").c_str());
    for (size_t g = 0; g < f.meta.row_groups.size(); ++g) {
      int64_t compressed = 0, uncompressed = 0;
      for (size_t l = 0; l < f.schema.leaves.size(); ++l) {
        compressed += f.chunk(g, l).total_compressed_size;
        uncompressed += f.chunk(g, l).total_uncompressed_size;
      }
      std::fprintf(out, "    row group %zu: %lld rows, %lld bytes (%lld uncompressed)\n", g,
                   static_cast<long long>(f.meta.row_groups[g].num_rows),
                   static_cast<long long>(compressed), static_cast<long long>(uncompressed));
      for (size_t l = 0; l < f.schema.leaves.size(); ++l) {
        const parquet::ColumnMetaData& m = f.chunk(g, l);
        std::fprintf(out, "      %-28s %-8s %-40s %8lld bytes (%lld uncompressed)%s\n",
                     f.schema.leaves[l].path.c_str(), parquet::CompressionCodecName(m.codec).c_str(),
                     Encodings(m.encodings).c_str(), static_cast<long long>(m.total_compressed_size),
                     static_cast<long long>(m.total_uncompressed_size),
                     Stats(f.schema.leaves[l], m).c_str());
      }
    }
  }
  return Status::Ok();
}

}  // namespace sluice::cli
