// A folder of Parquet files as a stream (engine/dataset/parquet_stream_index.h):
// the same order and resumption as the same rows written as MDS with shards
// of the row groups' sizes, read in place and through the cache from a
// remote (a folder, and s3rver with the requests counted on the wire).
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "base/file.h"
#include "engine/dataset/parquet_footer_store.h"
#include "engine/dataset/parquet_stream_index.h"
#include "formats/codec/hashes.h"
#include "engine/dataset/resume_state.h"
#include "engine/dataset/sample_peek.h"
#include "engine/dataset/stream_index.h"
#include "engine/dataset/stream_shards.h"
#include "engine/dataset/remote_source.h"
#include "engine/planner/shuffle.h"
#include "engine/dataset/streaming_dataset.h"
#include "formats/index/index.h"
#include "formats/mds/mds_writer.h"
#include "formats/parquet/chunk_reads.h"
#include "formats/parquet/footer.h"
#include "formats/parquet/parquet_index.h"
#include "formats/parquet/parquet_shard_reader.h"
#include "stores/file/file_store.h"
#include "tests/engine/dataset/dataset_test_util.h"
#include "tests/engine/dataset/multiprocess_util.h"
#include "tests/engine/dataset/request_log_proxy.h"
#include "tests/common/scoped_env.h"
#include "tests/stores/common/azurite_suite.h"
#include "tests/stores/common/fake_databricks_files.h"
#include "tests/stores/common/fake_hf_hub.h"
#include "tests/stores/common/node_servers.h"
#include "tests/stores/http/test_servers.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;
using testing::FieldBytes;
using testing::TagOf;
using testing::ScratchDir;

const std::string kFixture = std::string(SLUICE_TEST_DATA_DIR) + "/parquet/pa26_many_row_groups.parquet";
// 2 files x 9 row groups (7 rows each, the last 4): 18 shards, 120 rows.
constexpr uint64_t kRows = 120;
constexpr size_t kGroups = 18;

// A Parquet folder: the fixture twice (one in a sub-folder), and what Spark
// leaves beside data, which the listing leaves out.
void WriteParquetFolder(const std::string& dir) {
  fs::create_directories(fs::path(dir) / "part=b");
  fs::copy_file(kFixture, fs::path(dir) / "a.parquet");
  fs::copy_file(kFixture, fs::path(dir) / "part=b" / "c.parquet");
  ASSERT_TRUE(WriteFileAtomic(JoinPath(dir, "_SUCCESS"), "").ok());
  ASSERT_TRUE(WriteFileAtomic(JoinPath(dir, ".a.parquet.crc"), "crc").ok());
}

DatasetOptions ParquetOptions(const std::string& local, const std::string& remote = "") {
  DatasetOptions o;
  StreamOptions s;
  s.local = local;
  s.remote = remote;
  s.download_retry = 0;  // a retry would be a second GET
  o.streams.push_back(s);
  o.prefetch_next_epoch = false;
  o.peek_first_sample = false;
  o.wait_timeout = std::chrono::seconds(20);
  return o;
}

// The rows of the Parquet folder, by global id, as FieldBytes.
std::vector<std::string> ParquetRows(const std::string& dir, std::vector<uint64_t>* group_rows) {
  auto index = LoadStreamIndex(ParquetOptions(dir).streams[0], nullptr, std::chrono::seconds(5));
  EXPECT_TRUE(index.ok()) << index.status().message();
  if (!index.ok()) return {};
  for (size_t i = 0; i < index->size(); ++i) group_rows->push_back(index->samples(i));
  auto ds = StreamingDataset::Open(ParquetOptions(dir));
  EXPECT_TRUE(ds.ok()) << ds.status().message();
  std::vector<std::string> rows;
  SampleFields f;
  for (uint64_t id = 0; id < kRows; ++id) {
    Status got = (*ds)->Get(id, &f);
    EXPECT_TRUE(got.ok()) << got.message();
    rows.push_back(FieldBytes(f));
  }
  return rows;
}

// The same rows as MDS, one column "row" holding each row's FieldBytes
// (without its last separator), one shard per row group: each group written
// as a dataset of one shard, the indexes merged (Mosaic's merge_index).
void WriteMdsTwin(const std::string& dir, const std::vector<std::string>& rows,
                  const std::vector<uint64_t>& group_rows) {
  std::vector<std::string> texts, prefixes;
  size_t next = 0;
  for (size_t g = 0; g < group_rows.size(); ++g) {
    const std::string prefix = "g" + std::to_string(g);
    ShardedWriterOptions options;
    options.size_limit = std::nullopt;
    auto writer = MdsWriter::Create(JoinPath(dir, prefix), {{"row", "bytes"}}, options);
    ASSERT_TRUE(writer.ok()) << writer.status().message();
    for (uint64_t r = 0; r < group_rows[g]; ++r, ++next) {
      const std::string& row = rows[next];
      ASSERT_TRUE((*writer)->WriteFields({std::string_view(row).substr(0, row.size() - 1)}).ok());
    }
    ASSERT_TRUE((*writer)->Finish().ok());
    auto text = ReadFile(JoinPath(JoinPath(dir, prefix), "index.json"));
    ASSERT_TRUE(text.ok());
    texts.push_back(*text);
    prefixes.push_back(prefix);
  }
  std::vector<IndexPart> parts;
  for (size_t g = 0; g < texts.size(); ++g) parts.push_back({texts[g], prefixes[g], prefixes[g]});
  auto merged = MergeIndexes(parts);
  ASSERT_TRUE(merged.ok()) << merged.status().message();
  ASSERT_TRUE(WriteFileAtomic(JoinPath(dir, "index.json"), *merged).ok());
}

struct Twins {
  ScratchDir parquet, mds;
  std::vector<std::string> rows;
  std::vector<uint64_t> group_rows;
  Twins() {
    WriteParquetFolder(parquet.path());
    rows = ParquetRows(parquet.path(), &group_rows);
    WriteMdsTwin(mds.path(), rows, group_rows);
  }
};

TEST(ParquetStream, LocalFolderIsDetectedAndIndexedByRowGroup) {
  Twins t;
  ASSERT_EQ(t.group_rows.size(), kGroups);
  ASSERT_EQ(t.rows.size(), kRows);
  auto index = LoadStreamIndex(ParquetOptions(t.parquet.path()).streams[0], nullptr, std::chrono::seconds(5));
  ASSERT_TRUE(index.ok());
  EXPECT_EQ(index->entry(0).raw_data.basename, "a.parquet");
  EXPECT_EQ(index->entry(9).raw_data.basename, "part=b/c.parquet");
  EXPECT_EQ(index->entry(9).row_group, 0u);
  EXPECT_EQ(index->entry(8).samples, 4u);
  EXPECT_FALSE(index->entry(0).piece.has_value());
  // The first row: id 0, label "label-0"... as the fixture's expected values.
  auto ds = StreamingDataset::Open(ParquetOptions(t.parquet.path()));
  ASSERT_TRUE(ds.ok());
  EXPECT_EQ((*ds)->column_names(),
            (std::vector<std::string>{"id", "label", "score", "text", "tokens"}));
  EXPECT_EQ((*ds)->format(), "parquet");
  // Both files hold the same rows: row k and row 60 + k are equal.
  for (size_t k = 0; k < 60; ++k) EXPECT_EQ(t.rows[k], t.rows[60 + k]) << k;

  // The same folder said explicitly, with a glob that keeps one file.
  DatasetOptions one = ParquetOptions(t.parquet.path());
  one.streams[0].parquet.emplace();
  one.streams[0].parquet->selection.globs = {"part=b/*.parquet"};
  auto only = StreamingDataset::Open(one);
  ASSERT_TRUE(only.ok()) << only.status().message();
  EXPECT_EQ((*only)->num_samples(), 60u);

  // A folder without index.json or Parquet files keeps Mosaic's error.
  ScratchDir empty;
  auto none = StreamingDataset::Open(ParquetOptions(empty.path()));
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("No `remote` provided, but local file " +
                                         JoinPath(empty.path(), "index.json") +
                                         " does not exist either"),
            std::string::npos)
      << none.status().message();
}

// Every worker's samples (FieldBytes, MDS's with the row's last separator
// put back) of one epoch of `o`'s world, node by node, rank by rank.
std::vector<std::vector<std::string>> ReadWorld(DatasetOptions o, int64_t nodes, int64_t ranks,
                                                int64_t workers) {
  std::vector<std::vector<std::string>> out;
  for (int64_t n = 0; n < nodes; ++n) {
    for (int64_t r = 0; r < ranks; ++r) {
      o.world.rank = n * ranks + r;
      o.world.world_size = nodes * ranks;
      o.world.local_rank = r;
      o.world.local_world_size = ranks;
      auto ds = StreamingDataset::Open(o);
      EXPECT_TRUE(ds.ok()) << ds.status().message();
      if (!ds.ok()) return out;
      for (int64_t w = 0; w < workers; ++w) {
        std::vector<std::string> bytes;
        testing::ReadEpoch(**ds, 1, 0, w, workers, 3, &bytes);
        out.push_back(std::move(bytes));
      }
    }
  }
  return out;
}

// Equal worker by worker; a failure names the first difference (the
// samples' bytes are long).
void ExpectSameSamples(const std::vector<std::vector<std::string>>& parquet,
                       const std::vector<std::vector<std::string>>& mds) {
  ASSERT_EQ(parquet.size(), mds.size());
  for (size_t w = 0; w < parquet.size(); ++w) {
    ASSERT_EQ(parquet[w].size(), mds[w].size()) << "worker " << w;
    for (size_t i = 0; i < parquet[w].size(); ++i) {
      ASSERT_TRUE(parquet[w][i] == mds[w][i]) << "worker " << w << " sample " << i;
    }
  }
}

TEST(ParquetStream, SameOrderAsMdsTwinForEveryShuffleAndWorld) {
  Twins t;
  struct Shape { int64_t nodes, ranks, workers; };
  for (const char* algo : {"py1e", "py1br", "py1b", "py1s", "py2s", "naive", "none"}) {
    for (Shape shape : {Shape{1, 1, 1}, Shape{2, 2, 2}}) {
      SCOPED_TRACE(std::string(algo) + " on " + std::to_string(shape.nodes) + "x" +
                   std::to_string(shape.ranks) + "x" + std::to_string(shape.workers));
      auto config = [&](const std::string& dir) {
        DatasetOptions o = ParquetOptions(dir);
        o.plan.shuffle = std::string(algo) != "none";
        if (o.plan.shuffle) o.plan.shuffle_algo = *planner::ParseShuffleAlgo(algo);
        o.plan.shuffle_seed = 17;
        o.plan.shuffle_block_size = 25;
        o.plan.batch_size = 3;
        o.plan.num_canonical_nodes = 2;
        return o;
      };
      auto parquet = ReadWorld(config(t.parquet.path()), shape.nodes, shape.ranks, shape.workers);
      // The MDS twin's one field is the row's FieldBytes but the last
      // separator, which its own FieldBytes puts back.
      auto mds = ReadWorld(config(t.mds.path()), shape.nodes, shape.ranks, shape.workers);
      size_t total = 0;
      for (const auto& w : parquet) total += w.size();
      EXPECT_EQ(total, kRows);
      ExpectSameSamples(parquet, mds);
    }
  }
}

// A Parquet stream mixes with an MDS stream as its MDS twin would: under
// repeat= beside choose= and under proportion=, shuffled, on two shapes of
// world, every worker's sample ids (and so the order) of [Parquet, MDS]
// are those of [the Parquet stream's MDS twin, MDS]. (The samples' fields
// differ: a mixed dataset's columns are both streams'.)
TEST(ParquetStream, MixesWithAnMdsStreamAsItsMdsTwinWould) {
  Twins t;
  ScratchDir other;
  fs::copy(t.mds.path(), other.path(), fs::copy_options::recursive);
  struct Shape { int64_t nodes, ranks, workers; };
  for (bool proportions : {false, true}) {
    for (Shape shape : {Shape{1, 1, 1}, Shape{2, 1, 2}}) {
      SCOPED_TRACE(std::string(proportions ? "proportion" : "repeat and choose") + " on " +
                   std::to_string(shape.nodes) + "x" + std::to_string(shape.ranks) + "x" +
                   std::to_string(shape.workers));
      // Every worker's ids of one epoch, node by node, rank by rank.
      auto ids_of = [&](const std::string& first) {
        DatasetOptions o = ParquetOptions(first);
        StreamOptions second;
        second.local = other.path();
        o.streams.push_back(second);
        if (proportions) {
          o.streams[0].weight.proportion = 0.7;
          o.streams[1].weight.proportion = 0.3;
          o.plan.epoch_size = 150;
        } else {
          o.streams[0].weight.repeat = 1.5;
          o.streams[1].weight.choose = 50;
        }
        o.plan.shuffle = true;
        o.plan.shuffle_seed = 5;
        o.plan.batch_size = 3;
        o.plan.num_canonical_nodes = 2;
        std::vector<std::vector<int64_t>> out;
        for (int64_t n = 0; n < shape.nodes; ++n) {
          o.world.rank = n;
          o.world.world_size = shape.nodes;
          o.world.local_rank = 0;
          o.world.local_world_size = 1;
          auto ds = StreamingDataset::Open(o);
          EXPECT_TRUE(ds.ok()) << ds.status().message();
          if (!ds.ok()) return out;
          for (int64_t w = 0; w < shape.workers; ++w) {
            out.push_back(testing::ReadEpoch(**ds, 1, 0, w, shape.workers, 3, nullptr));
          }
        }
        return out;
      };
      auto mixed = ids_of(t.parquet.path());
      auto twin = ids_of(t.mds.path());
      size_t total = 0, from_parquet = 0;
      for (const auto& w : mixed) {
        total += w.size();
        for (int64_t id : w) from_parquet += id < static_cast<int64_t>(kRows);
      }
      EXPECT_EQ(total, proportions ? 150u : 180u + 50u);
      EXPECT_EQ(from_parquet, proportions ? 105u : 180u);
      EXPECT_EQ(mixed, twin);
    }
  }
}

// Reads `count` samples of one node of `nodes`, returns them and its state.
std::vector<std::string> ReadSome(StreamingDataset& ds, int64_t count) {
  std::vector<std::string> got;
  EXPECT_TRUE(ds.IterBegin(1, 0, 0, 1).ok());
  std::vector<int64_t> ids(1);
  std::vector<SampleFields> fields;
  while (static_cast<int64_t>(got.size()) < count) {
    auto n = ds.NextBatch(1, ids.data(), &fields);
    EXPECT_TRUE(n.ok() && *n == 1);
    if (!n.ok() || *n != 1) break;
    got.push_back(FieldBytes(fields[0]));
  }
  return got;
}

TEST(ParquetStream, SameResumptionAsMdsTwinOnAnotherNumberOfNodes) {
  Twins t;
  auto node_options = [&](const std::string& dir, int64_t node, int64_t nodes) {
    DatasetOptions o = ParquetOptions(dir);
    o.plan.shuffle = true;
    o.plan.shuffle_seed = 3;
    o.plan.batch_size = 2;
    o.plan.num_canonical_nodes = 4;
    o.world.rank = node;
    o.world.world_size = nodes;
    o.world.local_rank = 0;
    o.world.local_world_size = 1;
    return o;
  };
  for (int64_t resume_nodes : {2, 1}) {
    std::map<std::string, std::vector<std::vector<std::string>>> rest;
    std::map<std::string, std::string> states;
    for (const std::string& dir : {t.parquet.path(), t.mds.path()}) {
      // Interrupted on 4 nodes after 6 samples each.
      std::vector<std::unique_ptr<StreamingDataset>> four;
      for (int64_t n = 0; n < 4; ++n) {
        auto ds = StreamingDataset::Open(node_options(dir, n, 4));
        ASSERT_TRUE(ds.ok()) << ds.status().message();
        ReadSome(**ds, 6);
        four.push_back(std::move(*ds));
      }
      // Mosaic's keys (the order records differ: other shards).
      ResumeState mosaic = four[0]->State(6);
      mosaic.order.reset();
      states[dir] = ResumeStateToJson(mosaic);
      auto state = ResumeStateFromJson(ResumeStateToJson(four[0]->State(6)));
      ASSERT_TRUE(state.ok());
      for (int64_t n = 0; n < resume_nodes; ++n) {
        DatasetOptions o = node_options(dir, n, resume_nodes);
        o.plan.num_canonical_nodes.reset();
        auto ds = StreamingDataset::Open(o);
        ASSERT_TRUE(ds.ok());
        // Resumed on fewer nodes: Mosaic's elastic resume, asked for.
        ASSERT_TRUE((*ds)->LoadState(*state, ResumeOptions{{"world"}, {}, {}, {}}).ok());
        for (int64_t w = 0; w < 2; ++w) {
          std::vector<std::string> bytes;
          testing::ReadEpoch(**ds, state->epoch, state->sample_in_epoch, w, 2, 2, &bytes);
          rest[dir].push_back(std::move(bytes));
        }
      }
    }
    SCOPED_TRACE("resumed on " + std::to_string(resume_nodes) + " nodes");
    EXPECT_EQ(states[t.parquet.path()], states[t.mds.path()]);
    size_t total = 0;
    for (const auto& w : rest[t.parquet.path()]) total += w.size();
    EXPECT_EQ(total, kRows - 24);
    ExpectSameSamples(rest[t.parquet.path()], rest[t.mds.path()]);
  }
}

TEST(ParquetStream, RowGroupPieceNamesDoNotCollide) {
  EXPECT_EQ(RowGroupPieceName("a.parquet", 0), ".parquet_row_groups/a.parquet@0");
  EXPECT_EQ(RowGroupPieceName("d=1/a%b.parquet", 12), ".parquet_row_groups/d=1%2Fa%25b.parquet@12");
  // A file named like another's escaped path.
  EXPECT_NE(RowGroupPieceName("a%2Fb", 0), RowGroupPieceName("a/b", 0));
  EXPECT_NE(RowGroupPieceName("a", 10), RowGroupPieceName("a@1", 0));
  // A file's etag: ".e" and its xxh64, before the column set's suffix.
  EXPECT_EQ(RowGroupPieceName("a.parquet", 0, {}, "\"e1\"").rfind(".parquet_row_groups/a.parquet@0.e", 0), 0u);
  EXPECT_EQ(RowGroupPieceName("a.parquet", 0, {}, "\"e1\"").size(),
            RowGroupPieceName("a.parquet", 0).size() + 2 + 16);
  EXPECT_NE(RowGroupPieceName("a.parquet", 0, {}, "\"e1\""), RowGroupPieceName("a.parquet", 0, {}, "\"e2\""));
  EXPECT_NE(RowGroupPieceName("a.parquet", 0, {}, "\"e1\""), RowGroupPieceName("a.parquet", 0));
  EXPECT_EQ(RowGroupPieceName("a.parquet", 0, {"x"}, "\"e1\"").find(".c"),
            RowGroupPieceName("a.parquet", 0, {}, "\"e1\"").size());
  EXPECT_TRUE(IsSafeBasename(RowGroupPieceName("a.parquet", 0, {"x"}, "\"e1\"")));
  // Exact bytes: the etag's tag is its xxh64 ("abc": 44bc2cf5ad770999),
  // and a path is long by its escaped size (200 bytes at most kept).
  EXPECT_EQ(RowGroupPieceName("p/q%r.parquet", 7, {}, "abc"),
            ".parquet_row_groups/p%2Fq%25r.parquet@7.e44bc2cf5ad770999");
  std::string at_limit;
  for (int i = 0; i < 66; ++i) at_limit += i % 2 ? "%" : "/";
  at_limit += "ab";  // 200 bytes escaped
  std::string escaped;
  for (int i = 0; i < 66; ++i) escaped += i % 2 ? "%25" : "%2F";
  EXPECT_EQ(RowGroupPieceName(at_limit, 0), ".parquet_row_groups/" + escaped + "ab@0");
  const std::string past_limit = at_limit + "c";  // 67 bytes, 201 escaped
  EXPECT_EQ(RowGroupPieceName(past_limit, 2, {}, "abc"),
            ".parquet_row_groups/long/" + *HashHex("xxh64", past_limit) + "@2.e44bc2cf5ad770999");
  const std::string long_name = std::string(300, 'x') + ".parquet";
  const std::string piece = RowGroupPieceName(long_name, 3);
  EXPECT_EQ(piece.rfind(".parquet_row_groups/long/", 0), 0u) << piece;
  EXPECT_LT(piece.size(), 64u);
  EXPECT_TRUE(IsSafeBasename(piece));
  // A column set is part of the name; its order is not (a piece holds the
  // chunks in file order).
  EXPECT_EQ(RowGroupPieceName("a.parquet", 0, {"x", "y"}).rfind(".parquet_row_groups/a.parquet@0.c", 0), 0u);
  EXPECT_EQ(RowGroupPieceName("a.parquet", 0, {"x", "y"}), RowGroupPieceName("a.parquet", 0, {"y", "x"}));
  EXPECT_NE(RowGroupPieceName("a.parquet", 0, {"x", "y"}), RowGroupPieceName("a.parquet", 0, {"x"}));
  EXPECT_NE(RowGroupPieceName("a.parquet", 0, {"x,y"}), RowGroupPieceName("a.parquet", 0, {"x", "y"}));
  EXPECT_NE(RowGroupPieceName("a.parquet", 0, {"x"}), RowGroupPieceName("a.parquet", 0));
  EXPECT_TRUE(IsSafeBasename(RowGroupPieceName("a.parquet", 0, {"x"})));
}

// The fixture's footer, read here (not through the stream).
parquet::FileFooter FixtureFooter() {
  auto bytes = ReadFile(kFixture);
  EXPECT_TRUE(bytes.ok());
  parquet::RangeReader read = [&](uint64_t offset, uint64_t size, std::string* out) {
    out->assign(*bytes, offset, size);
    return Status::Ok();
  };
  auto footer = parquet::ReadFooter(bytes->size(), read, "fixture");
  EXPECT_TRUE(footer.ok());
  return *footer;
}

// Fields `columns` (indices into the whole row's) of a whole row's sample,
// with null-ness, as a string to compare.
std::string Projected(const std::vector<std::string_view>& fields, const std::vector<size_t>& columns) {
  std::string out;
  for (size_t c : columns) {
    out += fields[c].data() == nullptr ? "N" : "V" + std::string(fields[c]);
    out.push_back('\xff');
  }
  return out;
}

// columns=[...] through a remote folder: only the chosen chunks fetched
// (their sizes exactly, the two being adjacent), the values of the whole
// rows' fields in the order asked, the same sample order as without.
TEST(ParquetStream, ColumnsFetchOnlyTheirChunks) {
  Twins t;
  ScratchDir cache, whole_cache;
  const parquet::FileFooter footer = FixtureFooter();
  ASSERT_EQ(footer.schema.fields[2].name, "score");
  ASSERT_EQ(footer.schema.fields[3].name, "text");
  uint64_t chosen = 0, all = 0;
  for (size_t g = 0; g < footer.chunk_ranges.size(); ++g) {
    const parquet::ByteRange score = footer.chunk_ranges[g][footer.schema.fields[2].first_leaf];
    const parquet::ByteRange text = footer.chunk_ranges[g][footer.schema.fields[3].first_leaf];
    ASSERT_EQ(score.offset + score.size, text.offset);  // adjacent: no gap fetched
    chosen += score.size + text.size;
    for (const parquet::ByteRange& r : footer.chunk_ranges[g]) all += r.size;
  }
  auto open = [&](const std::string& local, std::vector<std::string> columns) {
    DatasetOptions o = ParquetOptions(local, t.parquet.path());
    o.streams[0].parquet.emplace();
    o.streams[0].parquet->columns = std::move(columns);
    o.plan.shuffle = true;
    o.plan.shuffle_seed = 5;
    return StreamingDataset::Open(o);
  };
  auto ds = open(cache.path(), {"text", "score"});
  ASSERT_TRUE(ds.ok()) << ds.status().message();
  EXPECT_EQ((*ds)->column_names(), (std::vector<std::string>{"text", "score"}));
  auto whole = StreamingDataset::Open(ParquetOptions(t.parquet.path()));
  ASSERT_TRUE(whole.ok());
  std::vector<std::string> bytes;
  std::vector<int64_t> ids = testing::ReadEpoch(**ds, 0, 0, 0, 1, 4, nullptr);
  ASSERT_EQ(ids.size(), kRows);
  SampleFields f, w;
  for (int64_t id : ids) {
    ASSERT_TRUE((*ds)->Get(static_cast<uint64_t>(id), &f).ok());
    ASSERT_TRUE((*whole)->Get(static_cast<uint64_t>(id), &w).ok());
    ASSERT_EQ(Projected(f.fields, {0, 1}), Projected(w.fields, {3, 2})) << id;
  }
  // Both files' groups, once each: the chunks' bytes and nothing else.
  EXPECT_EQ((*ds)->counters().shards_downloaded, kGroups);
  EXPECT_EQ((*ds)->counters().bytes_downloaded, 2 * chosen);
  const uint64_t tail = footer.metadata_length + 8;
  const parquet::ByteRange text8 = footer.chunk_ranges[8][footer.schema.fields[3].first_leaf];
  const parquet::ByteRange score8 = footer.chunk_ranges[8][footer.schema.fields[2].first_leaf];
  auto fixture = ReadFile(kFixture);
  ASSERT_TRUE(fixture.ok());
  auto piece = ReadFile(JoinPath(cache.path(), RowGroupPieceName("a.parquet", 8, {"score", "text"}, TagOf(t.parquet.path(), "a.parquet"))));
  ASSERT_TRUE(piece.ok());
  EXPECT_EQ(*piece, fixture->substr(score8.offset, score8.size + text8.size) +
                        fixture->substr(fixture->size() - tail));

  // Without columns= the same order, and every chunk fetched.
  auto every = open(whole_cache.path(), {});
  ASSERT_TRUE(every.ok()) << every.status().message();
  EXPECT_EQ(testing::ReadEpoch(**every, 0, 0, 0, 1, 4, nullptr), ids);
  EXPECT_EQ((*every)->counters().bytes_downloaded, 2 * all);

  // Another column set in the same cache folder, while the first dataset
  // is still open: it reads at once (each set has its own shard list in
  // the folder), with pieces of its own, the first dataset's staying as
  // they are.
  auto other = open(cache.path(), {"id"});
  ASSERT_TRUE(other.ok()) << other.status().message();
  ASSERT_EQ(testing::ReadEpoch(**other, 0, 0, 0, 1, 4, nullptr), ids);
  ds->reset();
  ASSERT_TRUE((*other)->Get(119, &f).ok());
  ASSERT_TRUE((*whole)->Get(119, &w).ok());
  EXPECT_EQ(Projected(f.fields, {0}), Projected(w.fields, {0}));
  EXPECT_EQ((*other)->counters().shards_downloaded, kGroups);
  EXPECT_TRUE(FileExists(JoinPath(cache.path(), RowGroupPieceName("a.parquet", 8, {"id"}, TagOf(t.parquet.path(), "a.parquet")))));
  auto kept = ReadFile(JoinPath(cache.path(), RowGroupPieceName("a.parquet", 8, {"text", "score"}, TagOf(t.parquet.path(), "a.parquet"))));
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(*kept, *piece);

  // A column no file has is named before any download.
  ScratchDir fresh;
  auto bad = open(fresh.path(), {"text", "nope"});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kNotFound);
  EXPECT_NE(bad.status().message().find(
                "a.parquet: no column \"nope\" (its columns: id, label, score, text, tokens)"),
            std::string::npos)
      << bad.status().message();
  EXPECT_FALSE(fs::exists(fs::path(fresh.path()) / ".parquet_row_groups"));

  // In place (no remote) the same columns are read.
  DatasetOptions local = ParquetOptions(t.parquet.path());
  local.streams[0].parquet.emplace();
  local.streams[0].parquet->columns = {"tokens", "id"};
  auto in_place = StreamingDataset::Open(local);
  ASSERT_TRUE(in_place.ok()) << in_place.status().message();
  ASSERT_TRUE((*in_place)->Get(70, &f).ok());
  ASSERT_TRUE((*whole)->Get(70, &w).ok());
  EXPECT_EQ(Projected(f.fields, {0, 1}), Projected(w.fields, {4, 0}));
}

// The rows read through a remote: a plain folder path (ranged reads of the
// files), each row group its own cache file ending with its file's footer,
// read from the file again: the node keeps no footer store of a folder on
// a local disk (KeepsParquetFooterStore).
TEST(ParquetStream, FolderRemoteFetchesEachRowGroupAsAPiece) {
  Twins t;
  ScratchDir cache;
  DatasetOptions o = ParquetOptions(cache.path(), t.parquet.path());
  o.plan.shuffle = true;
  o.plan.shuffle_seed = 9;
  auto ds = StreamingDataset::Open(o);
  ASSERT_TRUE(ds.ok()) << ds.status().message();
  std::vector<std::string> bytes;
  std::vector<int64_t> ids = testing::ReadEpoch(**ds, 0, 0, 0, 1, 4, &bytes);
  ASSERT_EQ(ids.size(), kRows);
  for (size_t i = 0; i < ids.size(); ++i) EXPECT_EQ(bytes[i], t.rows[ids[i]]) << ids[i];
  // Each group cached alone: the chunks' span and the footer tail.
  const std::string piece = JoinPath(cache.path(), RowGroupPieceName("part=b/c.parquet", 8, {}, TagOf(t.parquet.path(), "part=b/c.parquet")));
  ASSERT_TRUE(FileExists(piece));
  auto remote = OpenRemoteSource(t.parquet.path(), StoreOptions{});
  ASSERT_TRUE(remote.ok()) << remote.status().message();
  ASSERT_TRUE((*remote)->OnLocalDisk());  // a scratch folder's file system
  EXPECT_FALSE(FileExists(ParquetFooterStorePath(JoinPath(cache.path(), ".sluice"))));
  EXPECT_TRUE(FileExists(JoinPath(cache.path(), ".sluice/parquet_index.bin")));
  auto fixture = ReadFile(kFixture);
  ASSERT_TRUE(fixture.ok());
  const std::string tail = fixture->substr(fixture->size() - (FixtureFooter().metadata_length + 8));
  auto piece_bytes = ReadFile(piece);
  ASSERT_TRUE(piece_bytes.ok());
  EXPECT_LT(piece_bytes->size(), fixture->size() / 2);
  EXPECT_EQ(piece_bytes->substr(piece_bytes->size() - tail.size()), tail);
  EXPECT_EQ((*ds)->counters().shards_downloaded, kGroups);
}

// The stream's index over many files (their footers decoded on several
// threads, a claim of files at a time): every file's row groups in the
// listing's order, each entry its file's piece; and, with footers that do
// not decode, the error names the first such file in that order, never a
// later one a thread reached first.
TEST(ParquetStream, ManyFilesIndexInListingOrderAndTheFirstBadFooterIsTheError) {
  ScratchDir remote_dir, cache;
  auto fixture = ReadFile(kFixture);
  ASSERT_TRUE(fixture.ok());
  constexpr size_t kFiles = 700;
  auto name = [](size_t i) {
    std::string n = std::to_string(i);
    return "f" + std::string(4 - n.size(), '0') + n + ".parquet";
  };
  for (size_t i = 0; i < kFiles; ++i) {
    ASSERT_TRUE(WriteFileAtomic(JoinPath(remote_dir.path(), name(i)), *fixture).ok());
  }
  auto remote = OpenRemoteSource(remote_dir.path(), StoreOptions{});
  ASSERT_TRUE(remote.ok()) << remote.status().message();
  StreamOptions stream;
  stream.local = cache.path();
  stream.remote = remote_dir.path();
  auto index = LoadParquetStreamIndex(stream, FileDatasetOptions{}, remote->get(),
                                      std::chrono::seconds(20));
  ASSERT_TRUE(index.ok()) << index.status().message();
  ASSERT_EQ(index->shards.size(), kFiles * 9);
  for (size_t k = 0; k < index->shards.size(); ++k) {
    const ShardEntry& e = index->shards[k];
    ASSERT_TRUE(e.piece && e.row_group) << k;
    ASSERT_EQ(e.piece->file, name(k / 9)) << k;
    ASSERT_EQ(*e.row_group, k % 9) << k;
    ASSERT_EQ(e.raw_data.basename,
              RowGroupPieceName(name(k / 9), k % 9, {}, TagOf(remote_dir.path(), name(k / 9))))
        << k;
  }
  // Two files whose footer is its length and magic after bytes no decoder
  // takes: the store holds them (the length is right); the index fails on
  // the first.
  const std::string bad = "PAR1" + std::string(200, '\xff') + std::string("\xc8\0\0\0", 4) + "PAR1";
  for (size_t i : {611, 333}) {
    ASSERT_TRUE(WriteFileAtomic(JoinPath(remote_dir.path(), name(i)), bad).ok());
  }
  ScratchDir cache2;
  stream.local = cache2.path();
  index = LoadParquetStreamIndex(stream, FileDatasetOptions{}, remote->get(),
                                 std::chrono::seconds(20));
  ASSERT_FALSE(index.ok());
  EXPECT_NE(index.status().message().find(name(333)), std::string::npos) << index.status().message();
  EXPECT_EQ(index.status().message().find(name(611)), std::string::npos) << index.status().message();
}

// The table the engine makes of a remote Parquet folder (each file's pieces
// decoded on several threads and added to the table as they come, no
// entry made) is byte for byte the table of the stream's index, and holds
// the shards a serial read of every footer gives, in file order: 1,500
// files of four fixtures (1 to 9 row groups, four schemas) in runs of
// five, so that a decoding thread both keeps a schema (and its shard
// rows) file after file and meets another. With two bad footers, the
// first in file order is the error.
TEST(ParquetStream, TheTableMadeOnThreadsIsTheSerialIndexsAndTheFirstBadFooterIsTheError) {
  ScratchDir remote_dir, cache, cache2, cache3;
  std::vector<std::string> fixtures;
  for (const char* name : {"pa26_many_row_groups", "pa26_codec_none", "duckdb_default", "hf_text"}) {
    auto bytes = ReadFile(std::string(SLUICE_TEST_DATA_DIR) + "/parquet/" + name + ".parquet");
    ASSERT_TRUE(bytes.ok()) << name;
    fixtures.push_back(*bytes);
  }
  constexpr size_t kFiles = 1500;
  auto name = [](size_t i) {
    std::string n = std::to_string(i);
    return "g" + std::string(4 - n.size(), '0') + n + ".parquet";
  };
  std::vector<ListedFile> files;
  for (size_t i = 0; i < kFiles; ++i) {
    // Not in the fixtures' cycle: neighbouring runs differ in schema and groups.
    const std::string& bytes = fixtures[(i / 5 * 7 / 3) % fixtures.size()];
    ASSERT_TRUE(WriteFileAtomic(JoinPath(remote_dir.path(), name(i)), bytes).ok());
    files.push_back({name(i), bytes.size(), ""});
  }
  auto remote = OpenRemoteSource(remote_dir.path(), StoreOptions{});
  ASSERT_TRUE(remote.ok()) << remote.status().message();
  StreamOptions stream;
  stream.local = cache.path();
  stream.remote = remote_dir.path();
  auto table = LoadParquetStreamTable(stream, FileDatasetOptions{}, remote->get(),
                                      std::chrono::seconds(20));
  ASSERT_TRUE(table.ok()) << table.status().message();
  stream.local = cache2.path();
  auto index = LoadParquetStreamIndex(stream, FileDatasetOptions{}, remote->get(),
                                      std::chrono::seconds(20));
  ASSERT_TRUE(index.ok()) << index.status().message();
  auto of_index = ShardTable::FromIndex(*index);
  ASSERT_TRUE(of_index.ok());
  EXPECT_TRUE(table->Serialize(7) == of_index->Serialize(7)) << "the tables' bytes differ";
  // Every footer read and decoded in file order on this thread.
  auto serial = parquet::IndexOfParquetFiles(
      files, [&](const std::string& path, uint64_t offset, uint64_t size, std::string* out) {
        auto bytes = ReadFile(JoinPath(remote_dir.path(), path));
        if (!bytes.ok()) return bytes.status();
        *out = bytes->substr(offset, size);
        return Status::Ok();
      });
  ASSERT_TRUE(serial.ok()) << serial.status().message();
  ASSERT_EQ(table->size(), serial->shards.size());
  EXPECT_GT(table->num_configs(), 1u);
  for (size_t k = 0; k < table->size(); ++k) {
    const ShardEntry e = table->entry(k);
    const ShardEntry& s = serial->shards[k];
    ASSERT_EQ(e.format, s.format) << k;
    ASSERT_EQ(e.column_names, s.column_names) << k;
    ASSERT_EQ(e.column_encodings, s.column_encodings) << k;
    ASSERT_EQ(e.samples, s.samples) << k;
    ASSERT_EQ(e.row_group, s.row_group) << k;
    ASSERT_TRUE(e.piece) << k;
    ASSERT_EQ(e.piece->file, s.raw_data.basename) << k;
    ASSERT_EQ(e.piece->file_bytes, s.raw_data.bytes) << k;
    ASSERT_EQ(e.raw_data.basename,
              RowGroupPieceName(s.raw_data.basename, *s.row_group, {},
                                TagOf(remote_dir.path(), s.raw_data.basename)))
        << k;
    ASSERT_EQ(e.raw_data.bytes, e.piece->length + e.piece->tail_bytes) << k;
  }
  const std::string bad = "PAR1" + std::string(200, '\xff') + std::string("\xc8\0\0\0", 4) + "PAR1";
  for (size_t i : {1111, 444}) {
    ASSERT_TRUE(WriteFileAtomic(JoinPath(remote_dir.path(), name(i)), bad).ok());
  }
  stream.local = cache3.path();
  table = LoadParquetStreamTable(stream, FileDatasetOptions{}, remote->get(),
                                 std::chrono::seconds(20));
  ASSERT_FALSE(table.ok());
  EXPECT_NE(table.status().message().find(name(444)), std::string::npos) << table.status().message();
  EXPECT_EQ(table.status().message().find(name(1111)), std::string::npos) << table.status().message();
}

// The footers decoded for the table skip what an index does not read
// (created_by among it) but still walk it: 400 files, two with created_by's
// length past the footer's end; the table's error is the first in file
// order and names it and the field, on the decode threads as serially.
TEST(ParquetStream, ACorruptSkippedFooterFieldAmongManyFilesNamesTheFirstSuchFile) {
  ScratchDir remote_dir, cache;
  auto good = ReadFile(std::string(SLUICE_TEST_DATA_DIR) + "/parquet/pa26_codec_none.parquet");
  ASSERT_TRUE(good.ok());
  // created_by's header byte and length: 0x18 (field 6, binary), 32.
  const size_t at = good->rfind("parquet-cpp-arrow version");
  ASSERT_NE(at, std::string::npos);
  ASSERT_EQ((*good)[at - 2], '\x18');
  ASSERT_EQ((*good)[at - 1], '\x20');
  std::string bad = *good;
  bad[at - 1] = '\x7f';  // 127 bytes: fewer remain before the footer's end
  auto name = [](size_t i) { return "f" + std::to_string(1000 + i) + ".parquet"; };
  std::vector<ListedFile> files;
  for (size_t i = 0; i < 400; ++i) {
    const std::string& bytes = i == 123 || i == 301 ? bad : *good;
    ASSERT_TRUE(WriteFileAtomic(JoinPath(remote_dir.path(), name(i)), bytes).ok());
    files.push_back({name(i), bytes.size(), ""});
  }
  auto remote = OpenRemoteSource(remote_dir.path(), StoreOptions{});
  ASSERT_TRUE(remote.ok()) << remote.status().message();
  StreamOptions stream;
  stream.local = cache.path();
  stream.remote = remote_dir.path();
  auto table = LoadParquetStreamTable(stream, FileDatasetOptions{}, remote->get(),
                                      std::chrono::seconds(20));
  ASSERT_FALSE(table.ok());
  EXPECT_EQ(table.status().code(), StatusCode::kCorrupt);
  const std::string& message = table.status().message();
  EXPECT_NE(message.find(name(123) + ": footer: FileMetaData field 6: "), std::string::npos)
      << message;
  EXPECT_EQ(message.find(name(301)), std::string::npos) << message;
  auto serial = parquet::IndexOfParquetFiles(
      files, [&](const std::string& path, uint64_t offset, uint64_t size, std::string* out) {
        auto bytes = ReadFile(JoinPath(remote_dir.path(), path));
        if (!bytes.ok()) return bytes.status();
        *out = bytes->substr(offset, size);
        return Status::Ok();
      });
  ASSERT_FALSE(serial.ok());
  EXPECT_NE(message.find(serial.status().message()), std::string::npos)
      << message << " / " << serial.status().message();
}

// The store written as its tails are read (in path order, at most a window
// of them held) is byte for byte the store of every tail read first and
// laid out at once (SerializeParquetFooterStore): over 2,500 files of
// several fixtures, more than the window, in an order other than the path's,
// some with etags; and made again over a changed listing from the old one.
TEST(ParquetFooterStore, AStoreWrittenAsItsTailsComeIsTheStoreOfAllTailsAtOnce) {
  ScratchDir remote_dir, state;
  std::vector<std::string> fixtures;
  for (const char* name : {"pa26_many_row_groups", "pa26_codec_none", "duckdb_default", "hf_text"}) {
    auto bytes = ReadFile(std::string(SLUICE_TEST_DATA_DIR) + "/parquet/" + name + ".parquet");
    ASSERT_TRUE(bytes.ok()) << name;
    fixtures.push_back(*bytes);
  }
  std::vector<ListedFile> files;
  for (size_t i = 0; i < 2500; ++i) {
    const std::string& bytes = fixtures[i % fixtures.size()];
    const std::string name = "d" + std::to_string(i % 7) + "/f" + std::to_string(2500 - i) + ".parquet";
    std::filesystem::create_directories(std::filesystem::path(remote_dir.path()) / ("d" + std::to_string(i % 7)));
    ASSERT_TRUE(WriteFileAtomic(JoinPath(remote_dir.path(), name), bytes).ok());
    files.push_back({name, bytes.size(), i % 3 == 0 ? TagOf(remote_dir.path(), name) : ""});
  }
  auto remote = OpenRemoteSource(remote_dir.path(), StoreOptions{});
  ASSERT_TRUE(remote.ok()) << remote.status().message();
  auto expected = [&](const std::vector<ListedFile>& listed) {
    std::vector<std::string> tails;
    for (const ListedFile& f : listed) {
      auto tail = ReadParquetTail(**remote, f.path, f.path, *f.size, f.etag);
      EXPECT_TRUE(tail.ok()) << tail.status().message();
      tails.push_back(tail.ok() ? *tail : "");
    }
    return SerializeParquetFooterStore("src", ListingFingerprint(listed), listed, tails);
  };
  const std::string path = ParquetFooterStorePath(state.path());
  auto made = LoadOrMakeParquetFooterStore(path, state.path(), "src", files, "", **remote,
                                           std::chrono::seconds(5));
  ASSERT_TRUE(made.ok()) << made.status().message();
  auto bytes = ReadFile(path);
  ASSERT_TRUE(bytes.ok());
  EXPECT_TRUE(*bytes == expected(files)) << "the stored bytes differ";
  // Another listing: a file fewer, one more; the kept tails come from the
  // old store's mapping, the others are read.
  files.erase(files.begin() + 10);
  ASSERT_TRUE(WriteFileAtomic(JoinPath(remote_dir.path(), "z.parquet"), fixtures[0]).ok());
  files.push_back({"z.parquet", fixtures[0].size(), TagOf(remote_dir.path(), "z.parquet")});
  made = LoadOrMakeParquetFooterStore(path, state.path(), "src", files, "", **remote,
                                      std::chrono::seconds(5));
  ASSERT_TRUE(made.ok()) << made.status().message();
  EXPECT_EQ(made->size(), 2500u);
  bytes = ReadFile(path);
  ASSERT_TRUE(bytes.ok());
  EXPECT_TRUE(*bytes == expected(files)) << "the stored bytes differ";
}

// The footer store made anew over another listing keeps the tails of the
// files listed with the same path, size and etag, and reads every other
// file's again: one with a new etag, and one whose etag is unknown.
TEST(ParquetFooterStore, MadeAnewItReadsOnlyTheFilesWhoseEtagIsNewOrUnknown) {
  ScratchDir remote_dir, state;
  auto fixture = ReadFile(kFixture);
  ASSERT_TRUE(fixture.ok());
  for (const char* name : {"a.parquet", "b.parquet", "c.parquet"}) {
    ASSERT_TRUE(WriteFileAtomic(JoinPath(remote_dir.path(), name), *fixture).ok());
  }
  auto remote = OpenRemoteSource(remote_dir.path(), StoreOptions{});
  ASSERT_TRUE(remote.ok()) << remote.status().message();
  const std::string path = ParquetFooterStorePath(state.path());
  const uint64_t size = fixture->size();
  auto load = [&](const std::vector<ListedFile>& files) {
    return LoadOrMakeParquetFooterStore(path, state.path(), "src", files, "", **remote,
                                        std::chrono::seconds(5));
  };
  // Each file listed with its tag as a folder's listing gives it (the tail
  // reads compare it): a rewritten file has a new one.
  auto tag = [&](const char* name) { return TagOf(remote_dir.path(), name); };
  const std::string a1 = tag("a.parquet"), b1 = tag("b.parquet");
  auto first = load({{"a.parquet", size, a1}, {"b.parquet", size, b1}, {"c.parquet", size}});
  ASSERT_TRUE(first.ok()) << first.status().message();
  auto listed = [](const Result<ParquetFooterStore>& store, std::string_view path) {
    auto f = store->Find(path);
    EXPECT_TRUE(f.ok()) << f.status().message();
    return f.ok() ? std::make_pair(f->size, std::string(f->etag)) : std::make_pair(uint64_t{0}, std::string("?"));
  };
  auto tail_of = [](const Result<ParquetFooterStore>& store, std::string_view path) {
    auto f = store->Find(path);
    return f.ok() ? std::string(f->tail) : std::string("?");
  };
  EXPECT_EQ(listed(first, "a.parquet"), std::make_pair(size, a1));
  EXPECT_EQ(listed(first, "c.parquet"), std::make_pair(size, std::string()));
  // Every file's bytes now something else of the same size: a tail read
  // again is not the fixture's.
  std::string other(size, 'x');
  for (const char* name : {"a.parquet", "b.parquet", "c.parquet"}) {
    ASSERT_TRUE(WriteFileAtomic(JoinPath(remote_dir.path(), name), other).ok());
  }
  auto second = load({{"a.parquet", size, tag("a.parquet")}, {"b.parquet", size, b1}, {"c.parquet", size}});
  ASSERT_FALSE(second.ok());
  // a (new etag) is read first and named; b is not read at all (see below).
  EXPECT_EQ(second.status().code(), StatusCode::kCorrupt) << second.status().message();
  EXPECT_NE(second.status().message().find("a.parquet"), std::string::npos)
      << second.status().message();
  for (const char* name : {"a.parquet", "c.parquet"}) {
    ASSERT_TRUE(WriteFileAtomic(JoinPath(remote_dir.path(), name), *fixture).ok());
  }
  // b keeps its etag: its tail comes from the old store, though its bytes
  // on the remote are no Parquet file any more.
  const std::string a3 = tag("a.parquet");
  auto third = load({{"a.parquet", size, a3}, {"b.parquet", size, b1}, {"c.parquet", size}});
  ASSERT_TRUE(third.ok()) << third.status().message();
  EXPECT_EQ(tail_of(third, "b.parquet"), tail_of(first, "b.parquet"));
  EXPECT_EQ(tail_of(third, "b.parquet"), fixture->substr(size - tail_of(first, "b.parquet").size()));
  EXPECT_EQ(listed(third, "a.parquet"), std::make_pair(size, a3));
  // c's etag is unknown: read again whenever the store is made anew (here
  // for a's new etag), so a c that is no Parquet file any more fails.
  ASSERT_TRUE(WriteFileAtomic(JoinPath(remote_dir.path(), "a.parquet"), *fixture).ok());
  ASSERT_NE(tag("a.parquet"), a3);
  ASSERT_TRUE(WriteFileAtomic(JoinPath(remote_dir.path(), "c.parquet"), other).ok());
  auto fourth = load({{"a.parquet", size, tag("a.parquet")}, {"b.parquet", size, b1}, {"c.parquet", size}});
  ASSERT_FALSE(fourth.ok());
  EXPECT_NE(fourth.status().message().find("c.parquet"), std::string::npos)
      << fourth.status().message();
}

// A Hugging Face dataset's Parquet folder (what most datasets on the Hub
// are), through the Hub's tree API and its CDN redirects (FakeHfHub): the
// rows and order of the same files read from a folder, with a private
// repository's token sent to the Hub and never to the CDN.
TEST(ParquetStream, HfDatasetFolderStreamsAsTheSameFilesDo) {
  Twins t;
  testing::FakeHfHub hub;
  hub.require_token = true;
  auto fixture = ReadFile(kFixture);
  ASSERT_TRUE(fixture.ok());
  const std::string repo = "datasets/org/name";
  hub.Put(repo, "main", "README.md", "# name");
  hub.Put(repo, "main", "data/a.parquet", *fixture);
  hub.Put(repo, "main", "data/part=b/c.parquet", *fixture);
  hub.Put(repo, "main", "data/_SUCCESS", "");
  auto env = testing::CleanStoreEnv();
  env["HF_ENDPOINT"] = hub.url();
  env["HF_TOKEN"] = testing::FakeHfHub::kToken;
  testing::ScopedEnv scoped(env);

  std::vector<int64_t> want_ids;
  std::vector<std::string> want;
  {
    ScratchDir cache;
    DatasetOptions o = ParquetOptions(cache.path(), t.parquet.path());
    o.plan.shuffle = true;
    o.plan.shuffle_seed = 5;
    auto ds = StreamingDataset::Open(o);
    ASSERT_TRUE(ds.ok()) << ds.status().message();
    want_ids = testing::ReadEpoch(**ds, 0, 0, 0, 1, 4, &want);
  }
  ScratchDir cache;
  DatasetOptions o = ParquetOptions(cache.path(), "hf://" + repo + "/data");
  o.plan.shuffle = true;
  o.plan.shuffle_seed = 5;
  auto ds = StreamingDataset::Open(o);
  ASSERT_TRUE(ds.ok()) << ds.status().message();
  EXPECT_EQ((*ds)->num_samples(), kRows);
  EXPECT_EQ((*ds)->num_shards(), kGroups);
  std::vector<std::string> got;
  EXPECT_EQ(testing::ReadEpoch(**ds, 0, 0, 0, 1, 4, &got), want_ids);
  EXPECT_EQ(got, want);
  EXPECT_GT(hub.cdn_gets(), 0);
  for (const std::string& auth : hub.cdn_authorizations()) EXPECT_EQ(auth, "");
}

// The range of the footer tail of a copy of kFixture whose stat was
// `listed`, in an error's words: "<open>first<sep>end<close>".
std::string FooterRange(const struct stat& listed, const char* open, const char* sep,
                        const char* close) {
  const uint64_t size = static_cast<uint64_t>(listed.st_size);
  const uint64_t first = size - (FixtureFooter().metadata_length + 8);
  return open + std::to_string(first) + sep + std::to_string(size) + close;
}

// A file changed since the node listed it (its LocalFileTag: inode and
// mtime) is named, with its row group, range and both tags, when a group is
// fetched, after one read (its footer's, read from the file again: a local
// folder's node keeps no footer store); one gone from a folder read in
// place is named too.
TEST(ParquetStream, AChangedOrMissingFileIsNamedAtFetch) {
  Twins t;
  ScratchDir cache;
  auto ds = StreamingDataset::Open(ParquetOptions(cache.path(), t.parquet.path()));
  ASSERT_TRUE(ds.ok()) << ds.status().message();
  const std::string c = t.parquet.path() + "/part=b/c.parquet";
  auto listed = Env::Default()->Stat(c);
  ASSERT_TRUE(listed.ok());
  // The fixture's row groups lie in [4, 7978), its footer after them: 7500
  // bytes cut the last group short (and change the mtime).
  fs::resize_file(c, 7500);
  auto now = Env::Default()->Stat(c);
  ASSERT_TRUE(now.ok());
  SampleFields f;
  Status got = (*ds)->Get(119, &f);  // row group 8 of part=b/c.parquet
  EXPECT_EQ(got.code(), StatusCode::kCorrupt) << got.message();
  EXPECT_EQ(got.message(), "shard cache '" + cache.path() + "': fetching shard 17 "
                           "'" + RowGroupPieceName("part=b/c.parquet", 8, {},
                                                                       LocalFileTag(*listed)) +
                           "': part=b/c.parquet: row group 8, bytes " + FooterRange(*listed, "[", ", ", ")") +
                           " of " + c + ": " + c +
                               ": changed since it was listed (ETag " + LocalFileTag(*now) +
                               ", listed " + LocalFileTag(*listed) + "); bytes " +
                               FooterRange(*listed, "", "..", "") + " not read");
  EXPECT_TRUE((*ds)->Get(0, &f).ok());  // the other file is whole

  ScratchDir folder;
  WriteParquetFolder(folder.path());
  auto in_place = StreamingDataset::Open(ParquetOptions(folder.path()));
  ASSERT_TRUE(in_place.ok()) << in_place.status().message();
  fs::remove(fs::path(folder.path()) / "a.parquet");
  got = (*in_place)->Get(0, &f);
  EXPECT_FALSE(got.ok());
  EXPECT_NE(got.message().find(JoinPath(folder.path(), "a.parquet")), std::string::npos)
      << got.message();
}

// Appends `bytes` to the file at `path` in place (its inode kept).
void Grow(const std::string& path, const std::string& bytes) {
  std::FILE* f = std::fopen(path.c_str(), "ab");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), f), bytes.size());
  ASSERT_EQ(std::fclose(f), 0);
}

// Grow, then puts the file's mtime back: its LocalFileTag (inode, mtime)
// stays the one it was listed with, only its size tells that it changed.
void GrowKeepingItsTag(const std::string& path, const std::string& bytes) {
  auto before = Env::Default()->Stat(path);
  ASSERT_TRUE(before.ok());
  ASSERT_NO_FATAL_FAILURE(Grow(path, bytes));
  const struct timespec times[2] = {before->st_atim, before->st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
  auto after = Env::Default()->Stat(path);
  ASSERT_TRUE(after.ok());
  ASSERT_EQ(LocalFileTag(*after), LocalFileTag(*before));
  ASSERT_EQ(static_cast<uint64_t>(after->st_size), static_cast<uint64_t>(before->st_size) + bytes.size());
}

// A file grown in place since the node listed it, its tag (inode, mtime)
// kept: every row group read asks for the size the file was listed with
// (the footer's), so the read fails at once naming the file's path, its
// size now and the listed one. Before the reads passed the size, only the
// tag was compared, and the grown file's old bytes were read as if whole.
TEST(ParquetStream, AFileOfAnotherSizeIsNamedAtFetchEvenWithItsTagKept) {
  Twins t;
  ScratchDir cache;
  auto ds = StreamingDataset::Open(ParquetOptions(cache.path(), t.parquet.path()));
  ASSERT_TRUE(ds.ok()) << ds.status().message();
  const std::string c = t.parquet.path() + "/part=b/c.parquet";
  const uint64_t listed = fs::file_size(c);
  auto tag = Env::Default()->Stat(c);
  ASSERT_TRUE(tag.ok());
  ASSERT_NO_FATAL_FAILURE(GrowKeepingItsTag(c, std::string(100, 'x')));
  SampleFields f;
  Status got = (*ds)->Get(119, &f);  // row group 8 of part=b/c.parquet
  EXPECT_EQ(got.code(), StatusCode::kCorrupt) << got.message();
  EXPECT_EQ(got.message(), "shard cache '" + cache.path() + "': fetching shard 17 '" +
                               RowGroupPieceName("part=b/c.parquet", 8, {}, LocalFileTag(*tag)) +
                               "': part=b/c.parquet: row group 8, bytes " +
                               FooterRange(*tag, "[", ", ", ")") + " of " + c +
                               ": " + c + ": the object is " + std::to_string(listed + 100) +
                               " bytes, index.json says " + std::to_string(listed) +
                               " (the remote changed since it was indexed?)");
  EXPECT_TRUE((*ds)->Get(0, &f).ok());  // the other file is whole
}

TEST(ParquetStream, RowGroupAboveCacheLimitIsAnErrorBeforeAnyDownload) {
  Twins t;
  ScratchDir cache;
  DatasetOptions o = ParquetOptions(cache.path(), t.parquet.path());
  o.cache_limit = 100;
  auto ds = StreamingDataset::Open(o);
  ASSERT_FALSE(ds.ok());
  const std::string& m = ds.status().message();
  EXPECT_NE(m.find("cache_limit 100 bytes cannot hold"), std::string::npos) << m;
  EXPECT_NE(m.find(": row group "), std::string::npos) << m;
  EXPECT_NE(m.find(" of a.parquet ("), std::string::npos) << m;
  EXPECT_NE(m.find("bytes of column chunks and a "), std::string::npos) << m;
  EXPECT_FALSE(fs::exists(fs::path(cache.path()) / ".parquet_row_groups"));

  // The limit counts the chunks of the columns asked for: a group of all
  // columns does not fit where its "id" chunk does.
  const parquet::FileFooter footer = FixtureFooter();
  uint64_t largest_all = 0, largest_id = 0;
  for (const auto& group : footer.chunk_ranges) {
    uint64_t begin = UINT64_MAX, end = 0;
    for (const parquet::ByteRange& r : group) {
      begin = std::min(begin, r.offset);
      end = std::max(end, r.offset + r.size);
    }
    largest_all = std::max(largest_all, end - begin);
    largest_id = std::max(largest_id, group[footer.schema.fields[0].first_leaf].size);
  }
  const uint64_t tail = footer.metadata_length + 8;
  ASSERT_LT(largest_id, largest_all);
  o.cache_limit = largest_id + tail;
  EXPECT_EQ(StreamingDataset::Open(o).status().code(), StatusCode::kInvalidArgument);
  o.streams[0].parquet.emplace();
  o.streams[0].parquet->columns = {"id"};
  auto ids_only = StreamingDataset::Open(o);
  ASSERT_TRUE(ids_only.ok()) << ids_only.status().message();
  std::vector<int64_t> ids = testing::ReadEpoch(**ids_only, 0, 0, 0, 1, 4, nullptr);
  EXPECT_EQ(ids.size(), kRows);
  o.cache_limit = largest_id + tail - 1;
  auto too_small = StreamingDataset::Open(o);
  ASSERT_FALSE(too_small.ok());
  EXPECT_NE(too_small.status().message().find("(" + std::to_string(largest_id) +
                                               " bytes of column chunks and a " +
                                               std::to_string(tail) + "-byte footer)"),
            std::string::npos)
      << too_small.status().message();
}

// Spark's output with a DBIO commit marker naming two of its three part
// files: only those stream, in place and from a remote.
TEST(ParquetStream, SparkOutputStreamsOnlyCommittedFiles) {
  ScratchDir dir;
  std::vector<std::string> parts;
  for (const auto& e : fs::directory_iterator(std::string(SLUICE_TEST_DATA_DIR) + "/parquet/spark_out")) {
    const std::string name = e.path().filename().string();
    if (name.size() > 8 && name.substr(name.size() - 8) == ".parquet") parts.push_back(name);
    fs::copy_file(e.path(), fs::path(dir.path()) / name);
  }
  std::sort(parts.begin(), parts.end());
  ASSERT_EQ(parts.size(), 3u);  // 10, 17 and 18 rows
  ASSERT_TRUE(WriteFileAtomic(JoinPath(dir.path(), "_started_7"), "").ok());
  ASSERT_TRUE(WriteFileAtomic(JoinPath(dir.path(), "_committed_7"),
                              "{\"added\":[\"" + parts[0] + "\",\"" + parts[2] +
                                  "\"],\"removed\":[]}")
                  .ok());
  ScratchDir cache;
  for (const std::string& remote : {std::string(), dir.path()}) {
    SCOPED_TRACE(remote.empty() ? "in place" : "from a folder remote");
    auto ds = StreamingDataset::Open(ParquetOptions(remote.empty() ? dir.path() : cache.path(), remote));
    ASSERT_TRUE(ds.ok()) << ds.status().message();
    EXPECT_EQ((*ds)->num_samples(), 28u);
    EXPECT_EQ((*ds)->num_shards(), 2u);
    // A glob naming the uncommitted file is an error naming it.
    DatasetOptions named = ParquetOptions(remote.empty() ? dir.path() : cache.path(), remote);
    named.streams[0].parquet.emplace();
    named.streams[0].parquet->selection.globs = {parts[1]};
    auto refused = StreamingDataset::Open(named);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.status().message().find("file \"" + parts[1] + "\", which glob"),
              std::string::npos)
        << refused.status().message();
  }
}

constexpr char kKeyId[] = "SLUICEPARQUETKEY";
constexpr char kSecret[] = "parquet-s3cr3t-never-printed";

// Over s3rver: a file replaced by another of the same size (a new ETag)
// between two opens, the listing made anew in between (.sluice/listing.json
// deleted: a listing is the node's until then), is read anew: its footer
// read again and its row groups fetched again, not the pieces cached from
// the old file (whose names carry the old ETag).
// A file of `remote` (uploaded from a folder by `upload`) replaced by
// another of the same size (a new ETag) between two opens, the listing made
// anew in between (.sluice/listing.json deleted: a listing is the node's
// until then), is read anew: its footer read again and its row groups
// fetched again, not the pieces cached from the old file (whose names carry
// the old ETag). Every row exact before and after.
void ExpectReplacedFileReadAnew(const std::string& remote,
                                const std::function<int(const std::string&)>& upload) {
  // Uncompressed and without dictionaries: a string's bytes are in the file
  // as they are (in its page and its column's statistics), so changing
  // their case changes values and nothing else.
  const std::string fixture =
      std::string(SLUICE_TEST_DATA_DIR) + "/parquet/pa26_types_plain_uncompressed.parquet";
  ScratchDir old_dir, new_dir, cache;
  auto old_bytes = ReadFile(fixture);
  ASSERT_TRUE(old_bytes.ok());
  std::string new_bytes = *old_bytes;
  size_t changed = 0;
  for (size_t at = 0; (at = new_bytes.find("non-BMP", at)) != std::string::npos; ++changed) {
    new_bytes.replace(at, 3, "NON");
  }
  ASSERT_GT(changed, 0u);
  ASSERT_EQ(new_bytes.size(), old_bytes->size());
  ASSERT_TRUE(WriteFileAtomic(JoinPath(old_dir.path(), "a.parquet"), *old_bytes).ok());
  ASSERT_TRUE(WriteFileAtomic(JoinPath(new_dir.path(), "a.parquet"), new_bytes).ok());
  ASSERT_EQ(upload(old_dir.path()), 0);

  auto options = [](const std::string& local, const std::string& remote) {
    DatasetOptions o = ParquetOptions(local, remote);
    o.peek_first_sample = true;
    o.streams[0].parquet.emplace();
    o.streams[0].parquet->columns = {"string", "int64"};
    return o;
  };
  // Every row's fields by id, from one epoch.
  auto rows_of = [](const DatasetOptions& o) {
    std::map<int64_t, std::string> rows;
    auto ds = StreamingDataset::Open(o);
    EXPECT_TRUE(ds.ok()) << ds.status().message();
    if (!ds.ok()) return rows;
    std::vector<std::string> bytes;
    std::vector<int64_t> ids = testing::ReadEpoch(**ds, 0, 0, 0, 1, 4, &bytes);
    for (size_t i = 0; i < ids.size(); ++i) rows[ids[i]] = bytes[i];
    return rows;
  };
  const auto old_rows = rows_of(options(old_dir.path(), ""));
  const auto new_rows = rows_of(options(new_dir.path(), ""));
  ASSERT_EQ(old_rows.size(), 48u);
  ASSERT_EQ(new_rows.size(), 48u);
  ASSERT_NE(old_rows.at(2), new_rows.at(2));
  EXPECT_NE(new_rows.at(2).find("NON-BMP"), std::string::npos);

  EXPECT_EQ(rows_of(options(cache.path(), remote)), old_rows);
  ASSERT_EQ(upload(new_dir.path()), 0);
  ASSERT_TRUE(Env::Default()->Remove(JoinPath(cache.path(), ".sluice/listing.json")).ok());
  EXPECT_EQ(rows_of(options(cache.path(), remote)), new_rows);
  // The old file's piece and the new one's, side by side under their
  // ETags' names.
  size_t pieces = 0;
  for (const auto& e : fs::directory_iterator(fs::path(cache.path()) / ".parquet_row_groups")) {
    EXPECT_EQ(e.path().filename().string().rfind("a.parquet@0.e", 0), 0u) << e.path();
    ++pieces;
  }
  EXPECT_EQ(pieces, 2u);
}

TEST(ParquetStreamMultiProcess, S3rverFileReplacedAtTheSameSizeIsReadAnew) {
  std::string why = testing::NodeServersUnavailableReason();
  if (!why.empty()) GTEST_SKIP() << why;
  ScratchDir server_dir;
  auto server = testing::StartS3rver(server_dir.path(), kKeyId, kSecret, {"bkt"});
  ASSERT_NE(server, nullptr) << "s3rver did not start";
  testing::ScopedEnv env(testing::S3rverEnv(server->port(), kKeyId, kSecret));
  ExpectReplacedFileReadAnew("s3://bkt/t", [&](const std::string& dir) {
    const int rc = testing::UploadTree("s3://bkt/t", dir);
    EXPECT_EQ(rc, 0) << server->Log();
    return rc;
  });
}

// The same over azurite (azure://): its listing's Etag names the pieces and
// a replaced blob's new one is noticed.
TEST(ParquetStreamMultiProcess, AzuriteFileReplacedAtTheSameSizeIsReadAnew) {
  std::string why = testing::NodeServersUnavailableReason();
  if (!why.empty()) GTEST_SKIP() << why;
  ScratchDir server_dir;
  auto server = testing::StartAzurite(server_dir.path());
  ASSERT_NE(server, nullptr) << "azurite did not start";
  testing::ScopedEnv env(testing::AzuriteEnv(server->port()));
  const int port = server->port();
  ExpectReplacedFileReadAnew("azure://tbl/t", [&](const std::string& dir) {
    const int rc = testing::UploadTree("azure://tbl/t", dir, [port](EventLoop& loop) {
      return testing::CreateAzuriteContainer(loop, port, "tbl");
    });
    EXPECT_EQ(rc, 0) << server->Log();
    return rc;
  });
}

// One unshuffled epoch of a stream of the twins' Parquet folder (stored
// elsewhere, as `o` says): every row exact, in the canonical order.
void ExpectTwinsRows(const Twins& t, const DatasetOptions& o) {
  auto ds = StreamingDataset::Open(o);
  ASSERT_TRUE(ds.ok()) << ds.status().message();
  ASSERT_EQ((*ds)->num_samples(), kRows);
  std::vector<std::string> bytes;
  std::vector<int64_t> ids = testing::ReadEpoch(**ds, 0, 0, 0, 1, 4, &bytes);
  ASSERT_EQ(ids.size(), kRows);
  for (size_t k = 0; k < ids.size(); ++k) {
    EXPECT_EQ(ids[k], static_cast<int64_t>(k));
    EXPECT_TRUE(bytes[k] == t.rows[k]) << k;
  }
}

// gs:// through GCS's S3-compatible XML API, served by s3rver (GCS_ENDPOINT_URL;
// no GCS credentials, so anonymous, as for a public bucket; the files are
// uploaded with s3://): the folder streams exactly, in its canonical order,
// and a replaced file's new ETag is noticed.
TEST(ParquetStreamMultiProcess, GcsOverS3rverStreamsExactlyAndAReplacedFileIsReadAnew) {
  std::string why = testing::NodeServersUnavailableReason();
  if (!why.empty()) GTEST_SKIP() << why;
  ScratchDir server_dir;
  auto server = testing::StartS3rver(server_dir.path(), kKeyId, kSecret, {"bkt"});
  ASSERT_NE(server, nullptr) << "s3rver did not start";
  auto env = testing::S3rverEnv(server->port(), kKeyId, kSecret);
  env["GCS_ENDPOINT_URL"] = "http://127.0.0.1:" + std::to_string(server->port());
  testing::ScopedEnv scoped(env);
  Twins t;
  ASSERT_EQ(testing::UploadTree("s3://bkt/table", t.parquet.path()), 0) << server->Log();
  ScratchDir cache;
  ExpectTwinsRows(t, ParquetOptions(cache.path(), "gs://bkt/table"));
  ExpectReplacedFileReadAnew("gs://bkt/t", [&](const std::string& dir) {
    const int rc = testing::UploadTree("s3://bkt/t", dir);
    EXPECT_EQ(rc, 0) << server->Log();
    return rc;
  });
}

// dbfs:/Volumes through the Files API fake: the folder streams exactly (what
// Spark leaves beside data left out), and a file rewritten in the volume
// (a new last_modified, the file's version) is noticed.
TEST(ParquetStream, DbfsVolumeStreamsExactlyAndARewrittenFileIsReadAnew) {
  testing::FakeDatabricksFiles fake;
  testing::ScopedEnv scoped(fake.StoreEnv());
  // Puts every file under `dir` at `volume` + its relative path.
  auto put_tree = [&fake](const std::string& dir, const std::string& volume) {
    int files = 0;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
      if (!e.is_regular_file()) continue;
      auto bytes = ReadFile(e.path().string());
      EXPECT_TRUE(bytes.ok());
      fake.Put(volume + "/" + fs::relative(e.path(), dir).string(), *bytes);
      ++files;
    }
    return files > 0 ? 0 : 1;
  };
  Twins t;
  const std::string volume = "/Volumes/main/default/vol/table";
  ASSERT_EQ(put_tree(t.parquet.path(), volume), 0);
  ScratchDir cache;
  ExpectTwinsRows(t, ParquetOptions(cache.path(), "dbfs:" + volume));
  EXPECT_EQ(fake.gets(volume + "/_SUCCESS"), 0);
  ExpectReplacedFileReadAnew("dbfs:/Volumes/main/default/vol/t", [&](const std::string& dir) {
    return put_tree(dir, "/Volumes/main/default/vol/t");
  });
}

// A dbfs:/Volumes folder without an index.json whose sub-folder's listing
// fails (a 404 listing part=b): the error is that listing's, naming its URL
// and what failed, not the index.json's 404.
TEST(ParquetStream, DbfsSubFolderListingThatFailsIsTheErrorNamingIt) {
  testing::FakeDatabricksFiles fake;
  testing::ScopedEnv scoped(fake.StoreEnv());
  Twins t;
  const std::string volume = "/Volumes/main/default/vol/table";
  for (const auto& e : fs::recursive_directory_iterator(t.parquet.path())) {
    if (!e.is_regular_file()) continue;
    auto bytes = ReadFile(e.path().string());
    ASSERT_TRUE(bytes.ok());
    fake.Put(volume + "/" + fs::relative(e.path(), t.parquet.path()).string(), *bytes);
  }
  fake.FailListing(volume + "/part=b");
  ScratchDir cache;
  DatasetOptions o = ParquetOptions(cache.path(), "dbfs:" + volume);
  auto ds = StreamingDataset::Open(o);
  ASSERT_FALSE(ds.ok());
  EXPECT_EQ(ds.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ds.status().message(),
            "stream 0 (" + cache.path() + "): dbfs:" + volume + "/part=b: GET " + fake.url() +
                "/api/2.0/fs/directories" + volume + "/part%3Db: HTTP 404 Not Found, expected 2xx");
}

// s3rver (bucket "bkt") behind a RequestLogProxy, a folder's files put
// under s3://bkt/table, and the environment reading s3:// through the proxy
// until it goes.
struct ProxiedS3rverTable {
  ScratchDir scratch, server_dir;
  std::unique_ptr<testing::NodeServer> server;
  std::unique_ptr<testing::RequestLogProxy> proxy;
  std::optional<testing::ScopedEnv> scoped;

  // Fails the test (fatally) when a server does not start or the upload fails.
  void Start(const std::string& dir) {
    server = testing::StartS3rver(server_dir.path(), kKeyId, kSecret, {"bkt"});
    ASSERT_NE(server, nullptr) << "s3rver did not start";
    scoped.emplace(testing::S3rverEnv(server->port(), kKeyId, kSecret));
    // The upload forks: before the proxy's thread starts (ThreadSanitizer's
    // runtime fails a child forked beside running threads).
    ASSERT_EQ(testing::UploadTree("s3://bkt/table", dir), 0) << server->Log();
    proxy = testing::RequestLogProxy::Start(server->port(), JoinPath(scratch.path(), "requests"));
    ASSERT_NE(proxy, nullptr);
    ::setenv("S3_ENDPOINT_URL", ("http://127.0.0.1:" + std::to_string(proxy->port())).c_str(), 1);
  }
};

// Over s3rver: two StreamingDataset instances (two ranks of a node, two
// workers each) share the node's cache folder under a cache_limit; one GET
// per footer and per row group on the wire; a restart reads no footer.
TEST(ParquetStreamMultiProcess, S3rverOneGetPerFooterAndRowGroupPerNode) {
  std::string why = testing::NodeServersUnavailableReason();
  if (!why.empty()) GTEST_SKIP() << why;
  Twins t;
  ScratchDir cache;
  ProxiedS3rverTable s3;
  ASSERT_NO_FATAL_FAILURE(s3.Start(t.parquet.path()));
  auto& proxy = s3.proxy;

  auto open = [&](int64_t rank, const std::string& local, std::optional<uint64_t> limit) {
    DatasetOptions o = ParquetOptions(local, "s3://bkt/table");
    o.streams[0].parquet.emplace();  // no index.json request
    o.plan.shuffle = true;
    o.plan.shuffle_seed = 11;
    o.plan.batch_size = 2;
    o.cache_limit = limit;
    o.world.rank = rank;
    o.world.world_size = 2;
    o.world.local_rank = rank;
    o.world.local_world_size = 2;
    return StreamingDataset::Open(o);
  };
  // Both ranks of the node, two workers each: every row once, exact.
  auto read_all = [&](std::vector<std::unique_ptr<StreamingDataset>>& ranks) {
    std::map<int64_t, int> seen;
    for (int64_t r = 0; r < 2; ++r) {
      for (int64_t w = 0; w < 2; ++w) {
        std::vector<std::string> bytes;
        std::vector<int64_t> ids = testing::ReadEpoch(*ranks[r], 0, 0, w, 2, 2, &bytes);
        for (size_t i = 0; i < ids.size(); ++i) {
          EXPECT_TRUE(bytes[i] == t.rows[ids[i]]) << ids[i];
          ++seen[ids[i]];
        }
      }
    }
    EXPECT_EQ(seen.size(), kRows);
    for (const auto& [id, n] : seen) EXPECT_EQ(n, 1) << id;
  };
  // GET request lines since `from`, by object.
  auto gets_since = [&](size_t from) {
    std::map<std::string, int> gets;
    const std::vector<std::string> lines = proxy->Requests();
    for (size_t i = from; i < lines.size(); ++i) {
      EXPECT_EQ(lines[i].rfind("GET /bkt", 0), 0u) << lines[i];
      std::string what = lines[i].substr(4);
      what = what.substr(0, what.find(' '));
      ++gets[what.rfind("/bkt?", 0) == 0 ? "(listing)" : what];
    }
    return gets;
  };

  std::vector<std::unique_ptr<StreamingDataset>> ranks;
  for (int64_t r = 0; r < 2; ++r) {
    auto ds = open(r, cache.path(), std::nullopt);
    ASSERT_TRUE(ds.ok()) << ds.status().message();
    ranks.push_back(std::move(*ds));
  }
  // Opening: the listing (a request per folder) and one read per footer
  // (each under 64 KiB), by the node's first dataset only.
  std::map<std::string, int> gets = gets_since(0);
  EXPECT_EQ(gets["/bkt/table/a.parquet"], 1);
  EXPECT_EQ(gets["/bkt/table/part%3Db/c.parquet"], 1);
  EXPECT_EQ(gets["(listing)"], 2);
  EXPECT_EQ(gets.size(), 3u);
  const size_t opened = proxy->Requests().size();
  read_all(ranks);
  // Then one ranged GET per row group for the node: 9 per file.
  gets = gets_since(opened);
  EXPECT_EQ(gets, (std::map<std::string, int>{{"/bkt/table/a.parquet", 9},
                                              {"/bkt/table/part%3Db/c.parquet", 9}}));
  uint64_t largest_piece = 0;
  for (const auto& e : fs::directory_iterator(fs::path(cache.path()) / ".parquet_row_groups")) {
    largest_piece = std::max<uint64_t>(largest_piece, e.file_size());
  }

  // A restart of the node reads no footer and lists nothing.
  ranks.clear();
  const size_t at_restart = proxy->Requests().size();
  auto again = open(0, cache.path(), std::nullopt);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(proxy->Requests().size(), at_restart);
  again->reset();

  // Under a cache_limit of three row groups the node's folder holds no more.
  ScratchDir small;
  const uint64_t limit = 3 * largest_piece;
  for (int64_t r = 0; r < 2; ++r) {
    auto ds = open(r, small.path(), limit);
    ASSERT_TRUE(ds.ok()) << ds.status().message();
    ranks.push_back(std::move(*ds));
  }
  testing::DiskSampler sampler(testing::DiskSampler::FolderPerNode({small.path()}));
  read_all(ranks);
  sampler.Stop();
  EXPECT_GT(sampler.max(), 0u);
  EXPECT_LE(sampler.max(), limit);
  ranks.clear();

  // columns=["tokens", "label"]: still one GET per row group for the node
  // (the chunks between them are under 1 MiB: one read), of exactly the
  // bytes from label's chunk to the end of tokens', each row's two fields
  // those of the whole row, in the same order of samples.
  const parquet::FileFooter footer = FixtureFooter();
  ASSERT_EQ(footer.schema.fields[1].name, "label");
  ASSERT_EQ(footer.schema.fields[4].name, "tokens");
  uint64_t span = 0, all = 0;
  for (const auto& group : footer.chunk_ranges) {
    const parquet::ByteRange label = group[footer.schema.fields[1].first_leaf];
    const parquet::ByteRange tokens = group[footer.schema.fields[4].first_leaf];
    ASSERT_LT(label.offset, tokens.offset);
    span += tokens.offset + tokens.size - label.offset;
    for (const parquet::ByteRange& r : group) all += r.size;
  }
  ASSERT_LT(span, all);
  ScratchDir some;
  const size_t before = proxy->Requests().size();
  for (int64_t r = 0; r < 2; ++r) {
    DatasetOptions o = ParquetOptions(some.path(), "s3://bkt/table");
    o.streams[0].parquet.emplace();
    o.streams[0].parquet->columns = {"tokens", "label"};
    o.plan.shuffle = true;
    o.plan.shuffle_seed = 11;
    o.plan.batch_size = 2;
    o.world.rank = r;
    o.world.world_size = 2;
    o.world.local_rank = r;
    o.world.local_world_size = 2;
    auto ds = StreamingDataset::Open(o);
    ASSERT_TRUE(ds.ok()) << ds.status().message();
    ranks.push_back(std::move(*ds));
  }
  const size_t some_opened = proxy->Requests().size();
  EXPECT_EQ(some_opened - before, 4u);  // the listing's two and the two footers
  auto whole = StreamingDataset::Open(ParquetOptions(t.parquet.path()));
  ASSERT_TRUE(whole.ok());
  uint64_t fetched = 0;
  std::vector<int64_t> some_ids;
  SampleFields f, w;
  for (int64_t r = 0; r < 2; ++r) {
    for (int64_t wk = 0; wk < 2; ++wk) {
      for (int64_t id : testing::ReadEpoch(*ranks[r], 0, 0, wk, 2, 2, nullptr)) {
        some_ids.push_back(id);
        ASSERT_TRUE(ranks[r]->Get(static_cast<uint64_t>(id), &f).ok());
        ASSERT_TRUE((*whole)->Get(static_cast<uint64_t>(id), &w).ok());
        ASSERT_EQ(Projected(f.fields, {0, 1}), Projected(w.fields, {4, 1})) << id;
      }
    }
    fetched += ranks[r]->counters().bytes_downloaded;
  }
  EXPECT_EQ(some_ids.size(), kRows);
  EXPECT_EQ(gets_since(some_opened), (std::map<std::string, int>{{"/bkt/table/a.parquet", 9},
                                                                 {"/bkt/table/part%3Db/c.parquet", 9}}));
  EXPECT_EQ(fetched, 2 * span);
}

// With the first row's peek on (the default), processes of one node that
// start their passes in the same row group at the same time: the peek reads
// a row group only as the node's downloader of it (holding the cache's
// claim), so the wire still carries one GET per footer and per row group.
// Three processes, each reading every row, meet at a barrier after their
// opens so their first rows race for the same row group.
TEST(ParquetStreamMultiProcess, S3rverPeekingProcessesOfANodeGetEachFooterAndRowGroupOnce) {
  std::string why = testing::NodeServersUnavailableReason();
  if (!why.empty()) GTEST_SKIP() << why;
  Twins t;
  ScratchDir cache;
  ProxiedS3rverTable s3;
  ASSERT_NO_FATAL_FAILURE(s3.Start(t.parquet.path()));
  auto& proxy = s3.proxy;
  const ScratchDir& scratch = s3.scratch;

  constexpr int kProcesses = 3;
  const size_t before = proxy->Requests().size();
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    const std::string out = JoinPath(scratch.path(), "out" + std::to_string(p));
    children.push_back(testing::Fork([&, p, out]() -> int {
      DatasetOptions o = ParquetOptions(cache.path(), "s3://bkt/table");
      o.peek_first_sample = true;
      o.streams[0].parquet.emplace();  // no index.json request
      o.plan.shuffle = true;
      o.plan.shuffle_seed = 11;
      o.plan.batch_size = 2;
      auto ds = StreamingDataset::Open(o);
      if (!ds.ok()) {
        fprintf(stderr, "open: %s\n", ds.status().message().c_str());
        return 2;
      }
      // The barrier: every process opened before any starts its pass.
      if (!WriteFileAtomic(JoinPath(scratch.path(), "ready" + std::to_string(p)), "").ok()) return 3;
      for (int q = 0; q < kProcesses; ++q) {
        while (!fs::exists(JoinPath(scratch.path(), "ready" + std::to_string(q)))) {
          std::this_thread::yield();
        }
      }
      if (!(*ds)->IterBegin(0, 0, 0, 1).ok()) return 4;
      std::vector<int64_t> all, ids(2);
      std::vector<std::string> bytes;
      std::vector<SampleFields> fields;
      while (true) {
        auto n = (*ds)->NextBatch(2, ids.data(), &fields);
        if (!n.ok()) {
          fprintf(stderr, "next: %s\n", n.status().message().c_str());
          return 5;
        }
        if (*n == 0) break;
        for (size_t k = 0; k < *n; ++k) {
          all.push_back(ids[k]);
          bytes.push_back(testing::FieldBytes(fields[k]));
        }
      }
      return testing::WriteResult(out, all, bytes, (*ds)->counters()).ok() ? 0 : 6;
    }));
  }
  for (pid_t c : children) EXPECT_EQ(testing::WaitExit(c), 0);
  for (int p = 0; p < kProcesses; ++p) {
    testing::WorkerResult r = testing::ReadResult(JoinPath(scratch.path(), "out" + std::to_string(p)));
    ASSERT_EQ(r.ids.size(), kRows) << p;
    std::set<int64_t> seen(r.ids.begin(), r.ids.end());
    EXPECT_EQ(seen.size(), kRows) << p;
    for (size_t i = 0; i < r.ids.size(); ++i) EXPECT_TRUE(r.bytes[i] == t.rows[r.ids[i]]) << r.ids[i];
  }
  std::map<std::string, int> gets;
  const std::vector<std::string> lines = proxy->Requests();
  for (size_t i = before; i < lines.size(); ++i) {
    std::string what = lines[i].substr(lines[i].find(' ') + 1);
    what = what.substr(0, what.find(' '));
    ++gets[what.rfind("/bkt?", 0) == 0 ? "(listing)" : what];
  }
  // A footer read and 9 row groups per file, the folder and part=b listed.
  EXPECT_EQ(gets, (std::map<std::string, int>{{"(listing)", 2},
                                              {"/bkt/table/a.parquet", 10},
                                              {"/bkt/table/part%3Db/c.parquet", 10}}));
}

// nginx with its files under `scratch`/nginx; null when it does not start.
std::unique_ptr<testing::NginxServer> StartNginxIn(const ScratchDir& scratch) {
  const std::string dir = JoinPath(scratch.path(), "nginx");
  std::error_code error;
  fs::create_directories(dir, error);
  return error ? nullptr : testing::NginxServer::Start(dir);
}

// The twins' Parquet files under `root` on a web server, beside a manifest
// "files.txt" of `manifest`.
void ServeTwins(const Twins& t, const fs::path& root, const std::string& manifest) {
  fs::create_directories(root / "part=b");
  fs::copy_file(fs::path(t.parquet.path()) / "a.parquet", root / "a.parquet");
  fs::copy_file(fs::path(t.parquet.path()) / "part=b" / "c.parquet", root / "part=b" / "c.parquet");
  ASSERT_TRUE(WriteFileAtomic((root / "files.txt").string(), manifest).ok());
}

// nginx's requests so far: "METHOD URI" (%3D read as '=') -> count.
std::map<std::string, int> NginxRequests(const testing::NginxServer& nginx) {
  std::map<std::string, int> requests;
  std::istringstream log(nginx.AccessLog());
  for (std::string line; std::getline(log, line);) {
    std::istringstream fields(line);
    std::string conn, method, uri;
    fields >> conn >> method >> uri;
    const size_t escaped = uri.find("%3D");
    if (escaped != std::string::npos) uri.replace(escaped, 3, "=");
    ++requests[method + " " + uri];
  }
  return requests;
}

// A Parquet folder on a web server, which cannot list: a manifest names its
// files (without sizes: looked up with HEAD), as for raw files. Every row
// exact, in the canonical order of the folder read in place; on the wire
// one GET of the manifest, one HEAD and one footer read per file, then one
// GET per row group.
TEST(ParquetStream, ManifestOverNginxStreamsExactly) {
  Twins t;
  ScratchDir scratch;
  auto nginx = StartNginxIn(scratch);
  if (nginx == nullptr) GTEST_SKIP() << "nginx did not start";
  ASSERT_NO_FATAL_FAILURE(ServeTwins(t, fs::path(nginx->www()) / "table",
                                     "# the table's files\npart=b/c.parquet\na.parquet\n"));
  testing::ScopedEnv env(testing::CleanStoreEnv());
  ScratchDir cache;
  DatasetOptions o = ParquetOptions(
      cache.path(), "http://127.0.0.1:" + std::to_string(nginx->http_port()) + "/table");
  o.peek_first_sample = true;
  o.streams[0].parquet.emplace();
  o.streams[0].parquet->manifest = "files.txt";
  ExpectTwinsRows(t, o);
  EXPECT_EQ(NginxRequests(*nginx), (std::map<std::string, int>{{"GET /table/files.txt", 1},
                                                  {"HEAD /table/a.parquet", 1},
                                                  {"HEAD /table/part=b/c.parquet", 1},
                                                  {"GET /table/a.parquet", 10},
                                                  {"GET /table/part=b/c.parquet", 10}}));
}

// The same folder over nginx (a web server knows no version: no ETag is
// listed), one file grown after the node read its footers: a row group's
// read asks for the listed size, which nginx's answer (its Content-Range
// total) contradicts, so the read fails at once naming the URL and both
// sizes, with no retry. Before the reads passed the size, the grown
// file's old bytes were read as if whole.
TEST(ParquetStream, AFileGrownOnAWebServerIsNamedAtFetch) {
  Twins t;
  ScratchDir scratch;
  auto nginx = StartNginxIn(scratch);
  if (nginx == nullptr) GTEST_SKIP() << "nginx did not start";
  const fs::path root = fs::path(nginx->www()) / "table";
  ASSERT_NO_FATAL_FAILURE(ServeTwins(t, root, "part=b/c.parquet\na.parquet\n"));
  testing::ScopedEnv env(testing::CleanStoreEnv());
  ScratchDir cache;
  const std::string url = "http://127.0.0.1:" + std::to_string(nginx->http_port()) + "/table";
  DatasetOptions o = ParquetOptions(cache.path(), url);
  o.streams[0].parquet.emplace();
  o.streams[0].parquet->manifest = "files.txt";
  o.streams[0].download_retry = 2;  // a retry would show in nginx's log
  auto ds = StreamingDataset::Open(o);
  ASSERT_TRUE(ds.ok()) << ds.status().message();
  const std::string c = (root / "part=b" / "c.parquet").string();
  const uint64_t listed = fs::file_size(c);
  ASSERT_NO_FATAL_FAILURE(Grow(c, "0123456789"));
  const std::map<std::string, int> opened = NginxRequests(*nginx);
  SampleFields f;
  Status got = (*ds)->Get(119, &f);  // row group 8 of part=b/c.parquet
  EXPECT_EQ(got.code(), StatusCode::kCorrupt) << got.message();
  EXPECT_EQ(got.message(), "shard cache '" + cache.path() + "': fetching shard 17 '" +
                               RowGroupPieceName("part=b/c.parquet", 8, {}, "") +
                               "': part=b/c.parquet: row group 8, bytes [7361, 7978) of " + url +
                               "/part=b/c.parquet: " + url + "/part=b/c.parquet: GET " + url +
                               "/part%3Db/c.parquet: the object is " +
                               std::to_string(listed + 10) + " bytes, index.json says " +
                               std::to_string(listed) +
                               " (the remote changed since it was indexed?)");
  // nginx logs a request once it has answered it, which may be after the
  // client has refused the answer: wait for the log to hold it.
  auto reads = [&] {
    return NginxRequests(*nginx)["GET /table/part=b/c.parquet"] -
           opened.at("GET /table/part=b/c.parquet");
  };
  for (int tries = 0; tries < 400 && reads() < 1; ++tries) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(reads(), 1);
  EXPECT_TRUE((*ds)->Get(0, &f).ok());  // the other file is whole
}

// The footers' store made from a listing of the fixture that no longer
// holds: the error of reading `path`'s tail (kCorrupt), or Ok.
Status FooterStoreOfStaleListing(const std::string& remote_url, const std::string& path,
                                 uint64_t size, const std::string& etag) {
  ScratchDir state;
  auto remote = OpenRemoteSource(remote_url, StoreOptions{});
  if (!remote.ok()) return remote.status();
  std::vector<ListedFile> files = {{path, size, etag}};
  return LoadOrMakeParquetFooterStore(ParquetFooterStorePath(state.path()), state.path(), "src",
                                      files, "", **remote, std::chrono::seconds(5))
      .status();
}

// A file grown in place (its tag kept) between the listing and its
// footer's read: the tail read asks for the listed size, so the store is
// not made and the error names the file, the range and both sizes. Before
// the tail read passed the size, the old footer, still where the listing
// put it, was read as the file's.
TEST(ParquetFooterVersion, AFileGrownSinceTheListingIsNamedAtItsFooterRead) {
  ScratchDir remote_dir;
  const std::string c = JoinPath(remote_dir.path(), "c.parquet");
  ASSERT_TRUE(fs::copy_file(kFixture, c));
  const uint64_t listed = fs::file_size(c);
  const std::string tag = TagOf(remote_dir.path(), "c.parquet");
  ASSERT_NO_FATAL_FAILURE(GrowKeepingItsTag(c, std::string(100, 'x')));
  const parquet::ByteRange tail = parquet::FooterTailRange(listed);
  Status got = FooterStoreOfStaleListing(remote_dir.path(), "c.parquet", listed, tag);
  EXPECT_EQ(got.code(), StatusCode::kCorrupt) << got.message();
  EXPECT_EQ(got.message(), "c.parquet: footer: reading bytes [" + std::to_string(tail.offset) +
                               ", " + std::to_string(tail.offset + tail.size) + ") of " + c +
                               ": " + c + ": the object is " + std::to_string(listed + 100) +
                               " bytes, index.json says " + std::to_string(listed) +
                               " (the remote changed since it was indexed?)");
}

// A file rewritten at the same size between the listing and its footer's
// read: its tag (inode, mtime) is not the listed one, so its tail is not
// read. Before the tail read passed the etag, the new file's footer was
// stored as the listed file's.
TEST(ParquetFooterVersion, AFileRewrittenSinceTheListingIsNamedByItsTagAtItsFooterRead) {
  ScratchDir remote_dir;
  const std::string c = JoinPath(remote_dir.path(), "c.parquet");
  ASSERT_TRUE(fs::copy_file(kFixture, c));
  const uint64_t listed = fs::file_size(c);
  const std::string tag = TagOf(remote_dir.path(), "c.parquet");
  auto bytes = ReadFile(kFixture);
  ASSERT_TRUE(bytes.ok());
  ASSERT_TRUE(WriteFileAtomic(c, *bytes).ok());  // the same bytes, a new inode
  const std::string now = TagOf(remote_dir.path(), "c.parquet");
  ASSERT_NE(now, tag);
  const parquet::ByteRange tail = parquet::FooterTailRange(listed);
  const std::string range = std::to_string(tail.offset) + ".." + std::to_string(tail.offset + tail.size);
  Status got = FooterStoreOfStaleListing(remote_dir.path(), "c.parquet", listed, tag);
  EXPECT_EQ(got.code(), StatusCode::kCorrupt) << got.message();
  EXPECT_EQ(got.message(), "c.parquet: footer: reading bytes [" + std::to_string(tail.offset) +
                               ", " + std::to_string(tail.offset + tail.size) + ") of " + c +
                               ": " + c + ": changed since it was listed (ETag " + now +
                               ", listed " + tag + "); bytes " + range + " not read");
}

// One reading thread's room (ReadParquetTailInRoom with a kept buffer),
// file after file: each tail is the file's last (footer + 8) bytes, as
// ReadParquetTail copies them, whether the room holds more than it (an
// earlier, larger read's bytes left in it) or the footer is longer than
// the first read (its rest read apart), and the room is the one allocated
// at the first read, not made again a file. The bytes are lent where they
// were read: in the room, or in its `longer` string for a footer past the
// first read.
TEST(ParquetFooterVersion, TailsReadIntoOneKeptRoomAreEachFilesLastBytes) {
  ScratchDir remote_dir;
  auto fixture = ReadFile(kFixture);
  ASSERT_TRUE(fixture.ok());
  // "PAR1", filler, a footer of `footer` bytes, its length and "PAR1".
  const auto parquet_like = [](size_t filler, size_t footer) {
    std::string b = "PAR1" + std::string(filler, 'f');
    for (size_t i = 0; i < footer; ++i) b.push_back(static_cast<char>('a' + i % 26));
    const uint32_t n = static_cast<uint32_t>(footer);
    b.append(reinterpret_cast<const char*>(&n), 4);
    return b + "PAR1";
  };
  const std::vector<std::pair<std::string, std::string>> files = {
      {"big.parquet", parquet_like(100 << 10, 50 << 10)},      // 64 KiB read, footer inside
      {"fixture.parquet", *fixture},                           // a whole small file
      {"tiny.parquet", parquet_like(0, 3)},                    // 15 bytes
      {"long.parquet", parquet_like(10 << 10, 90 << 10)},      // footer past the first read
      {"again.parquet", parquet_like(70 << 10, 1 << 10)},
  };
  for (const auto& [name, bytes] : files) {
    ASSERT_TRUE(WriteFileAtomic(JoinPath(remote_dir.path(), name), bytes).ok());
  }
  auto remote = OpenRemoteSource(remote_dir.path(), StoreOptions{});
  ASSERT_TRUE(remote.ok()) << remote.status().message();
  UninitializedBuffer room;
  const char* first_room = nullptr;
  for (const auto& [name, bytes] : files) {
    auto tail = ReadParquetTail(**remote, name, name, bytes.size(), TagOf(remote_dir.path(), name));
    ASSERT_TRUE(tail.ok()) << name << ": " << tail.status().message();
    uint32_t footer = 0;
    std::memcpy(&footer, bytes.data() + bytes.size() - 8, 4);
    EXPECT_TRUE(*tail == bytes.substr(bytes.size() - footer - 8)) << name;
    EXPECT_EQ(*tail, *ReadParquetTail(**remote, name, name, bytes.size(), "")) << name;
    std::string longer;
    auto lent = ReadParquetTailInRoom(**remote, name, name, bytes.size(),
                                      TagOf(remote_dir.path(), name), &room, &longer);
    ASSERT_TRUE(lent.ok()) << name << ": " << lent.status().message();
    EXPECT_TRUE(*lent == *tail) << name;
    if (first_room == nullptr) first_room = room.data();
    EXPECT_EQ(room.data(), first_room) << name << ": the room was made again";
    EXPECT_EQ(room.size(), size_t{64} << 10) << name;
    const bool past_first_read = footer + 8 > (size_t{64} << 10);
    EXPECT_EQ(longer.size(), past_first_read ? footer + 8 : 0) << name;
    const std::string_view home =
        past_first_read ? std::string_view(longer) : std::string_view(room.data(), room.size());
    EXPECT_TRUE(lent->data() >= home.data() && lent->data() + lent->size() <= home.data() + home.size())
        << name << ": the tail was copied, not lent where it was read";
  }
}

// The same over nginx (no ETag listed): the file grown between the HEAD
// that sized it and its footer's read is named with its URL and both sizes
// (nginx's Content-Range total), after one GET.
TEST(ParquetFooterVersion, AFileGrownOnAWebServerIsNamedAtItsFooterRead) {
  ScratchDir scratch;
  auto nginx = StartNginxIn(scratch);
  if (nginx == nullptr) GTEST_SKIP() << "nginx did not start";
  const fs::path root = fs::path(nginx->www()) / "table";
  fs::create_directories(root);
  const std::string c = (root / "c.parquet").string();
  ASSERT_TRUE(fs::copy_file(kFixture, c));
  const uint64_t listed = fs::file_size(c);
  ASSERT_NO_FATAL_FAILURE(Grow(c, "0123456789"));
  testing::ScopedEnv env(testing::CleanStoreEnv());
  const std::string url = "http://127.0.0.1:" + std::to_string(nginx->http_port()) + "/table";
  const parquet::ByteRange tail = parquet::FooterTailRange(listed);
  Status got = FooterStoreOfStaleListing(url, "c.parquet", listed, "");
  EXPECT_EQ(got.code(), StatusCode::kCorrupt) << got.message();
  EXPECT_EQ(got.message(), "c.parquet: footer: reading bytes [" + std::to_string(tail.offset) +
                               ", " + std::to_string(tail.offset + tail.size) + ") of " + url +
                               "/c.parquet: " + url + "/c.parquet: GET " + url +
                               "/c.parquet: the object is " + std::to_string(listed + 10) +
                               " bytes, index.json says " + std::to_string(listed) +
                               " (the remote changed since it was indexed?)");
  auto gets = [&] { return NginxRequests(*nginx)["GET /table/c.parquet"]; };
  for (int tries = 0; tries < 400 && gets() < 1; ++tries) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(gets(), 1);
}

// Two nodes of two ranks over a web server (nginx, a manifest: no listing),
// every rank its own process with two DataLoader workers, the ranks of a
// node sharing its cache folder and starting together. Each node reads the
// table under its own URL prefix, so the access log tells the nodes apart.
// The ranks' samples are disjoint and cover the epoch exactly, each worker's
// ids are those the same world plans over the folder read in place, every
// row is exact, and on the wire each node asks once for the manifest, once
// (HEAD) for each file's size, once for each footer and once for each row
// group its ranks read.
TEST(ParquetStreamMultiProcess, NginxRanksOfTwoNodesReadTheirPlanOnceANode) {
  Twins t;
  ScratchDir scratch;
  auto nginx = StartNginxIn(scratch);
  if (nginx == nullptr) GTEST_SKIP() << "nginx did not start";
  constexpr int64_t kNodes = 2, kRanksPerNode = 2, kWorkers = 2, kBatch = 3;
  for (int64_t n = 0; n < kNodes; ++n) {
    ASSERT_NO_FATAL_FAILURE(ServeTwins(t, fs::path(nginx->www()) / ("n" + std::to_string(n)) / "table",
                                       "a.parquet\npart=b/c.parquet\n"));
  }
  testing::ScopedEnv env(testing::CleanStoreEnv());
  auto options = [&](const std::string& local, const std::string& remote, int64_t rank) {
    DatasetOptions o = ParquetOptions(local, remote);
    o.peek_first_sample = true;
    if (!remote.empty()) {
      o.streams[0].parquet.emplace();
      o.streams[0].parquet->manifest = "files.txt";
    }
    o.plan.shuffle = true;
    o.plan.shuffle_seed = 23;
    o.plan.batch_size = kBatch;
    o.world.rank = rank;
    o.world.world_size = kNodes * kRanksPerNode;
    o.world.local_rank = rank % kRanksPerNode;
    o.world.local_world_size = kRanksPerNode;
    return o;
  };
  std::vector<ScratchDir> caches(kNodes);
  std::vector<pid_t> children;
  const auto ready = [&](int64_t rank) { return JoinPath(scratch.path(), "ready" + std::to_string(rank)); };
  const auto out = [&](int64_t rank, int64_t w) {
    return JoinPath(scratch.path(), "out" + std::to_string(rank) + "_" + std::to_string(w));
  };
  for (int64_t rank = 0; rank < kNodes * kRanksPerNode; ++rank) {
    const int64_t node = rank / kRanksPerNode;
    children.push_back(testing::Fork([&, rank, node]() -> int {
      const std::string url = "http://127.0.0.1:" + std::to_string(nginx->http_port()) + "/n" +
                              std::to_string(node) + "/table";
      // The barrier: all ranks open together (their footers' reads race),
      // then wait for each other so that their first rows race too.
      auto ds = StreamingDataset::Open(options(caches[node].path(), url, rank));
      if (!ds.ok()) {
        fprintf(stderr, "rank %ld open: %s\n", static_cast<long>(rank), ds.status().message().c_str());
        return 2;
      }
      if (!WriteFileAtomic(ready(rank), "").ok()) return 3;
      for (int64_t r = 0; r < kNodes * kRanksPerNode; ++r) {
        while (!fs::exists(ready(r))) std::this_thread::yield();
      }
      for (int64_t w = 0; w < kWorkers; ++w) {
        std::vector<std::string> bytes;
        std::vector<int64_t> ids = testing::ReadEpoch(**ds, 0, 0, w, kWorkers, kBatch, &bytes);
        if (!testing::WriteResult(out(rank, w), ids, bytes, (*ds)->counters()).ok()) return 4;
      }
      return 0;
    }));
  }
  for (pid_t c : children) EXPECT_EQ(testing::WaitExit(c), 0);

  // The row groups' first ids: group g holds ids [starts[g], starts[g + 1]).
  std::vector<uint64_t> starts{0};
  for (uint64_t n : t.group_rows) starts.push_back(starts.back() + n);
  ASSERT_EQ(starts.back(), kRows);
  std::map<int64_t, int> seen;
  std::vector<std::set<size_t>> groups_of_node(kNodes);
  for (int64_t rank = 0; rank < kNodes * kRanksPerNode; ++rank) {
    auto planned = StreamingDataset::Open(options(t.parquet.path(), "", rank));
    ASSERT_TRUE(planned.ok()) << planned.status().message();
    for (int64_t w = 0; w < kWorkers; ++w) {
      testing::WorkerResult r = testing::ReadResult(out(rank, w));
      auto want = (*planned)->WorkerIds(0, 0, w, kWorkers);
      ASSERT_TRUE(want.ok()) << want.status().message();
      EXPECT_EQ(r.ids, *want) << "rank " << rank << " worker " << w;
      ASSERT_EQ(r.bytes.size(), r.ids.size());
      for (size_t i = 0; i < r.ids.size(); ++i) {
        ASSERT_GE(r.ids[i], 0);
        ASSERT_LT(static_cast<uint64_t>(r.ids[i]), kRows);
        EXPECT_TRUE(r.bytes[i] == t.rows[r.ids[i]]) << "rank " << rank << " id " << r.ids[i];
        ++seen[r.ids[i]];
        const size_t g = std::upper_bound(starts.begin(), starts.end(), r.ids[i]) - starts.begin() - 1;
        groups_of_node[rank / kRanksPerNode].insert(g);
      }
    }
  }
  // Disjoint and the whole epoch (120 rows: 4 ranks x batches of 3 divide it).
  EXPECT_EQ(seen.size(), kRows);
  for (const auto& [id, n] : seen) EXPECT_EQ(n, 1) << id;

  // The wire, node by node: "METHOD /nN/table/FILE" -> count; a GET of a
  // Parquet file is a footer's read or a row group's.
  std::vector<std::map<std::string, int>> requests(kNodes);
  for (const auto& [request, count] : NginxRequests(*nginx)) {
    const size_t uri = request.find(' ') + 1;
    ASSERT_EQ(request.compare(uri, 2, "/n"), 0) << request;
    const int64_t node = request[uri + 2] - '0';
    ASSERT_LT(node, kNodes) << request;
    requests[node][request.substr(0, uri) + request.substr(uri + 3)] += count;
  }
  for (int64_t n = 0; n < kNodes; ++n) {
    // Files a (groups 0-8) and part=b/c (groups 9-17): one footer read each,
    // then one GET per row group the node's ranks read.
    int a = 1, c = 1;
    for (size_t g : groups_of_node[n]) ++(g < kGroups / 2 ? a : c);
    EXPECT_EQ(requests[n], (std::map<std::string, int>{{"GET /table/files.txt", 1},
                                                       {"HEAD /table/a.parquet", 1},
                                                       {"HEAD /table/part=b/c.parquet", 1},
                                                       {"GET /table/a.parquet", a},
                                                       {"GET /table/part=b/c.parquet", c}}))
        << "node " << n;
  }
}

// A warm node's stream that names no source and found no index.json
// before maps the Parquet table it made then, asking nothing of the remote
// (index.json's probe was a round trip of every warm construction), as a
// warm MDS stream reads its index.json from the cache; the same rows.
TEST(ParquetStreamMultiProcess, S3rverWarmParquetStreamOpensWithoutAskingForIndexJson) {
  std::string why = testing::NodeServersUnavailableReason();
  if (!why.empty()) GTEST_SKIP() << why;
  Twins t;
  ScratchDir cache;
  ProxiedS3rverTable s3;
  ASSERT_NO_FATAL_FAILURE(s3.Start(t.parquet.path()));
  // A table far below binary_index_from_bytes: its binary index is kept all the same.
  const DatasetOptions o = ParquetOptions(cache.path(), "s3://bkt/table");
  auto cold = StreamingDataset::Open(o);
  ASSERT_TRUE(cold.ok()) << cold.status().message();
  const std::vector<std::string> cold_lines = s3.proxy->Requests();
  EXPECT_EQ(std::count_if(cold_lines.begin(), cold_lines.end(),
                          [](const std::string& l) {
                            return l.rfind("GET /bkt/table/index.json ", 0) == 0;
                          }),
            1);
  for (int open = 0; open < 2; ++open) {
    SCOPED_TRACE("warm open " + std::to_string(open));
    const size_t before = s3.proxy->Requests().size();
    auto warm = StreamingDataset::Open(o);
    ASSERT_TRUE(warm.ok()) << warm.status().message();
    const std::vector<std::string> lines = s3.proxy->Requests();
    EXPECT_EQ(std::vector<std::string>(lines.begin() + before, lines.end()),
              std::vector<std::string>());
    ASSERT_EQ((*warm)->num_samples(), kRows);
    SampleFields row;
    for (uint64_t id : {uint64_t{0}, kRows - 1}) {
      ASSERT_TRUE((*warm)->Get(id, &row).ok()) << id;
      EXPECT_TRUE(testing::FieldBytes(row) == t.rows[id]) << id;
    }
  }
}

// A cold pass peeks its first row (StreamShards::PeekPieceRow: the row
// group's piece read in memory and decoded before it is cached): the read
// is the shard's own, so a pass is still one GET per row group on the
// wire, its rows exact, whole or with columns= (the peeked row's fields
// those of the whole row).
TEST(ParquetStreamMultiProcess, S3rverColdPassPeeksItsFirstRowWithinTheRowGroupsOneGet) {
  std::string why = testing::NodeServersUnavailableReason();
  if (!why.empty()) GTEST_SKIP() << why;
  Twins t;
  ProxiedS3rverTable s3;
  ASSERT_NO_FATAL_FAILURE(s3.Start(t.parquet.path()));
  auto& proxy = s3.proxy;
  auto whole = StreamingDataset::Open(ParquetOptions(t.parquet.path()));
  ASSERT_TRUE(whole.ok());

  for (bool some : {false, true}) {
    SCOPED_TRACE(some ? "columns tokens, label" : "every column");
    ScratchDir cache;
    DatasetOptions o = ParquetOptions(cache.path(), "s3://bkt/table");
    o.peek_first_sample = true;
    o.streams[0].parquet.emplace();  // no index.json request
    if (some) o.streams[0].parquet->columns = {"tokens", "label"};
    o.plan.shuffle = true;
    o.plan.shuffle_seed = 11;
    o.plan.batch_size = 2;
    auto ds = StreamingDataset::Open(o);
    ASSERT_TRUE(ds.ok()) << ds.status().message();
    const size_t opened = proxy->Requests().size();
    ASSERT_TRUE((*ds)->IterBegin(0, 0, 0, 1).ok());
    std::vector<int64_t> ids(2);
    std::vector<SampleFields> fields;
    std::set<int64_t> seen;
    bool first = true;
    SampleFields w;
    while (true) {
      auto n = (*ds)->NextBatch(2, ids.data(), &fields);
      ASSERT_TRUE(n.ok()) << n.status().message();
      if (*n == 0) break;
      // The peek hands out the pass's first row alone.
      if (first) {
        EXPECT_EQ(*n, 1u);
      }
      first = false;
      for (size_t k = 0; k < *n; ++k) {
        ASSERT_TRUE((*whole)->Get(static_cast<uint64_t>(ids[k]), &w).ok());
        if (some) {
          ASSERT_EQ(Projected(fields[k].fields, {0, 1}), Projected(w.fields, {4, 1})) << ids[k];
        } else {
          ASSERT_TRUE(testing::FieldBytes(fields[k]) == t.rows[ids[k]]) << ids[k];
        }
        EXPECT_TRUE(seen.insert(ids[k]).second) << ids[k];
      }
    }
    EXPECT_EQ(seen.size(), kRows);
    std::map<std::string, int> gets;
    const std::vector<std::string> lines = proxy->Requests();
    for (size_t i = opened; i < lines.size(); ++i) {
      std::string what = lines[i].substr(lines[i].find(' ') + 1);
      ++gets[what.substr(0, what.find(' '))];
    }
    EXPECT_EQ(gets, (std::map<std::string, int>{{"/bkt/table/a.parquet", 9},
                                                {"/bkt/table/part%3Db/c.parquet", 9}}));
  }
}

// The cold pass's peek (StreamShards::PeekPieceRow) opens its row group
// with consumer_waits: it decodes one data page of each column, not the
// group; the shard's own open (as the prefetcher opens every shard a pass
// reads) decodes the whole group, and hands out the same row.
TEST(ParquetStreamMultiProcess, S3rverColdPeekDecodesOnePageAColumnTheShardsOpenTheWholeGroup) {
  std::string why = testing::NodeServersUnavailableReason();
  if (!why.empty()) GTEST_SKIP() << why;
  // Flat columns of several 256-byte data pages each.
  ScratchDir table, cache;
  fs::copy_file(std::string(SLUICE_TEST_DATA_DIR) + "/parquet/pa26_plain_pages_v1.parquet",
                fs::path(table.path()) / "p.parquet");
  ProxiedS3rverTable s3;
  ASSERT_NO_FATAL_FAILURE(s3.Start(table.path()));
  StreamOptions stream = ParquetOptions(cache.path(), "s3://bkt/table").streams[0];
  stream.parquet.emplace();
  auto remote = OpenRemoteSource(stream.remote);
  ASSERT_TRUE(remote.ok()) << remote.status().ToString();
  std::shared_ptr<RemoteSource> shared_remote = std::move(*remote);
  auto index = LoadStreamIndex(stream, shared_remote.get(), std::chrono::seconds(20));
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  auto shared_index = std::make_shared<const ShardTable>(std::move(*index));
  auto shards = StreamShards::Open(stream, shared_index, shared_remote, std::nullopt,
                                   std::chrono::seconds(20));
  ASSERT_TRUE(shards.ok()) << shards.status().ToString();
  ASSERT_TRUE((*shards)->Peekable(0));
  const ShardEntry entry = shared_index->entry(0);
  const size_t columns = entry.column_names.size();
  auto peeked = (*shards)->PeekSample(0, 0);
  ASSERT_TRUE(peeked.ok()) << peeked.status().ToString();
  EXPECT_EQ(peeked->data_pages_decoded, columns);
  auto opened = (*shards)->OpenShard(0, columns);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  (*shards)->PeekDone(0);
  const parquet::ParquetShardReader* whole = (*opened)->view().parquet();
  ASSERT_NE(whole, nullptr);
  // The group's every data page (the fixture's 256-byte pages), before a row is read.
  EXPECT_EQ(whole->data_pages_decoded(), 106u);
  EXPECT_GT(whole->data_pages_decoded(), 2 * columns);
  SampleFields row;
  ASSERT_TRUE((*opened)->Read(0, entry.column_names, &row).ok());
  ASSERT_EQ(row.fields.size(), peeked->fields.size());
  for (size_t c = 0; c < columns; ++c) {
    EXPECT_EQ(row.fields[c].data() == nullptr, peeked->fields[c].data() == nullptr) << c;
    EXPECT_EQ(row.fields[c], peeked->fields[c]) << c;
  }
}

}  // namespace
}  // namespace sluice

namespace sluice {
namespace {

// A cold Parquet folder found by the probe (no "parquet" option), read in
// order by rank 0 with the peek on: the head of the first listed file is
// read beside the footers (GuessedPieceHead), and row group 0's piece is
// that read's: on the wire, a.parquet's requests are its footer's, the
// guessed head's ([4, its end): a file under a part) and row groups 1-8's,
// never row group 0's own; the guess goes after the listing and before
// any row group's GET. The rows are the folder's, exact, in order. With
// guess_first_shard off, row group 0 has its own GET and nothing is
// guessed.
TEST(ParquetStreamMultiProcess, S3rverColdFolderReadsItsFirstGroupBesideTheFooters) {
  std::string why = testing::NodeServersUnavailableReason();
  if (!why.empty()) GTEST_SKIP() << why;
  Twins t;
  ProxiedS3rverTable s3;
  ASSERT_NO_FATAL_FAILURE(s3.Start(t.parquet.path()));
  const uint64_t size = fs::file_size(kFixture);
  const parquet::FileFooter footer = FixtureFooter();
  std::vector<size_t> fields;
  for (size_t f = 0; f < footer.schema.fields.size(); ++f) fields.push_back(f);
  auto group_get = [&](const std::string& file, size_t g) {
    const std::vector<parquet::ByteRange> reads = parquet::ChunkReads(footer, g, fields);
    EXPECT_EQ(reads.size(), 1u);
    return "GET /bkt/table/" + file + " HTTP/1.1 bytes=" + std::to_string(reads[0].offset) + "-" +
           std::to_string(reads[0].offset + reads[0].size - 1);
  };
  ASSERT_EQ(parquet::ChunkReads(footer, 0, fields).at(0).offset, 4u);
  const std::string whole = "bytes=0-" + std::to_string(size - 1);

  for (const bool guess : {true, false}) {
    SCOPED_TRACE(guess ? "guessed" : "not guessed");
    ScratchDir cache;
    const size_t before = s3.proxy->RequestsWithRanges().size();
    DatasetOptions o = ParquetOptions(cache.path(), "s3://bkt/table");
    o.peek_first_sample = true;
    o.guess_first_shard = guess;
    auto ds = StreamingDataset::Open(o);
    ASSERT_TRUE(ds.ok()) << ds.status().message();
    std::vector<std::string> bytes;
    std::vector<int64_t> ids = testing::ReadEpoch(**ds, 0, 0, 0, 1, 2, &bytes);
    ASSERT_EQ(ids.size(), kRows);
    for (size_t i = 0; i < ids.size(); ++i) {
      ASSERT_EQ(ids[i], static_cast<int64_t>(i));
      EXPECT_TRUE(bytes[i] == t.rows[i]) << i;
    }
    ds->reset();

    std::vector<std::string> lines = s3.proxy->RequestsWithRanges();
    lines.erase(lines.begin(), lines.begin() + static_cast<std::ptrdiff_t>(before));
    std::map<std::string, int> gets;
    size_t listed = 0, guessed = lines.size(), first_group = lines.size();
    for (size_t i = 0; i < lines.size(); ++i) {
      const std::string& l = lines[i];
      if (l.rfind("GET /bkt?", 0) == 0) {
        ++gets["(listing)"];
        listed = i;
        continue;
      }
      ++gets[l];
      if (l == "GET /bkt/table/a.parquet HTTP/1.1 bytes=4-" + std::to_string(size - 1)) guessed = i;
      if (l.find(".parquet") != std::string::npos && l.find(whole) == std::string::npos &&
          i != guessed) {
        first_group = std::min(first_group, i);
      }
    }
    std::map<std::string, int> expected = {
        {"(listing)", 2},
        {"GET /bkt/table/index.json HTTP/1.1 bytes=0-8388607", 1},
        {"GET /bkt/table/a.parquet HTTP/1.1 " + whole, 1},
        {"GET /bkt/table/part%3Db/c.parquet HTTP/1.1 " + whole, 1}};
    for (size_t g = guess ? 1 : 0; g < footer.chunk_ranges.size(); ++g) {
      expected[group_get("a.parquet", g)] = 1;
    }
    for (size_t g = 0; g < footer.chunk_ranges.size(); ++g) {
      expected[group_get("part%3Db/c.parquet", g)] = 1;
    }
    if (guess) {
      // The MDS guess of the same probe, a 404, and the Parquet one.
      expected["GET /bkt/table/shard.00000.mds HTTP/1.1 bytes=0-" +
               std::to_string(GuessedHeadBytes() - 1)] = 1;
      expected["GET /bkt/table/a.parquet HTTP/1.1 bytes=4-" + std::to_string(size - 1)] = 1;
      EXPECT_LT(listed, guessed);
      EXPECT_LT(guessed, first_group);
    }
    EXPECT_EQ(gets, expected);
  }
}

}  // namespace
}  // namespace sluice

namespace sluice {
namespace {

// A cold folder whose second file's footer is bad, read in order (its first
// file's head guessed beside the footers): the open fails with the footer's
// own error, exactly as without the guess.
TEST(ParquetStream, AGuessedHeadLeavesABadFootersErrorAsItWas) {
  ScratchDir remote;
  fs::copy_file(kFixture, fs::path(remote.path()) / "a.parquet");
  fs::copy_file(std::string(SLUICE_TEST_DATA_DIR) + "/parquet/bad_magic_tail.parquet",
                fs::path(remote.path()) / "b.parquet");
  for (const bool guess : {true, false}) {
    ScratchDir cache;
    DatasetOptions o = ParquetOptions(cache.path(), remote.path());
    o.peek_first_sample = true;
    o.guess_first_shard = guess;
    auto ds = StreamingDataset::Open(o);
    ASSERT_FALSE(ds.ok());
    EXPECT_EQ(ds.status().ToString(),
              "corrupt: stream 0 (" + cache.path() +
                  "): b.parquet: not a Parquet file: it ends in \"50415230\" (hex), not \"PAR1\"")
        << guess;
  }
}

}  // namespace
}  // namespace sluice

namespace sluice {
namespace {

// "bytes=A-B" lines of `read` cut into parts of `part` bytes, as the
// proxy logs a piece's GETs of a.parquet (sorted: the parts go at once).
std::vector<std::string> PartRequests(const parquet::ByteRange& read, uint64_t part) {
  std::vector<std::string> lines;
  for (uint64_t at = 0; at < read.size; at += part) {
    lines.push_back("GET /bkt/table/a.parquet HTTP/1.1 bytes=" + std::to_string(read.offset + at) +
                    "-" + std::to_string(read.offset + std::min(read.size, at + part) - 1));
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

// The row group a consumer waits on (the first row's peek) is read in parts
// of half the remote's part size, on twice the connections, unless the
// guessed head read beside the footers serves it: then in that head's
// parts, of the part size (the group is never asked again); a row group
// read ahead (a shard's open) in parts of the part size. Exact Ranges on
// the wire, step by step; the peeked rows and the opened groups' rows the
// file's own.
TEST(ParquetStreamMultiProcess, S3rverPeekedGroupComesInHalfPartsUnlessGuessedAGroupReadAheadInWholeParts) {
  std::string why = testing::NodeServersUnavailableReason();
  if (!why.empty()) GTEST_SKIP() << why;
  ScratchDir table, cache;
  fs::copy_file(kFixture, fs::path(table.path()) / "a.parquet");
  ProxiedS3rverTable s3;
  ASSERT_NO_FATAL_FAILURE(s3.Start(table.path()));
  const parquet::FileFooter footer = FixtureFooter();
  std::vector<size_t> fields;
  for (size_t f = 0; f < footer.schema.fields.size(); ++f) fields.push_back(f);
  std::vector<parquet::ByteRange> group;  // each row group's one read
  for (size_t g = 0; g < footer.chunk_ranges.size(); ++g) {
    const std::vector<parquet::ByteRange> reads = parquet::ChunkReads(footer, g, fields);
    ASSERT_EQ(reads.size(), 1u);
    group.push_back(reads[0]);
  }
  ASSERT_EQ(group[0].offset, 4u);
  ASSERT_GE(group.size(), 6u);
  // A part of two thirds of the smallest group: every group in at least 2
  // parts read ahead, in at least 3 waited on.
  uint64_t smallest = UINT64_MAX;
  for (const auto& r : group) smallest = std::min(smallest, r.size);
  const uint64_t part = 2 * (smallest / 3), half = part / 2;
  ASSERT_GE(half, 16u);

  StreamOptions stream = ParquetOptions(cache.path(), "s3://bkt/table").streams[0];
  stream.parquet.emplace();
  StoreOptions store;
  store.part_size = part;
  auto remote = OpenRemoteSource(stream.remote, store);
  ASSERT_TRUE(remote.ok()) << remote.status().ToString();
  std::shared_ptr<RemoteSource> shared_remote = std::move(*remote);
  auto index = LoadStreamIndex(stream, shared_remote.get(), std::chrono::seconds(20));
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  auto shared_index = std::make_shared<const ShardTable>(std::move(*index));
  auto shards = StreamShards::Open(stream, shared_index, shared_remote, std::nullopt,
                                   std::chrono::seconds(20));
  ASSERT_TRUE(shards.ok()) << shards.status().ToString();
  auto whole = StreamingDataset::Open(ParquetOptions(table.path()));
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  std::vector<uint64_t> first_row = {0};  // each row group's first row's id
  for (const auto& g : footer.meta.row_groups) {
    first_row.push_back(first_row.back() + static_cast<uint64_t>(g.num_rows));
  }
  const uint64_t size = fs::file_size(kFixture);
  auto requests_since = [&](size_t from) {
    std::vector<std::string> lines = s3.proxy->RequestsWithRanges();
    lines.erase(lines.begin(), lines.begin() + static_cast<std::ptrdiff_t>(from));
    std::sort(lines.begin(), lines.end());
    return lines;
  };
  auto expect_rows = [&](size_t shard, const SampleFields& row, uint32_t i) {
    ASSERT_EQ(shared_index->entry(shard).row_group.value_or(99), shard);
    SampleFields w;
    ASSERT_TRUE((*whole)->Get(first_row[shard] + i, &w).ok());
    EXPECT_EQ(row.fields, w.fields) << shard << " " << i;
  };

  // The guess (of the version listed, as the index's): two parts of the
  // part size from byte 4, asked at once.
  auto listed = shared_remote->List("");
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  ASSERT_EQ(listed->size(), 1u);
  ASSERT_EQ(listed->at(0).size, size);
  size_t before = s3.proxy->RequestsWithRanges().size();
  (*shards)->KeepGuessedPieceHead(std::make_unique<GuessedPieceHead>(
      *shared_remote, RemoteKey(stream, "a.parquet"), "a.parquet",
      ObjectVersion(listed->at(0).etag, size)));
  // Row group 0 peeked: its parts are the guess's, then those past them,
  // all of the part size.
  auto peeked = (*shards)->PeekSample(0, 0);
  ASSERT_TRUE(peeked.ok()) << peeked.status().ToString();
  const uint64_t past = GuessedPieceHead::kParts * part;
  ASSERT_GT(group[0].size, past);
  std::vector<std::string> expected = PartRequests(parquet::ByteRange{4, past}, part);
  for (const std::string& l :
       PartRequests(parquet::ByteRange{4 + past, group[0].size - past}, part)) {
    expected.push_back(l);
  }
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(requests_since(before), expected);
  SampleFields peeked_row;
  peeked_row.fields = peeked->fields;
  expect_rows(0, peeked_row, 0);
  auto opened = (*shards)->OpenShard(0, fields.size());
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  (*shards)->PeekDone(0);
  EXPECT_EQ(requests_since(before), expected);  // the peek's bytes are the shard's

  // Row group 3 peeked, no guess left: in parts of half the part size.
  before = s3.proxy->RequestsWithRanges().size();
  peeked = (*shards)->PeekSample(3, 1);
  ASSERT_TRUE(peeked.ok()) << peeked.status().ToString();
  peeked_row.fields = peeked->fields;
  expect_rows(3, peeked_row, 1);
  EXPECT_EQ(requests_since(before), PartRequests(group[3], half));
  opened = (*shards)->OpenShard(3, fields.size());
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  (*shards)->PeekDone(3);
  EXPECT_EQ(requests_since(before), PartRequests(group[3], half));

  // Row group 5 opened, not peeked: read ahead, in parts of the part size.
  before = s3.proxy->RequestsWithRanges().size();
  opened = (*shards)->OpenShard(5, fields.size());
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  EXPECT_EQ(requests_since(before), PartRequests(group[5], part));
  ASSERT_GE(PartRequests(group[5], part).size(), 2u);
  ASSERT_GE(PartRequests(group[3], half).size(), 3u);
  const uint64_t rows5 = first_row[6] - first_row[5];
  for (uint32_t i = 0; i < rows5; ++i) {
    SampleFields row;
    ASSERT_TRUE((*opened)->Read(i, shared_index->entry(5).column_names, &row).ok());
    expect_rows(5, row, i);
  }
}

}  // namespace
}  // namespace sluice
