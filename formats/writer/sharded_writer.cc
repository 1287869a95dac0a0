#include "formats/writer/sharded_writer.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "base/file.h"
#include "formats/codec/hashes.h"

namespace sluice {

Result<uint64_t> ParseSizeLimit(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return InvalidArgumentError("size limit '" + std::string(text.substr(0, 64)) + "': " +
                                std::string(why));
  };
  std::string lower(text);
  for (char& c : lower) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  static constexpr std::string_view kUnits[] = {"kb", "mb", "gb", "tb", "pb", "eb", "zb", "yb"};
  std::string_view num = lower;
  int power = 0;
  for (int i = 0; i < 8; ++i) {
    if (num.size() > 2 && num.substr(num.size() - 2) == kUnits[i]) {
      power = i + 1;
      num.remove_suffix(2);
      break;
    }
  }
  if (power == 0 && !num.empty() && num.back() == 'b') num.remove_suffix(1);
  if (num.empty()) return bad("expected a number with an optional unit (b, kb ... yb)");
  bool has_dot = false;
  for (char c : num) {
    if (c == '.') {
      if (has_dot) return bad("more than one '.'");
      has_dot = true;
    } else if (c < '0' || c > '9') {
      return bad("expected a number with an optional unit (b, kb ... yb)");
    }
  }
  if (num == ".") return bad("expected digits");
  if (!has_dot) {
    uint64_t v = 0;
    auto [ptr, ec] = std::from_chars(num.data(), num.data() + num.size(), v);
    if (ec != std::errc() || ptr != num.data() + num.size()) return bad("too large");
    for (int i = 0; i < power; ++i) {
      if (v > (UINT64_MAX >> 10)) return bad("too large");
      v <<= 10;
    }
    return v;
  }
  double d = 0;
  auto [ptr, ec] = std::from_chars(num.data(), num.data() + num.size(), d);
  if (ec != std::errc() || ptr != num.data() + num.size()) return bad("not a number");
  d = std::ldexp(d, 10 * power);  // exact scaling by 1024^power
  if (!(d < 18446744073709551616.0)) return bad("too large");
  return static_cast<uint64_t>(d);  // truncates, as Python's int(float) does
}

Result<std::unique_ptr<ShardedWriter>> ShardedWriter::Create(
    const std::string& out_dir, std::unique_ptr<ShardFormat> format,
    const ShardedWriterOptions& options) {
  if (format == nullptr) return InvalidArgumentError("ShardedWriter needs a shard format");
  std::unique_ptr<ShardedWriter> w(new ShardedWriter());
  w->out_dir_ = out_dir;
  w->env_ = options.env != nullptr ? options.env : Env::Default();
  ShardEntry& config = w->config_;
  config.version = 2;
  if (options.compression) {
    SLUICE_ASSIGN_OR_RETURN(Compression c, ParseCompression(*options.compression));
    config.compression = c.name;
    w->compression_ = std::move(c);
  }
  config.hashes = options.hashes;
  std::sort(config.hashes.begin(), config.hashes.end());
  for (size_t i = 0; i < config.hashes.size(); ++i) {
    if (!IsSupportedHash(config.hashes[i])) {
      return UnimplementedError("unknown hash algorithm '" + config.hashes[i] + "'");
    }
    if (i > 0 && config.hashes[i] == config.hashes[i - 1]) {
      return InvalidArgumentError("hash algorithm '" + config.hashes[i] + "' given twice");
    }
  }
  if (options.size_limit && *options.size_limit >= (uint64_t{1} << 32)) {
    return InvalidArgumentError("size_limit " + std::to_string(*options.size_limit) +
                                " must be less than 2^32");
  }
  config.size_limit = options.size_limit;
  // Mosaic's writers take a false size_limit (0) as no limit (null in
  // index.json), not as a shard per sample.
  if (config.size_limit == uint64_t{0}) config.size_limit.reset();
  SLUICE_RETURN_IF_ERROR(format->Configure(&config));
  if (config.format.empty()) return InternalError("shard format did not set its name");
  config.has_meta = format->has_meta();
  w->extra_per_shard_ = format->extra_per_shard();
  w->extra_per_sample_ = format->extra_per_sample();
  w->cur_size_ = w->extra_per_shard_;
  w->format_ = std::move(format);
  SLUICE_RETURN_IF_ERROR(MakeDirs(out_dir, w->env_));
  return w;
}

ShardedWriter::~ShardedWriter() = default;

Status ShardedWriter::Write(std::string_view encoded_sample) {
  if (!sticky_error_.ok()) return sticky_error_;
  const uint64_t counted = encoded_sample.size() + extra_per_sample_;
  if (config_.size_limit && *config_.size_limit < cur_size_ + counted) {
    SLUICE_RETURN_IF_ERROR(FlushShard());
  }
  data_.append(encoded_sample);
  ends_.push_back(data_.size());
  cur_size_ += counted;
  ++samples_written_;
  return Status::Ok();
}

Status ShardedWriter::Finish() {
  if (!sticky_error_.ok()) return sticky_error_;
  if (!ends_.empty()) SLUICE_RETURN_IF_ERROR(FlushShard());
  Index index;
  index.version = 2;
  index.shards = shards_;
  Status st;
  auto text = SerializeIndexSorted(index);
  if (!text.ok()) {
    st = text.status();
  } else {
    st = WriteFileAtomic(JoinPath(out_dir_, "index.json"), *text, env_);
  }
  sticky_error_ = st.ok() ? InvalidArgumentError("writer for " + out_dir_ + " is finished")
                          : st;
  return st;
}

Result<FileInfo> ShardedWriter::WriteShardFile(const std::string& basename,
                                               const std::string& raw,
                                               std::optional<FileInfo>* zip) {
  FileInfo info;
  info.basename = basename;
  info.bytes = raw.size();
  for (const std::string& algo : config_.hashes) {
    SLUICE_ASSIGN_OR_RETURN(info.hashes[algo], HashHex(algo, raw));
  }
  if (!compression_) {
    zip->reset();
    SLUICE_RETURN_IF_ERROR(WriteFileAtomic(JoinPath(out_dir_, basename), raw, env_));
    return info;
  }
  SLUICE_ASSIGN_OR_RETURN(std::string packed, Compress(*compression_, raw));
  FileInfo z;
  z.basename = basename + "." + CompressionExtension(*compression_);
  z.bytes = packed.size();
  for (const std::string& algo : config_.hashes) {
    SLUICE_ASSIGN_OR_RETURN(z.hashes[algo], HashHex(algo, packed));
  }
  SLUICE_RETURN_IF_ERROR(WriteFileAtomic(JoinPath(out_dir_, z.basename), packed, env_));
  *zip = std::move(z);
  return info;
}

Status ShardedWriter::FlushShard() {
  ShardSamples samples{data_, &ends_};
  auto built = format_->BuildShard(samples);
  Status st = built.status();
  if (st.ok() && built->meta.has_value() != format_->has_meta()) {
    st = InternalError("shard format returned a meta file inconsistent with has_meta()");
  }
  ShardEntry entry = config_;
  if (st.ok()) {
    const std::string base = ShardBasename(shards_.size(), config_.format);
    entry.samples = ends_.size();
    auto raw = WriteShardFile(base, built->data, &entry.zip_data);
    if (raw.ok()) {
      entry.raw_data = std::move(raw).value();
    } else {
      st = raw.status();
    }
    if (st.ok() && built->meta) {
      std::optional<FileInfo> zip_meta;
      auto meta = WriteShardFile(base + ".meta", *built->meta, &zip_meta);
      if (meta.ok()) {
        entry.raw_meta = std::move(meta).value();
        entry.zip_meta = std::move(zip_meta);
      } else {
        st = meta.status();
      }
    }
  }
  if (!st.ok()) {
    sticky_error_ = st.WithContext("writing shard " + std::to_string(shards_.size()) +
                                   " in " + out_dir_);
    return sticky_error_;
  }
  shards_.push_back(std::move(entry));
  data_.clear();
  ends_.clear();
  cur_size_ = extra_per_shard_;
  return Status::Ok();
}

}  // namespace sluice
