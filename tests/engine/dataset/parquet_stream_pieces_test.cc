// A local Parquet folder's table made as its tails are read (no footer
// store: PiecesOfReadTails), piece by piece: every row group's piece
// (file, sizes, chunk reads' offset and length, tail, etag), its name and
// its configuration exact, over files of 3, 1 and 2 row groups and three
// schemas in turn, with names of every length (escaped, and hashed past
// the longest kept). Enough files that the readers fill answers the
// writer gave back, each after a file of another row group count.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "base/file.h"
#include "engine/dataset/parquet_footer_store.h"
#include "engine/dataset/parquet_stream_index.h"
#include "engine/dataset/remote_source.h"
#include "formats/parquet/chunk_reads.h"
#include "formats/parquet/footer.h"
#include "tests/common/temp_dir.h"
#include "tests/engine/dataset/dataset_test_util.h"

namespace sluice {
namespace {

struct PiecesFixture {
  std::string bytes;
  parquet::FileFooter footer;
  uint64_t tail_bytes = 0;
  std::vector<std::string> columns;
};

PiecesFixture PiecesFixtureOf(const std::string& name) {
  PiecesFixture f;
  auto bytes = ReadFile(std::string(SLUICE_TEST_DATA_DIR) + "/parquet/" + name);
  EXPECT_TRUE(bytes.ok()) << name;
  f.bytes = *bytes;
  parquet::RangeReader read = [&](uint64_t offset, uint64_t size, std::string* out) {
    out->assign(f.bytes, offset, size);
    return Status::Ok();
  };
  auto footer = parquet::ReadFooter(f.bytes.size(), read, name);
  EXPECT_TRUE(footer.ok()) << name;
  f.footer = *footer;
  uint32_t length = 0;
  std::memcpy(&length, f.bytes.data() + f.bytes.size() - 8, 4);
  f.tail_bytes = uint64_t{length} + 8;
  for (const parquet::Field& field : f.footer.schema.fields) f.columns.push_back(field.name);
  return f;
}

TEST(ParquetStreamPieces, ATableMadeAsTheTailsAreReadHoldsEveryRowGroupsPieceExactly) {
  // Row groups: 3 (16, 16, 8 rows), 1 (60) and 2 (8, 8).
  const std::vector<PiecesFixture> kinds = {PiecesFixtureOf("pa12_lists_v1.parquet"),
                                            PiecesFixtureOf("pa26_codec_none.parquet"),
                                            PiecesFixtureOf("hf_image.parquet")};
  ASSERT_EQ(kinds[0].footer.meta.row_groups.size(), 3u);
  ASSERT_EQ(kinds[1].footer.meta.row_groups.size(), 1u);
  ASSERT_EQ(kinds[2].footer.meta.row_groups.size(), 2u);
  testing::ScratchDir remote, cache;
  struct Written {
    std::string name;
    size_t kind;
  };
  std::vector<Written> written;
  for (size_t i = 0; i < 700; ++i) {
    // A name of 10 to ~250 bytes, some with '%' (escaped in piece names).
    std::string name = "f" + std::to_string(1000 + i) + (i % 5 == 0 ? "%25" : "") +
                       std::string((i * 37) % 240, 'a' + static_cast<char>(i % 26)) + ".parquet";
    const size_t kind = (i + i / 7) % 3;
    ASSERT_TRUE(WriteFileAtomic(JoinPath(remote.path(), name), kinds[kind].bytes).ok()) << name;
    written.push_back({name, kind});
  }
  std::sort(written.begin(), written.end(),
            [](const Written& a, const Written& b) { return a.name < b.name; });
  auto source = OpenRemoteSource(remote.path(), StoreOptions{});
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  ASSERT_FALSE(KeepsParquetFooterStore(**source)) << "the scratch folder is not on a local disk";
  StreamOptions stream;
  stream.local = cache.path();
  stream.remote = remote.path();
  auto table = LoadParquetStreamTable(stream, FileDatasetOptions{}, source->get(),
                                      std::chrono::seconds(20));
  ASSERT_TRUE(table.ok()) << table.status().ToString();

  std::vector<size_t> fields;  // every column: the kinds' schemas differ
  size_t shard = 0;
  for (const Written& w : written) {
    const PiecesFixture& kind = kinds[w.kind];
    fields.clear();
    for (size_t f = 0; f < kind.footer.schema.fields.size(); ++f) fields.push_back(f);
    const std::string etag = testing::TagOf(remote.path(), w.name);
    for (uint32_t rg = 0; rg < kind.footer.meta.row_groups.size(); ++rg, ++shard) {
      SCOPED_TRACE(w.name + " row group " + std::to_string(rg));
      ASSERT_LT(shard, table->size());
      const std::vector<parquet::ByteRange> reads = parquet::ChunkReads(kind.footer, rg, fields);
      ASSERT_FALSE(reads.empty());
      const ShardRef ref = table->ref(shard);
      EXPECT_EQ(ref.samples, static_cast<uint64_t>(kind.footer.meta.row_groups[rg].num_rows));
      EXPECT_EQ(ref.row_group, std::optional<uint32_t>(rg));
      EXPECT_EQ(ref.raw_data.basename, RowGroupPieceName(w.name, rg, {}, etag));
      ASSERT_TRUE(ref.piece.has_value());
      EXPECT_EQ(ref.piece->file, w.name);
      EXPECT_EQ(ref.piece->file_bytes, kind.bytes.size());
      EXPECT_EQ(ref.piece->offset, reads.front().offset);
      EXPECT_EQ(ref.piece->length, parquet::BytesOfReads(reads));
      EXPECT_EQ(ref.piece->tail_bytes, kind.tail_bytes);
      EXPECT_EQ(ref.piece->etag, etag);
      EXPECT_EQ(ref.raw_data.bytes, ref.piece->length + kind.tail_bytes);
      EXPECT_EQ(table->config(shard).column_names, kind.columns);
    }
  }
  EXPECT_EQ(shard, table->size());
  // One configuration a schema, however the shards alternate.
  EXPECT_EQ(table->num_configs(), 3u);
}

}  // namespace
}  // namespace sluice
