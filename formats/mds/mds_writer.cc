#include "formats/mds/mds_writer.h"

#include <algorithm>

#include "base/bytes.h"
#include "formats/index/index.h"
#include "formats/mds/column_encoder.h"

namespace sluice {

Result<std::string> EncodeMdsValue(const ColumnEncoding& enc, const MdsValue& value) {
  struct Visitor {
    const ColumnEncoding& enc;
    Result<std::string> operator()(const MdsBytes& v) const { return std::string(v.bytes); }
    Result<std::string> operator()(int64_t v) const { return EncodeInt64(enc, v); }
    Result<std::string> operator()(uint64_t v) const { return EncodeUInt64(enc, v); }
    Result<std::string> operator()(double v) const { return EncodeDouble(enc, v); }
    Result<std::string> operator()(const MdsText& v) const { return EncodeText(enc, v.text); }
    Result<std::string> operator()(const MdsJson& v) const {
      if (v.value == nullptr) {
        return InvalidArgumentError("column '" + enc.column + "': null JSON value pointer");
      }
      return EncodeJson(enc, *v.value);
    }
    Result<std::string> operator()(const MdsNdArray& v) const {
      return EncodeNdArray(enc, v.dtype, v.shape, v.data);
    }
    Result<std::string> operator()(const MdsPilImage& v) const {
      return EncodePil(enc, v.width, v.height, v.mode, v.pixels);
    }
    Result<std::string> operator()(const MdsImageList& v) const { return EncodeList(enc, v.items); }
  };
  return std::visit(Visitor{enc}, value);
}

MdsShardFormat::MdsShardFormat(std::vector<ColumnEncoding> columns)
    : columns_(std::move(columns)) {}

Status MdsShardFormat::Configure(ShardEntry* entry) {
  entry->format = "mds";
  entry->column_names.clear();
  entry->column_encodings.clear();
  entry->column_sizes.clear();
  for (const ColumnEncoding& c : columns_) {
    entry->column_names.push_back(c.column);
    entry->column_encodings.push_back(c.name);
    entry->column_sizes.push_back(c.fixed_size);
  }
  SLUICE_ASSIGN_OR_RETURN(config_json_, SerializeShardConfig(*entry));
  return Status::Ok();
}

Result<ShardFiles> MdsShardFormat::BuildShard(const ShardSamples& samples) const {
  const uint64_t n = samples.count();
  const uint64_t first = 4 + 4 * (n + 1) + config_json_.size();
  const uint64_t total = first + samples.data.size();
  if (total > kMaxShardFileBytes) {
    return InvalidArgumentError("MDS shard of " + std::to_string(n) + " samples would be " +
                                std::to_string(total) +
                                " bytes, more than 32-bit offsets can address");
  }
  ShardFiles files;
  files.data.reserve(total);
  AppendLE<uint32_t>(files.data, static_cast<uint32_t>(n));
  AppendLE<uint32_t>(files.data, static_cast<uint32_t>(first));
  for (uint64_t i = 0; i < n; ++i) {
    AppendLE<uint32_t>(files.data, static_cast<uint32_t>(first + (*samples.ends)[i]));
  }
  files.data.append(config_json_);
  files.data.append(samples.data);
  return files;
}

Result<std::unique_ptr<MdsWriter>> MdsWriter::Create(
    const std::string& out_dir,
    const std::vector<std::pair<std::string, std::string>>& columns,
    const ShardedWriterOptions& options,
    const std::map<std::string, std::optional<uint64_t>>& custom_encodings) {
  if (columns.empty()) return InvalidArgumentError("an MDS dataset needs at least one column");
  std::vector<std::pair<std::string, std::string>> sorted = columns;
  std::sort(sorted.begin(), sorted.end());
  std::unique_ptr<MdsWriter> w(new MdsWriter());
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (i > 0 && sorted[i].first == sorted[i - 1].first) {
      return InvalidArgumentError("column '" + sorted[i].first + "' is given twice");
    }
    auto custom = custom_encodings.find(sorted[i].second);
    SLUICE_ASSIGN_OR_RETURN(
        ColumnEncoding enc,
        custom == custom_encodings.end()
            ? ParseColumnEncoding(sorted[i].second, sorted[i].first)
            : CustomColumnEncoding(sorted[i].second, sorted[i].first, custom->second));
    w->columns_.push_back(std::move(enc));
  }
  SLUICE_ASSIGN_OR_RETURN(
      w->core_, ShardedWriter::Create(out_dir, std::make_unique<MdsShardFormat>(w->columns_),
                                      options));
  w->encoded_.resize(w->columns_.size());
  return w;
}

Status MdsWriter::Write(const std::vector<MdsValue>& values) {
  if (values.size() != columns_.size()) {
    return InvalidArgumentError("sample has " + std::to_string(values.size()) +
                                " values, the dataset has " + std::to_string(columns_.size()) +
                                " columns");
  }
  std::vector<std::string_view> fields(values.size());
  for (size_t c = 0; c < values.size(); ++c) {
    if (const auto* raw = std::get_if<MdsBytes>(&values[c])) {
      fields[c] = raw->bytes;  // no copy for the passthrough path
      continue;
    }
    SLUICE_ASSIGN_OR_RETURN(encoded_[c], EncodeMdsValue(columns_[c], values[c]));
    fields[c] = encoded_[c];
  }
  return WriteFields(fields);
}

Status MdsWriter::WriteFields(const std::vector<std::string_view>& fields) {
  if (fields.size() != columns_.size()) {
    return InvalidArgumentError("sample has " + std::to_string(fields.size()) +
                                " fields, the dataset has " + std::to_string(columns_.size()) +
                                " columns");
  }
  sample_.clear();
  for (size_t c = 0; c < fields.size(); ++c) {
    const ColumnEncoding& enc = columns_[c];
    if (enc.fixed_size) {
      if (fields[c].size() != *enc.fixed_size) {
        return InvalidArgumentError("column '" + enc.column + "' (" + enc.name + "): value is " +
                                    std::to_string(fields[c].size()) +
                                    " bytes, the column stores exactly " +
                                    std::to_string(*enc.fixed_size));
      }
    } else {
      if (fields[c].size() > UINT32_MAX) {
        return InvalidArgumentError("column '" + enc.column + "': value of " +
                                    std::to_string(fields[c].size()) +
                                    " bytes does not fit in 32 bits");
      }
      AppendLE<uint32_t>(sample_, static_cast<uint32_t>(fields[c].size()));
    }
  }
  for (std::string_view f : fields) sample_.append(f);
  return core_->Write(sample_);
}

}  // namespace sluice
