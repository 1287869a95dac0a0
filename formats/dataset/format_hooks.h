// The per-format functions the descriptors in format_descriptor.cc point
// at. Internal to formats/dataset: everyone else reaches them through
// FindShardFormat / ShardFormatOf. Contracts as in ShardFormatDescriptor
// (open_reader's consumer_waits matters to Parquet alone).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "formats/dataset/field_writer.h"
#include "formats/dataset/format_descriptor.h"
#include "formats/dataset/shard_view.h"
#include "formats/index/index.h"
#include "formats/mds/column_encoding.h"

namespace sluice::format_hooks {

using Columns = std::vector<std::pair<std::string, std::string>>;

// MDS (format_hooks_mds.cc).
Status MdsColumns(const ShardEntry& entry, const CustomEncodings& custom,
                  std::vector<std::string>* names,
                  std::vector<std::string>* encodings);
Result<ShardReader> OpenMdsReader(const ShardEntry& entry, std::string_view data,
                                  std::string_view meta, bool consumer_waits);
Result<std::unique_ptr<FieldWriter>> OpenMdsWriter(const std::string& out_dir,
                                                   const Columns& columns,
                                                   const FieldWriterOptions& options);
uint64_t MdsHeadBytes(const ShardEntry& entry, uint64_t data_size);
DataSpan MdsPeekBoundsAt(uint32_t i);
Result<DataSpan> MdsPeekSampleSpan(const ShardEntry& entry, uint32_t i, std::string_view bounds,
                                   std::string_view where);
DataSpan MdsPeekLikelySpan(const ShardEntry& entry, uint32_t i);
Status MdsPeekSplitSample(const ShardEntry& entry, uint32_t i, uint64_t offset,
                          std::string_view sample, std::vector<std::string_view>* fields);

// JSONL and CSV/TSV/XSV (format_hooks_text.cc).
Status TextColumns(const ShardEntry& entry, const CustomEncodings& custom,
                   std::vector<std::string>* names,
                   std::vector<std::string>* encodings);
Result<ShardReader> OpenJsonlReader(const ShardEntry& entry, std::string_view data,
                                    std::string_view meta, bool consumer_waits);
Result<ShardReader> OpenXsvReader(const ShardEntry& entry, std::string_view data,
                                  std::string_view meta, bool consumer_waits);
Result<std::unique_ptr<FieldWriter>> OpenJsonlWriter(const std::string& out_dir,
                                                     const Columns& columns,
                                                     const FieldWriterOptions& options);
Result<std::unique_ptr<FieldWriter>> OpenCsvWriter(const std::string& out_dir,
                                                   const Columns& columns,
                                                   const FieldWriterOptions& options);
Result<std::unique_ptr<FieldWriter>> OpenTsvWriter(const std::string& out_dir,
                                                   const Columns& columns,
                                                   const FieldWriterOptions& options);
Result<std::unique_ptr<FieldWriter>> OpenXsvWriter(const std::string& out_dir,
                                                   const Columns& columns,
                                                   const FieldWriterOptions& options);

// Raw files (format_hooks_raw.cc): one column, "data" (bytes); no writer.
Status RawColumns(const ShardEntry& entry, const CustomEncodings& custom,
                  std::vector<std::string>* names,
                  std::vector<std::string>* encodings);
Result<ShardReader> OpenRawReader(const ShardEntry& entry, std::string_view data,
                                  std::string_view meta, bool consumer_waits);

// Parquet (format_hooks_parquet.cc): a row group of a file is a shard; the
// entry's columns are the file's fields; no writer.
Status ParquetColumns(const ShardEntry& entry, const CustomEncodings& custom,
                      std::vector<std::string>* names,
                      std::vector<std::string>* encodings);
Result<ShardReader> OpenParquetReader(const ShardEntry& entry, std::string_view data,
                                      std::string_view meta, bool consumer_waits);

}  // namespace sluice::format_hooks
