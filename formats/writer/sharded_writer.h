// The format-independent core of Mosaic's shard writers: it takes encoded
// samples one at a time, splits them into shards exactly where Mosaic does,
// builds each shard's file(s) through a small per-format interface,
// compresses and hashes them, writes them atomically and finally writes
// index.json. MDS (formats/mds/mds_writer.h) and the JSONL and CSV/TSV/XSV
// writers are built on it.
//
// Shard splitting (tests/data/mosaic/mds/README.md, "Shard splitting"): the
// shard being built has an accounted size `cur`, starting at
// extra_per_shard(); a sample of L bytes counts L + extra_per_sample(). When
// a size limit is set and size_limit < cur + L + extra_per_sample, the
// current shard is written first, even when it has no sample (Mosaic then
// writes a 0-sample shard); then the sample joins the new shard. Finish()
// writes the last shard if it has samples, then index.json.
//
// Files: shard.NNNNN.<format> (data) and, for split formats,
// shard.NNNNN.<format>.meta; with compression only the compressed file is
// written, named with ".<family>" appended (e.g. shard.00000.mds.zstd).
// raw_data/raw_meta describe the uncompressed bytes, zip_data/zip_meta the
// stored compressed file (null without compression). Hashes are computed on
// both. Every file (and index.json) is written through a temporary file and
// an atomic rename, through the options' Env: a shard that fails to write
// leaves no file under its name and no temporary, the shards written before
// it stay, and index.json is written only after every shard it lists.
//
// Thread safety: a ShardedWriter is used by one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/env.h"
#include "base/status.h"
#include "formats/codec/compression.h"
#include "formats/index/index.h"

namespace sluice {

// Mosaic's default size_limit (64 MiB).
inline constexpr uint64_t kDefaultShardSizeLimit = uint64_t{1} << 26;

// Parses Mosaic's human size strings: "123" and "123b" are bytes; suffixes
// kb, mb, gb, tb, pb, eb, zb, yb (any case) multiply by 1024^1..8; the
// number may be fractional ("1.5kb" = 1536, truncated toward zero). No sign,
// no spaces. Errors (kInvalidArgument) quote the text. The result may be
// any uint64; ShardedWriter itself requires < 2^32.
Result<uint64_t> ParseSizeLimit(std::string_view text);

// The samples of one shard, handed to ShardFormat::BuildShard: the encoded
// samples concatenated in write order, and the end offset of each inside
// `data` (sample i = data[i == 0 ? 0 : ends[i-1], ends[i])).
struct ShardSamples {
  std::string_view data;
  const std::vector<uint64_t>* ends = nullptr;
  size_t count() const { return ends->size(); }
  std::string_view sample(size_t i) const {
    const uint64_t begin = i == 0 ? 0 : (*ends)[i - 1];
    return data.substr(begin, (*ends)[i] - begin);
  }
};

// The uncompressed files of one shard, as a format builds them.
struct ShardFiles {
  std::string data;                 // shard.NNNNN.<format>
  std::optional<std::string> meta;  // shard.NNNNN.<format>.meta (split formats)
};

// What a shard format adds to the core. One instance per writer; the core
// calls Configure once, then BuildShard once per shard, from one thread.
//
// To add a format (e.g. JSONL): derive from ShardFormat, then
//   auto core = ShardedWriter::Create(dir, std::make_unique<MyFormat>(...), options);
//   core->Write(encoded_line) ...; core->Finish();
// where each encoded sample is exactly the bytes the format appends to its
// data file for that sample (a JSONL line with its newline, a CSV row...).
class ShardFormat {
 public:
  virtual ~ShardFormat() = default;

  // Completes the config fields of the shard entries. On entry, `entry` has
  // version (2), compression (the name as given, or unset), hashes (sorted)
  // and size_limit (or unset) filled in by the core. The format sets
  // `format` (used in file names too: "mds", "json", "csv", "tsv", "xsv")
  // and its own fields (MDS: column_names/encodings/sizes; JSON: columns,
  // newline; XSV: columns, newline, separator...), and may serialize the
  // config it embeds in every shard (SerializeShardConfig(*entry)) for
  // BuildShard and extra_per_shard. Errors abort ShardedWriter::Create.
  virtual Status Configure(ShardEntry* entry) = 0;

  // Accounted bytes of an empty shard (MDS: 8 + len(config JSON); split
  // formats: 0). Called after Configure.
  virtual uint64_t extra_per_shard() const = 0;

  // Accounted bytes added by each sample beyond its encoded size (MDS: 4,
  // its offset word; split formats: 0). Called after Configure.
  virtual uint64_t extra_per_sample() const = 0;

  // True when the format writes a .meta file per shard (JSONL, XSV). The
  // entries then carry raw_meta/zip_meta (has_meta = true).
  virtual bool has_meta() const = 0;

  // Builds the uncompressed file(s) of one shard from its samples (possibly
  // none: the 0-sample first shard of the splitting rule). `meta` must be
  // set exactly when has_meta(). Errors (e.g. a shard too large for 32-bit
  // offsets) are returned from the Write/Finish call that flushed the shard.
  virtual Result<ShardFiles> BuildShard(const ShardSamples& samples) const = 0;
};

struct ShardedWriterOptions {
  // Mosaic's compression name ("zstd", "zstd:19", "br", "gz", "bz2",
  // "snappy", ...); unset = none.
  std::optional<std::string> compression;
  // Hash algorithm names (formats/codec/hashes.h); stored sorted; duplicates
  // and unknown names are refused.
  std::vector<std::string> hashes;
  // Split threshold in bytes, < 2^32; unset or 0 = one shard for
  // everything (Mosaic's size_limit=None, and 0 as Mosaic takes it).
  std::optional<uint64_t> size_limit = kDefaultShardSizeLimit;
  // Every file-system call goes through it; it must outlive the writer.
  Env* env = Env::Default();
};

class ShardedWriter {
 public:
  // Validates the options (compression name, hash names, size_limit < 2^32;
  // kInvalidArgument/kUnimplemented otherwise), configures `format`, and
  // creates `out_dir` (and parents) if missing. Existing files with the same
  // names are replaced as shards are written.
  static Result<std::unique_ptr<ShardedWriter>> Create(const std::string& out_dir,
                                                      std::unique_ptr<ShardFormat> format,
                                                      const ShardedWriterOptions& options);

  ShardedWriter(const ShardedWriter&) = delete;
  ShardedWriter& operator=(const ShardedWriter&) = delete;
  ~ShardedWriter();

  // Adds one encoded sample (copied), first writing the current shard when
  // the splitting rule says so. After Finish() or after an error while
  // writing a shard, every call fails with the same error.
  Status Write(std::string_view encoded_sample);

  // Writes the last shard if it holds samples, then index.json
  // (SerializeIndexSorted). Calling it again is an error.
  Status Finish();

  // The config template every shard entry starts from (after Configure).
  const ShardEntry& config() const { return config_; }
  // Entries of the shards written so far, in order.
  const std::vector<ShardEntry>& shards() const { return shards_; }
  uint64_t samples_written() const { return samples_written_; }
  const std::string& out_dir() const { return out_dir_; }

 private:
  ShardedWriter() = default;
  Status FlushShard();
  Result<FileInfo> WriteShardFile(const std::string& basename, const std::string& raw,
                                  std::optional<FileInfo>* zip);

  std::string out_dir_;
  Env* env_ = nullptr;
  std::unique_ptr<ShardFormat> format_;
  ShardEntry config_;
  std::optional<Compression> compression_;
  uint64_t extra_per_sample_ = 0;
  uint64_t extra_per_shard_ = 0;
  // The shard being built.
  std::string data_;
  std::vector<uint64_t> ends_;
  uint64_t cur_size_ = 0;
  std::vector<ShardEntry> shards_;
  uint64_t samples_written_ = 0;
  Status sticky_error_;  // set after a failed flush or Finish()
};

}  // namespace sluice
