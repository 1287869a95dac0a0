#include "formats/parquet/parquet_index.h"

#include "base/file.h"
#include "base/mapped_file.h"

#include "formats/parquet/chunk_reads.h"
#include "formats/parquet/field_encoding.h"
#include "formats/parquet/parquet_shard_reader.h"

namespace sluice::parquet {

namespace {

// The row groups of `footer` that become shards: those with rows.
Status RowGroupsWithRows(const ListedFile& file, const FileFooter& footer,
                         std::vector<uint32_t>* out) {
  for (size_t rg = 0; rg < footer.meta.row_groups.size(); ++rg) {
    const int64_t rows = footer.meta.row_groups[rg].num_rows;
    if (rows <= 0) continue;
    if (rows > INT32_MAX) {
      return CorruptError(file.path + ": row group " + std::to_string(rg) + " has " +
                          std::to_string(rows) + " rows (at most 2^31 - 1 per row group)");
    }
    out->push_back(static_cast<uint32_t>(rg));
  }
  return Status::Ok();
}

}  // namespace

Result<FileShardRows> ShardRowsOfFile(const ListedFile& file, const FileFooter& footer,
                                      const std::vector<std::string>& columns) {
  FileShardRows out;
  out.config.format = std::string(kParquetFormat);
  SLUICE_ASSIGN_OR_RETURN(out.fields, FieldsNamed(footer.schema, columns, file.path));
  for (size_t f : out.fields) {
    SLUICE_ASSIGN_OR_RETURN(FieldEncoding enc, FieldEncodingOf(footer.schema, f, file.path));
    out.config.column_names.push_back(footer.schema.fields[f].name);
    out.config.column_encodings.push_back(std::move(enc.name));
  }
  SLUICE_RETURN_IF_ERROR(RowGroupsWithRows(file, footer, &out.row_groups));
  return out;
}

Result<std::vector<uint32_t>> ShardRowGroupsOfFile(const ListedFile& file,
                                                   const FileFooter& footer) {
  std::vector<uint32_t> out;
  SLUICE_RETURN_IF_ERROR(RowGroupsWithRows(file, footer, &out));
  return out;
}

Status ShardRowGroupsOfFileInto(const ListedFile& file, const FileFooter& footer,
                                std::vector<uint32_t>* row_groups) {
  row_groups->clear();
  return RowGroupsWithRows(file, footer, row_groups);
}

FooterOptions IndexFooterOptions() {
  FooterOptions options;
  options.metadata_fields = MetadataFields::kForIndex;
  return options;
}

Result<std::vector<ShardEntry>> ShardsOfFile(const ListedFile& file, const FileFooter& footer,
                                             const std::vector<std::string>& columns) {
  SLUICE_ASSIGN_OR_RETURN(FileShardRows rows, ShardRowsOfFile(file, footer, columns));
  std::vector<ShardEntry> out;
  out.reserve(rows.row_groups.size());
  for (uint32_t rg : rows.row_groups) {
    ShardEntry e = rows.config;
    e.samples = static_cast<uint64_t>(footer.meta.row_groups[rg].num_rows);
    e.raw_data.basename = file.path;
    e.raw_data.bytes = footer.file_size;
    e.row_group = rg;
    out.push_back(std::move(e));
  }
  return out;
}

Result<Index> IndexOfParquetFiles(const std::vector<ListedFile>& files, const FileRangeReader& read,
                                  const std::vector<std::string>& columns) {
  Index index;
  for (const ListedFile& f : files) {
    RangeReader file_read = [&](uint64_t offset, uint64_t size, std::string* out) {
      return read(f.path, offset, size, out);
    };
    SLUICE_ASSIGN_OR_RETURN(FileFooter footer, ReadFooter(f.size.value_or(0), file_read, f.path,
                                                          IndexFooterOptions()));
    SLUICE_ASSIGN_OR_RETURN(std::vector<ShardEntry> shards, ShardsOfFile(f, footer, columns));
    for (ShardEntry& e : shards) index.shards.push_back(std::move(e));
  }
  if (index.shards.empty()) {
    return NotFoundError("no row in the " + std::to_string(files.size()) + " Parquet files" +
                         (files.empty() ? std::string() : " (first: " + files[0].path + ")"));
  }
  return index;
}

FileSelection ParquetFileSelection() { return FileSelection{{"*.parquet"}}; }

Result<Index> IndexOfLocalParquetFiles(const std::string& root, const std::vector<ListedFile>& files,
                                       const std::vector<std::string>& columns, Env* env) {
  return IndexOfParquetFiles(
      files, [&root, env](const std::string& rel, uint64_t offset, uint64_t size, std::string* out) {
        const std::string full = JoinPath(root, rel);
        SLUICE_ASSIGN_OR_RETURN(MappedFile map, MappedFile::Open(full, env));
        if (offset > map.size() || size > map.size() - offset) {
          return CorruptError(full + ": has " + std::to_string(map.size()) + " bytes, fewer than " +
                              std::to_string(offset + size));
        }
        out->assign(map.data().substr(offset, size));
        return Status::Ok();
      },
      columns);
}

}  // namespace sluice::parquet
