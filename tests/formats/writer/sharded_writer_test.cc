// ShardedWriter with a small test format: Mosaic's splitting rule at its
// exact boundaries, file names, compression, hashes, meta files, index.json
// and errors. (The MDS compat tests in tests/formats/mds/ check it against
// Mosaic's own output.)
#include "formats/writer/sharded_writer.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "base/file.h"
#include "formats/codec/hashes.h"
#include "tests/common/temp_dir.h"

namespace sluice {
namespace {

using testing::TempDir;

// data = "<" + samples joined by "|" + ">"; meta (optional) = the count.
// It names itself "mds" (no meta) or "json" (with meta) so that index.json
// serialization accepts its entries; its files are not real MDS/JSONL.
class TestFormat : public ShardFormat {
 public:
  TestFormat(uint64_t per_shard, uint64_t per_sample, bool meta, bool fail_on_second = false)
      : per_shard_(per_shard), per_sample_(per_sample), meta_(meta), fail_(fail_on_second) {}
  Status Configure(ShardEntry* entry) override {
    if (meta_) {
      entry->format = "json";
      entry->columns = {{"x", "str"}};
      entry->newline = "\n";
    } else {
      entry->format = "mds";
      entry->column_names = {"x"};
      entry->column_encodings = {"bytes"};
      entry->column_sizes = {std::nullopt};
    }
    return Status::Ok();
  }
  uint64_t extra_per_shard() const override { return per_shard_; }
  uint64_t extra_per_sample() const override { return per_sample_; }
  bool has_meta() const override { return meta_; }
  Result<ShardFiles> BuildShard(const ShardSamples& samples) const override {
    if (fail_ && ++calls_ == 2) return InvalidArgumentError("too big");
    ShardFiles f;
    f.data = "<";
    for (size_t i = 0; i < samples.count(); ++i) {
      if (i > 0) f.data += "|";
      f.data += samples.sample(i);
    }
    f.data += ">";
    if (meta_) f.meta = std::to_string(samples.count());
    return f;
  }

 private:
  uint64_t per_shard_, per_sample_;
  bool meta_, fail_;
  mutable int calls_ = 0;
};

std::string Read(const std::string& dir, const std::string& name) {
  auto r = ReadFile(JoinPath(dir, name));
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : "<missing>";
}

std::unique_ptr<ShardedWriter> Make(const std::string& dir, std::unique_ptr<ShardFormat> f,
                                    std::optional<uint64_t> limit,
                                    std::optional<std::string> compression = std::nullopt,
                                    std::vector<std::string> hashes = {}) {
  ShardedWriterOptions o;
  o.size_limit = limit;
  o.compression = std::move(compression);
  o.hashes = std::move(hashes);
  auto w = ShardedWriter::Create(dir, std::move(f), o);
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  return w.ok() ? std::move(w).value() : nullptr;
}

TEST(ParseSizeLimit, MosaicHumanSizes) {
  EXPECT_EQ(ParseSizeLimit("123").value(), 123u);
  EXPECT_EQ(ParseSizeLimit("123b").value(), 123u);
  EXPECT_EQ(ParseSizeLimit("123B").value(), 123u);
  EXPECT_EQ(ParseSizeLimit("100kb").value(), 102400u);
  EXPECT_EQ(ParseSizeLimit("100KB").value(), 102400u);
  EXPECT_EQ(ParseSizeLimit("1.5kb").value(), 1536u);
  EXPECT_EQ(ParseSizeLimit("0.001kb").value(), 1u);  // 1.024 truncated
  EXPECT_EQ(ParseSizeLimit("64mb").value(), uint64_t{1} << 26);
  EXPECT_EQ(ParseSizeLimit("3Gb").value(), uint64_t{3} << 30);
  EXPECT_EQ(ParseSizeLimit("1tb").value(), uint64_t{1} << 40);
  EXPECT_EQ(ParseSizeLimit("1pb").value(), uint64_t{1} << 50);
  EXPECT_EQ(ParseSizeLimit("15eb").value(), uint64_t{15} << 60);
  EXPECT_EQ(ParseSizeLimit(".5kb").value(), 512u);
  EXPECT_EQ(ParseSizeLimit("0").value(), 0u);
  EXPECT_EQ(ParseSizeLimit("16eb").status().ToString(), "invalid argument: size limit '16eb': too large");
  EXPECT_FALSE(ParseSizeLimit("1zb").ok());
  EXPECT_FALSE(ParseSizeLimit("1yb").ok());
  EXPECT_FALSE(ParseSizeLimit("99999999999999999999").ok());
  EXPECT_EQ(ParseSizeLimit("12 kb").status().ToString(),
            "invalid argument: size limit '12 kb': expected a number with an optional unit (b, kb ... yb)");
  for (const char* bad : {"", "b", "kb", "-1", "+1", "1.2.3", "1e3", "1xb", "1kbb", ".", ".kb", "1k"}) {
    auto r = ParseSizeLimit(bad);
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

// extra_per_shard 10, extra_per_sample 2, limit 30: a sample that brings the
// shard exactly to the limit stays; one byte more flushes first.
TEST(ShardedWriter, SplitsAtTheExactBoundary) {
  TempDir tmp;
  auto w = Make(tmp.path(), std::make_unique<TestFormat>(10, 2, false), 30);
  ASSERT_NE(w, nullptr);
  ASSERT_TRUE(w->Write("aaaaaaaa").ok());  // 10 + 10 = 20
  ASSERT_TRUE(w->Write("bbbbbbbb").ok());  // 20 + 10 = 30 == limit: stays
  EXPECT_TRUE(w->shards().empty());
  ASSERT_TRUE(w->Write("c").ok());         // 30 + 3 > 30: flush first
  ASSERT_EQ(w->shards().size(), 1u);
  ASSERT_TRUE(w->Write("ddddddddddddddd").ok());  // 13 + 17 = 30: stays
  ASSERT_TRUE(w->Write("eeeeeeeeeeeeeeeeeee").ok());  // 30 + 21: flush; 10 + 21 = 31 alone
  { Status fin = w->Finish(); ASSERT_TRUE(fin.ok()) << fin.ToString(); }
  ASSERT_EQ(w->shards().size(), 3u);
  EXPECT_EQ(Read(tmp.path(), "shard.00000.mds"), "<aaaaaaaa|bbbbbbbb>");
  EXPECT_EQ(Read(tmp.path(), "shard.00001.mds"), "<c|ddddddddddddddd>");
  EXPECT_EQ(Read(tmp.path(), "shard.00002.mds"), "<eeeeeeeeeeeeeeeeeee>");
  EXPECT_EQ(w->shards()[0].samples, 2u);
  EXPECT_EQ(w->shards()[1].samples, 2u);
  EXPECT_EQ(w->shards()[2].samples, 1u);
  EXPECT_EQ(w->samples_written(), 5u);
}

TEST(ShardedWriter, ZeroSampleFirstShardWhenTheLimitIsBelowTheShardOverhead) {
  TempDir tmp;
  auto w = Make(tmp.path(), std::make_unique<TestFormat>(50, 4, false), 40);
  ASSERT_NE(w, nullptr);
  for (const char* s : {"x", "yy", "z"}) ASSERT_TRUE(w->Write(s).ok());
  { Status fin = w->Finish(); ASSERT_TRUE(fin.ok()) << fin.ToString(); }
  ASSERT_EQ(w->shards().size(), 4u);
  EXPECT_EQ(w->shards()[0].samples, 0u);
  EXPECT_EQ(Read(tmp.path(), "shard.00000.mds"), "<>");
  EXPECT_EQ(Read(tmp.path(), "shard.00001.mds"), "<x>");
  EXPECT_EQ(Read(tmp.path(), "shard.00002.mds"), "<yy>");
  EXPECT_EQ(Read(tmp.path(), "shard.00003.mds"), "<z>");
}

TEST(ShardedWriter, NoLimitMeansOneShardAndNoSamplesMeansNoShard) {
  // Unset, or 0 as Mosaic's writers take it (not a shard per sample).
  for (std::optional<uint64_t> limit : {std::optional<uint64_t>(), std::optional<uint64_t>(0)}) {
    TempDir tmp;
    auto w = Make(tmp.path(), std::make_unique<TestFormat>(1000, 1000, false), limit);
    ASSERT_NE(w, nullptr);
    for (int i = 0; i < 100; ++i) ASSERT_TRUE(w->Write("s").ok());
    { Status fin = w->Finish(); ASSERT_TRUE(fin.ok()) << fin.ToString(); }
    ASSERT_EQ(w->shards().size(), 1u);
    EXPECT_EQ(w->shards()[0].samples, 100u);
    EXPECT_EQ(w->shards()[0].size_limit, std::nullopt);
    EXPECT_NE(Read(tmp.path(), "index.json").find("\"size_limit\": null"), std::string::npos);
  }

  TempDir empty;
  auto e = Make(empty.path(), std::make_unique<TestFormat>(0, 0, false), 10);
  ASSERT_NE(e, nullptr);
  ASSERT_TRUE(e->Finish().ok());
  EXPECT_EQ(Read(empty.path(), "index.json"), "{\"shards\": [], \"version\": 2}");
}

TEST(ShardedWriter, IndexJsonAsMosaicWritesIt) {
  TempDir tmp;
  auto w = Make(tmp.path(), std::make_unique<TestFormat>(0, 0, false), 1000, std::nullopt,
                {"xxh64", "md5"});
  ASSERT_NE(w, nullptr);
  ASSERT_TRUE(w->Write("ab").ok());
  { Status fin = w->Finish(); ASSERT_TRUE(fin.ok()) << fin.ToString(); }
  const std::string md5 = HashHex("md5", "<ab>").value();
  const std::string xxh = HashHex("xxh64", "<ab>").value();
  EXPECT_EQ(Read(tmp.path(), "index.json"),
            "{\"shards\": [{\"column_encodings\": [\"bytes\"], \"column_names\": [\"x\"], "
            "\"column_sizes\": [null], \"compression\": null, \"format\": \"mds\", \"hashes\": [\"md5\", \"xxh64\"], \"raw_data\": {\"basename\": "
            "\"shard.00000.mds\", \"bytes\": 4, \"hashes\": {\"md5\": \"" + md5 +
            "\", \"xxh64\": \"" + xxh + "\"}}, \"samples\": 1, \"size_limit\": 1000, "
            "\"version\": 2, \"zip_data\": null}], \"version\": 2}");
  // Finished: no more writes.
  EXPECT_EQ(w->Write("x").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(w->Finish().code(), StatusCode::kInvalidArgument);
}

TEST(ShardedWriter, CompressedDataAndMetaWithHashes) {
  TempDir tmp;
  auto w = Make(tmp.path(), std::make_unique<TestFormat>(0, 0, true), 5, "zstd:3", {"sha1"});
  ASSERT_NE(w, nullptr);
  for (const char* s : {"abc", "de", "fghij"}) ASSERT_TRUE(w->Write(s).ok());
  { Status fin = w->Finish(); ASSERT_TRUE(fin.ok()) << fin.ToString(); }
  ASSERT_EQ(w->shards().size(), 2u);
  auto c = ParseCompression("zstd:3").value();
  const char* raws[] = {"<abc|de>", "<fghij>"};
  const char* metas[] = {"2", "1"};
  for (size_t s = 0; s < 2; ++s) {
    const ShardEntry& e = w->shards()[s];
    const std::string base = "shard.0000" + std::to_string(s) + ".json";
    EXPECT_EQ(e.compression, "zstd:3");
    EXPECT_TRUE(e.has_meta);
    EXPECT_EQ(e.raw_data.basename, base);
    EXPECT_EQ(e.raw_data.bytes, std::string(raws[s]).size());
    EXPECT_EQ(e.raw_data.hashes.at("sha1"), HashHex("sha1", raws[s]).value());
    ASSERT_TRUE(e.zip_data.has_value());
    EXPECT_EQ(e.zip_data->basename, base + ".zstd");
    const std::string packed = Read(tmp.path(), base + ".zstd");
    EXPECT_EQ(e.zip_data->bytes, packed.size());
    EXPECT_EQ(e.zip_data->hashes.at("sha1"), HashHex("sha1", packed).value());
    EXPECT_EQ(Decompress(c, packed, 100, "x").value(), raws[s]);
    EXPECT_FALSE(FileExists(JoinPath(tmp.path(), base)));  // only the compressed file
    ASSERT_TRUE(e.raw_meta.has_value());
    EXPECT_EQ(e.raw_meta->basename, base + ".meta");
    ASSERT_TRUE(e.zip_meta.has_value());
    EXPECT_EQ(e.zip_meta->basename, base + ".meta.zstd");
    EXPECT_EQ(Decompress(c, Read(tmp.path(), base + ".meta.zstd"), 100, "x").value(), metas[s]);
    EXPECT_FALSE(FileExists(JoinPath(tmp.path(), base + ".meta")));
  }
  auto index = ParseIndex(Read(tmp.path(), "index.json"), "index.json");
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  ASSERT_EQ(index->shards.size(), 2u);
  EXPECT_EQ(index->shards[1].zip_meta->basename, "shard.00001.json.meta.zstd");
}

TEST(ShardedWriter, UncompressedMetaHasNullZipMeta) {
  TempDir tmp;
  auto w = Make(tmp.path(), std::make_unique<TestFormat>(0, 0, true), std::nullopt);
  ASSERT_NE(w, nullptr);
  ASSERT_TRUE(w->Write("a").ok());
  { Status fin = w->Finish(); ASSERT_TRUE(fin.ok()) << fin.ToString(); }
  EXPECT_EQ(Read(tmp.path(), "shard.00000.json.meta"), "1");
  const std::string index = Read(tmp.path(), "index.json");
  EXPECT_NE(index.find("\"raw_meta\": {\"basename\": \"shard.00000.json.meta\", \"bytes\": 1, "
                       "\"hashes\": {}}"),
            std::string::npos)
      << index;
  EXPECT_NE(index.find("\"zip_meta\": null"), std::string::npos) << index;
}

TEST(ShardedWriter, BadOptions) {
  TempDir tmp;
  auto make = [&](ShardedWriterOptions o) {
    return ShardedWriter::Create(tmp.path(), std::make_unique<TestFormat>(0, 0, false), o)
        .status();
  };
  ShardedWriterOptions o;
  o.size_limit = uint64_t{1} << 32;
  EXPECT_EQ(make(o).ToString(), "invalid argument: size_limit 4294967296 must be less than 2^32");
  o.size_limit = (uint64_t{1} << 32) - 1;
  EXPECT_TRUE(make(o).ok());
  o.hashes = {"sha1", "crc32"};
  EXPECT_EQ(make(o).ToString(), "unimplemented: unknown hash algorithm 'crc32'");
  o.hashes = {"sha1", "md5", "sha1"};
  EXPECT_EQ(make(o).ToString(), "invalid argument: hash algorithm 'sha1' given twice");
  o.hashes = {};
  o.compression = "lz4";
  EXPECT_FALSE(make(o).ok());
  o.compression = "zstd:99";
  EXPECT_FALSE(make(o).ok());
  EXPECT_EQ(ShardedWriter::Create(tmp.path(), nullptr, {}).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(ShardedWriter, ShardBuildErrorsAreStickyAndSayWhichShard) {
  TempDir tmp;
  auto w = Make(tmp.path(), std::make_unique<TestFormat>(0, 0, false, /*fail_on_second=*/true), 1);
  ASSERT_NE(w, nullptr);
  ASSERT_TRUE(w->Write("a").ok());
  ASSERT_TRUE(w->Write("b").ok());  // flushes shard 0
  Status st = w->Write("c");         // flushing shard 1 fails
  EXPECT_EQ(st.ToString(), "invalid argument: writing shard 1 in " + tmp.path() + ": too big");
  EXPECT_EQ(w->Write("d").ToString(), st.ToString());
  EXPECT_EQ(w->Finish().ToString(), st.ToString());
  EXPECT_FALSE(FileExists(JoinPath(tmp.path(), "index.json")));
}

}  // namespace
}  // namespace sluice
