// The registry: one entry per shard format. Adding a format is one folder
// and one line here (see format_descriptor.h).
#include "formats/dataset/format_descriptor.h"

#include "formats/dataset/format_hooks.h"

namespace sluice {
namespace {

using namespace format_hooks;

constexpr SamplePeekHooks kMdsPeek = {MdsPeekBoundsAt, MdsPeekSampleSpan, MdsPeekLikelySpan,
                                     MdsPeekSplitSample};

constexpr ShardFormatDescriptor kFormats[] = {
    {"mds", IndexSource::kIndexJson, FindIndexEntrySchema("mds"), FieldForm::kStoredBytes,
     MdsColumns, OpenMdsReader, OpenMdsWriter, MdsHeadBytes, &kMdsPeek, false},
    {"json", IndexSource::kIndexJson, FindIndexEntrySchema("json"), FieldForm::kJsonText,
     TextColumns, OpenJsonlReader, OpenJsonlWriter, nullptr, nullptr, false},
    {"csv", IndexSource::kIndexJson, FindIndexEntrySchema("csv"), FieldForm::kPlainText,
     TextColumns, OpenXsvReader, OpenCsvWriter, nullptr, nullptr, false},
    {"tsv", IndexSource::kIndexJson, FindIndexEntrySchema("tsv"), FieldForm::kPlainText,
     TextColumns, OpenXsvReader, OpenTsvWriter, nullptr, nullptr, false},
    {"xsv", IndexSource::kIndexJson, FindIndexEntrySchema("xsv"), FieldForm::kPlainText,
     TextColumns, OpenXsvReader, OpenXsvWriter, nullptr, nullptr, false},
    {"raw", IndexSource::kFileListing, nullptr, FieldForm::kStoredBytes, RawColumns, OpenRawReader,
     nullptr, nullptr, nullptr, false},
    {"parquet", IndexSource::kFileFooters, nullptr, FieldForm::kParquetValue, ParquetColumns,
     OpenParquetReader, nullptr, nullptr, nullptr, /*open_decodes=*/true},
};

}  // namespace

const ShardFormatDescriptor* FindShardFormat(std::string_view format) {
  for (const ShardFormatDescriptor& f : kFormats) {
    if (f.name == format) return &f;
  }
  return nullptr;
}

Result<const ShardFormatDescriptor*> ShardFormatOf(const ShardEntry& entry) {
  const ShardFormatDescriptor* f = FindShardFormat(entry.format);
  if (f == nullptr) return UnimplementedError("unknown shard format '" + entry.format + "'");
  return f;
}

std::span<const ShardFormatDescriptor> ShardFormats() { return kFormats; }

Status ColumnsOf(const ShardEntry& entry, const CustomEncodings& custom,
                 std::vector<std::string>* names, std::vector<std::string>* encodings) {
  names->clear();
  encodings->clear();
  SLUICE_ASSIGN_OR_RETURN(const ShardFormatDescriptor* format, ShardFormatOf(entry));
  return format->columns(entry, custom, names, encodings);
}

const FileInfo* MetaFileOf(const ShardEntry& entry) {
  const ShardFormatDescriptor* f = FindShardFormat(entry.format);
  if (f == nullptr || !f->has_meta() || !entry.raw_meta) return nullptr;
  return &*entry.raw_meta;
}

Result<const FileInfo*> RequiredMetaFileOf(const ShardEntry& entry, std::string_view index_json) {
  SLUICE_ASSIGN_OR_RETURN(const ShardFormatDescriptor* f, ShardFormatOf(entry));
  if (!f->has_meta()) return nullptr;
  if (!entry.raw_meta) {
    return CorruptError(std::string(index_json) + ": shard '" + entry.raw_data.basename +
                        "' of format " + entry.format + " has no raw_meta");
  }
  return &*entry.raw_meta;
}

std::optional<FileRef> MetaFileOf(const ShardRef& shard) {
  const ShardFormatDescriptor* f = FindShardFormat(shard.format());
  if (f == nullptr || !f->has_meta()) return std::nullopt;
  return shard.raw_meta;
}

Result<std::optional<FileRef>> RequiredMetaFileOf(const ShardRef& shard,
                                                  std::string_view index_json) {
  SLUICE_ASSIGN_OR_RETURN(const ShardFormatDescriptor* f, ShardFormatOf(*shard.config));
  if (!f->has_meta()) return std::optional<FileRef>();
  if (!shard.raw_meta) {
    return CorruptError(std::string(index_json) + ": shard '" + std::string(shard.raw_data.basename) +
                        "' of format " + shard.format() + " has no raw_meta");
  }
  return shard.raw_meta;
}

}  // namespace sluice
