// A dataset folder read through its index.json: MDS, JSONL and CSV/TSV/XSV
// shards, compressed or not, and merged indexes whose shards live in
// sub-folders; or a Parquet file, or a folder of Parquet files without an
// index.json, each row group a shard (formats/parquet/parquet_index.h). Shards are loaded on first use (mapped when stored raw,
// decompressed into memory otherwise), optionally hash-checked, and kept
// until the reader is destroyed.
//
// Thread safety: every method may be called from several threads at once.
// Lifetime: views handed out stay valid until the reader is destroyed, but
// for those a Read into fields with until_next_read set copies into their
// scratch (shard_view.h): valid until the next Read into those fields.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "base/file.h"
#include "base/status.h"
#include "formats/index/index.h"
#include "formats/index/shard_table.h"
#include "formats/dataset/sample_locator.h"
#include "formats/dataset/shard_view.h"
#include "formats/mds/column_encoding.h"

namespace sluice {

struct DatasetReaderOptions {
  // Check every shard file against every hash index.json records for it.
  bool verify_hashes = false;
  // The MDS encodings the caller decodes itself (its users' own); Open
  // refuses any other encoding that is not built in.
  CustomEncodings custom_encodings;
};

// One loaded shard: its bytes (owned or mapped) and a format reader over them.
class LoadedShard {
 public:
  const ShardEntry& entry() const { return *entry_; }
  std::string_view data() const { return data_; }
  std::string_view meta() const { return meta_; }  // split formats only
  const ShardView& view() const { return view_; }
  // Exactly one of these is set, by the entry's format.
  const MdsShardReader* mds() const { return view_.mds(); }
  const JsonlShardReader* jsonl() const { return view_.jsonl(); }
  const XsvShardReader* xsv() const { return view_.xsv(); }
  const parquet::ParquetShardReader* parquet() const { return view_.parquet(); }

 private:
  friend class DatasetReader;
  const ShardEntry* entry_ = nullptr;
  MappedFile data_map_, meta_map_;
  std::string data_owned_, meta_owned_;
  std::string_view data_, meta_;
  ShardView view_;
};

class DatasetReader {
 public:
  // Reads and checks `root`/index.json: every shard entry parses, every
  // shard has the same columns (names and encodings) as the first, every
  // MDS encoding is built in or one of options.custom_encodings, the
  // total sample count fits in 2^48. Shard files are not opened yet.
  // Without `root`/index.json: `root` a Parquet file, or a folder whose
  // files named *.parquet (in the canonical order of file_listing.h) are
  // the dataset; their footers are read here. root() is then the file's
  // folder.
  static Result<std::unique_ptr<DatasetReader>> Open(const std::string& root,
                                                     DatasetReaderOptions options = {});

  const std::string& root() const { return root_; }
  const Index& index() const { return index_; }
  uint64_t num_samples() const { return locator_.total(); }
  size_t num_shards() const { return index_.shards.size(); }
  // Columns in stored order (MDS: names sorted; text formats: sorted too;
  // Parquet: schema order).
  const std::vector<std::string>& column_names() const { return column_names_; }
  const std::vector<std::string>& column_encodings() const { return column_encodings_; }
  // Global id of the first sample of `shard`.
  uint64_t shard_start(size_t shard) const { return locator_.start(shard); }

  // sample >= num_samples() -> kOutOfRange.
  Result<SampleLocation> Locate(uint64_t sample) const;

  // Loads shard `shard` on first use (reading, decompressing and, when
  // asked, hash-checking its files) and returns it. Errors name the file.
  // A failed load is retried on the next call.
  Result<const LoadedShard*> Shard(size_t shard);

  // The fields of global sample `sample`. `out->fields` is resized to the
  // number of columns (reuse `out` across calls to avoid allocating).
  Status Read(uint64_t sample, SampleFields* out);

 private:
  DatasetReader() = default;
  Status LoadShard(size_t shard, LoadedShard* out) const;

  std::string root_;
  DatasetReaderOptions options_;
  Index index_;
  SampleLocator locator_;
  std::vector<std::string> column_names_, column_encodings_;
  // Slot i is published once, under shard_mutexes_[i], then only read.
  std::unique_ptr<std::atomic<LoadedShard*>[]> loaded_;
  std::unique_ptr<std::mutex[]> shard_mutexes_;

 public:
  ~DatasetReader();
  DatasetReader(const DatasetReader&) = delete;
  DatasetReader& operator=(const DatasetReader&) = delete;
};

// A dataset's index.json held as a ShardTable, checked as
// DatasetReader::Open checks it (same errors), without a ShardEntry per
// shard: a look at a dataset of a million shards (sluice inspect). Opens
// no shard file. An index.json dataset only: DatasetReader::Open reads
// Parquet files without one.
struct DatasetTable {
  ShardTable table;
  std::vector<std::string> column_names, column_encodings;  // as DatasetReader's
  uint64_t num_samples = 0;
};
Result<DatasetTable> OpenDatasetTable(const std::string& root, const CustomEncodings& custom = {});

}  // namespace sluice
