// MDSWriter: writes an MDS dataset folder (shards + index.json) that is
// byte-identical to what Mosaic's MDSWriter writes for the same samples and
// settings. Splitting, compression, hashes and file writing come from
// formats/writer/sharded_writer.h; this adds the MDS shard layout and the
// column encodings.
//
// Thread safety: one thread at a time per writer.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "base/status.h"
#include "formats/writer/sharded_writer.h"
#include "formats/json/py_json.h"
#include "formats/mds/column_encoding.h"

namespace sluice {

// The value of one column of a sample. Views must stay valid only for the
// duration of the Write call.
struct MdsBytes {        // a Python bytes value: stored as is, whatever the
  std::string_view bytes;  // encoding (fixed-size columns need the exact size)
};
struct MdsText {         // str, str_int, str_decimal (see EncodeText)
  std::string_view text;
};
struct MdsJson {         // json (json.dumps, key order as given)
  const JsonValue* value = nullptr;
};
struct MdsNdArray {      // ndarray[:dtype[:shape]]
  NdDtype dtype = NdDtype::kUInt8;
  std::vector<uint64_t> shape;
  std::string_view data;  // C-order, little-endian
};
struct MdsPilImage {     // pil
  uint32_t width = 0;
  uint32_t height = 0;
  std::string_view mode;
  std::string_view pixels;
};
struct MdsImageList {    // list[pil]/list[jpeg]/list[png]/jpeg_array: encoded items
  std::vector<std::string_view> items;
};
// int64_t/uint64_t: integer columns, float columns, str_int; double: float
// columns and str_float.
using MdsValue = std::variant<MdsBytes, int64_t, uint64_t, double, MdsText, MdsJson,
                              MdsNdArray, MdsPilImage, MdsImageList>;

// The stored payload of `value` in a column of encoding `enc` (MdsBytes as
// is; otherwise the matching encoder of column_encoder.h). A value the
// encoding cannot take -> kInvalidArgument naming the column.
Result<std::string> EncodeMdsValue(const ColumnEncoding& enc, const MdsValue& value);

// The MDS shard format for ShardedWriter: one data file per shard,
// extra_per_shard = 8 + len(config JSON), extra_per_sample = 4.
// `columns` must be sorted by name (MdsWriter does it).
class MdsShardFormat : public ShardFormat {
 public:
  explicit MdsShardFormat(std::vector<ColumnEncoding> columns);
  Status Configure(ShardEntry* entry) override;
  uint64_t extra_per_shard() const override { return 8 + config_json_.size(); }
  uint64_t extra_per_sample() const override { return 4; }
  bool has_meta() const override { return false; }
  // u32 n, u32 offsets[n+1], config, samples. A shard of 4 GiB or more
  // cannot be addressed by 32-bit offsets -> kInvalidArgument.
  Result<ShardFiles> BuildShard(const ShardSamples& samples) const override;

 private:
  std::vector<ColumnEncoding> columns_;
  std::string config_json_;
};

class MdsWriter {
 public:
  // `columns`: name -> encoding, in any order; stored sorted by name, as
  // Mosaic sorts its column dict. `custom_encodings`: a user's own
  // encodings (see CustomColumnEncoding) by name, with their column_sizes
  // entry; their fields are written as given. Other unknown encodings ->
  // kUnimplemented; duplicate or no columns -> kInvalidArgument. See
  // ShardedWriterOptions for compression, hashes and size_limit.
  static Result<std::unique_ptr<MdsWriter>> Create(
      const std::string& out_dir,
      const std::vector<std::pair<std::string, std::string>>& columns,
      const ShardedWriterOptions& options,
      const std::map<std::string, std::optional<uint64_t>>& custom_encodings = {});

  // The columns, sorted by name: the order of Write's arguments.
  const std::vector<ColumnEncoding>& columns() const { return columns_; }

  // One sample: one value per column, in columns() order.
  Status Write(const std::vector<MdsValue>& values);

  // One sample given as each column's stored payload (what Write would
  // encode), in columns() order; fixed-size columns need the exact size.
  Status WriteFields(const std::vector<std::string_view>& fields);

  // Writes the last shard and index.json.
  Status Finish() { return core_->Finish(); }

  const ShardedWriter& core() const { return *core_; }

 private:
  MdsWriter() = default;
  std::vector<ColumnEncoding> columns_;
  std::unique_ptr<ShardedWriter> core_;
  std::string sample_;                // reused sample buffer
  std::vector<std::string> encoded_;  // reused per-column buffers
};

}  // namespace sluice
