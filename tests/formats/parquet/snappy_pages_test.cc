// Snappy pages of incompressible byte arrays (pa26_snappy_random_v1's
// `blob`: random bytes, PLAIN, v1 pages of ~70 KB, a null every 9th row)
// are split into pieces and their values read in place (PageReader's
// DeferSnappyPieces): the values are the decompressed pages' bytes, and a
// damaged page fails as a decompressed one does, naming the file, column
// and page.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "base/file.h"
#include "formats/parquet/column_chunk_decoder.h"
#include "formats/parquet/page_reader.h"
#include "formats/parquet/parquet_shard_reader.h"
#include "tests/formats/parquet/fixture_chunk.h"

namespace sluice::parquet {
namespace {

struct RandomFile : testing::FixtureChunk {
  std::vector<uint64_t> pages;   // deferred pages' header offsets in the file
  std::vector<uint64_t> blocks;  // and their snappy blocks' offsets
  std::vector<std::string> values;  // every PLAIN value, from decompressed pages
  std::vector<uint64_t> first_length;  // each page's first value's length, in the file
};

RandomFile LoadRandomFile() {
  RandomFile fx;
  static_cast<testing::FixtureChunk&>(fx) = testing::LoadFixtureChunk("pa26_snappy_random_v1.parquet", "blob");
  const std::string_view chunk = fx.chunk();
  PageReader deferred(chunk, fx.range.offset, CompressionCodec::kSnappy, "walk");
  deferred.ReservePageBuffer(uint64_t{1} << 24);
  deferred.DeferSnappyPieces();
  PageReader whole(chunk, fx.range.offset, CompressionCodec::kSnappy, "walk");
  Page page, decompressed;
  while (*deferred.Next(&page)) {
    EXPECT_TRUE(*whole.Next(&decompressed));
    if (page.pieces.empty()) continue;
    EXPECT_EQ(page.header.type, PageType::kDataPage);
    fx.pages.push_back(page.file_offset);
    fx.blocks.push_back(fx.range.offset + static_cast<uint64_t>(page.compressed.data() - chunk.data()));
    std::string joined;
    for (std::string_view p : page.pieces) joined += p;
    EXPECT_EQ(joined, decompressed.body);
    // v1: the definition levels with their 4-byte length, then the values.
    uint32_t n = 0;
    std::memcpy(&n, joined.data(), 4);
    EXPECT_GE(page.pieces[0].size(), 8 + n);  // a literal, in the chunk
    fx.first_length.push_back(fx.range.offset + static_cast<uint64_t>(page.pieces[0].data() - chunk.data()) + 4 + n);
    std::string_view values = std::string_view(joined).substr(4 + n);
    while (!values.empty()) {
      std::memcpy(&n, values.data(), 4);
      fx.values.emplace_back(values.substr(4, n));
      values.remove_prefix(4 + size_t{n});
    }
  }
  return fx;
}

std::string Decode(const RandomFile& fx, const std::string& bytes, ColumnBuffer* out = nullptr) {
  const std::string_view chunk = std::string_view(bytes).substr(fx.range.offset, fx.range.size);
  Result<ColumnBuffer> b = DecodeColumnChunk(fx.footer, 0, fx.field, chunk, "f.parquet");
  if (!b.ok()) return b.status().ToString();
  if (out != nullptr) *out = std::move(b).value();
  return "ok";
}

TEST(SnappyPages, ValuesInPlaceAreTheDecompressedPagesBytes) {
  const RandomFile fx = LoadRandomFile();
  ASSERT_FALSE(fx.pages.empty());
  ColumnBuffer b;
  ASSERT_EQ(Decode(fx, fx.bytes, &b), "ok");
  const std::string_view chunk = std::string_view(fx.bytes).substr(fx.range.offset, fx.range.size);
  // Every data page is in pieces: the present values are theirs.
  std::vector<std::string_view> present;
  for (size_t i = 0; i < b.binary.size(); ++i) {
    if (b.validity[i]) present.push_back(b.binary[i]);
  }
  EXPECT_EQ(b.binary.size(), 100u);
  ASSERT_EQ(present.size(), fx.values.size());
  size_t in_place = 0;
  for (size_t i = 0; i < present.size(); ++i) {
    const std::string_view v = present[i];
    ASSERT_EQ(v, fx.values[i]) << i;
    if (v.data() >= chunk.data() && v.data() + v.size() <= chunk.data() + chunk.size()) ++in_place;
  }
  EXPECT_EQ(present.size(), 89u);  // a null every 9th row
  EXPECT_GT(in_place, 80u);  // all but those that straddle two pieces
}

TEST(SnappyPages, ADamagedPageFailsAsWhenDecompressed) {
  const RandomFile fx = LoadRandomFile();
  ASSERT_FALSE(fx.pages.empty());
  const uint64_t page = fx.pages[0];
  const uint64_t block = fx.blocks[0];
  const std::string where = "corrupt: f.parquet: row group 0 column \"blob\": page at offset " +
                            std::to_string(page) + ": ";
  // The header's declared size, one more than the page's: refused.
  std::string bad = fx.bytes;
  ASSERT_EQ(static_cast<uint8_t>(bad[block]) & 0x80, 0x80);
  bad[block] = static_cast<char>(bad[block] + 1);
  EXPECT_EQ(Decode(fx, bad), where + "snappy data is corrupt: the header declares 89140 bytes, more than the expected raw size of 89139");
  // The first tag made a copy from before the start.
  bad = fx.bytes;
  size_t tag = block;
  while (static_cast<uint8_t>(bad[tag]) & 0x80) ++tag;
  ++tag;
  bad[tag] = static_cast<char>(0x01);
  EXPECT_EQ(Decode(fx, bad), where + "snappy data is corrupt: the copy at offset 3 reaches back 255 bytes, but only 0 exist");
  // A value's length past the page's end: the PLAIN decoder's error.
  bad = fx.bytes;
  const uint32_t length = 0x7fffffff;
  std::memcpy(bad.data() + fx.first_length[0], &length, 4);
  EXPECT_EQ(Decode(fx, bad), where + "PLAIN at offset 0: byte array 0 of 89 has length 2147483647; expected 0 to the 89115 bytes left");
}

// hf_image's `image` (JPEGs of up to ~110 KB in a snappy dictionary page):
// the dictionary is read in place, and its values that straddle snappy's
// literals are copied when their row is first read (defer_large_gathers,
// as the shard reader decodes): every row, read by four threads at once,
// is the bytes of the column decoded without deferring.
TEST(SnappyPages, LargeDictionaryValuesCopiedWhenReadAreTheDecodedBytes) {
  const testing::FixtureChunk fx = testing::LoadFixtureChunk("hf_image.parquet", "image");
  Result<ColumnBuffer> eager = DecodeColumnChunk(fx.footer, 0, fx.field, fx.chunk(), "f.parquet");
  ASSERT_TRUE(eager.ok()) << eager.status().ToString();
  EXPECT_TRUE(eager->deferred.empty());
  ColumnDecodeOptions o;
  o.defer_large_gathers = true;
  Result<ColumnBuffer> lazy = DecodeColumnChunk(fx.footer, 0, fx.field, fx.chunk(), "f.parquet", o);
  ASSERT_TRUE(lazy.ok()) << lazy.status().ToString();
  EXPECT_GT(lazy->deferred.size(), 0u);
  const uint32_t rows = static_cast<uint32_t>(fx.footer.meta.row_groups[0].num_rows);
  ASSERT_EQ(eager->binary.size(), rows);
  Result<ParquetShardReader> reader = ParquetShardReader::Open(fx.bytes, "f.parquet", 0, rows, {}, {"image"});
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (uint32_t t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::vector<std::string_view> fields;
      for (uint32_t i = 0; i < rows; ++i) {
        const uint32_t row = (i + t) % rows;
        if (!reader->ReadRow(row, &fields).ok() || fields[0] != eager->binary[row]) ++mismatches[t];
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(mismatches, std::vector<int>(4, 0));
  size_t large = 0;
  for (std::string_view v : eager->binary) large += v.size() >= DeferredGathers::kFrom;
  EXPECT_GE(large, lazy->deferred.size());
}

// The same values read with a RowScratch (views valid until the next read,
// as the engine's batches read them): a value that straddles literals is
// copied into the scratch, not into place, and every row is its exact bytes
// whatever came before it: rows by growing size (the scratch reallocated),
// then shrinking (reused), then each row again after a row whose value is
// another. Then threads read with and without scratches at once; once the
// lasting read has copied a value into place, the scratch read hands out
// that place.
TEST(SnappyPages, LargeValuesReadUntilTheNextReadAreTheDecodedBytes) {
  const testing::FixtureChunk fx = testing::LoadFixtureChunk("hf_image.parquet", "image");
  Result<ColumnBuffer> eager = DecodeColumnChunk(fx.footer, 0, fx.field, fx.chunk(), "f.parquet");
  ASSERT_TRUE(eager.ok()) << eager.status().ToString();
  const uint32_t rows = static_cast<uint32_t>(fx.footer.meta.row_groups[0].num_rows);
  Result<ParquetShardReader> reader = ParquetShardReader::Open(fx.bytes, "f.parquet", 0, rows, {}, {"image"});
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  std::vector<uint32_t> order(rows);
  for (uint32_t i = 0; i < rows; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
    return eager->binary[x].size() < eager->binary[y].size();
  });
  std::vector<uint32_t> reads = order;
  reads.insert(reads.end(), order.rbegin(), order.rend());
  for (uint32_t i = 0; i < rows; ++i) {
    reads.push_back(i);
    reads.push_back((i + rows / 2) % rows);
  }
  RowScratch scratch;
  std::vector<std::string_view> fields;
  size_t in_scratch = 0, mismatches = 0;
  for (uint32_t row : reads) {
    ASSERT_TRUE(reader->ReadRow(row, &fields, nullptr, &scratch).ok());
    ASSERT_EQ(fields.size(), 1u);
    ASSERT_EQ(scratch.columns.size(), 1u);
    if (fields[0] != eager->binary[row]) ++mismatches;
    if (fields[0].data() == scratch.columns[0].data()) {
      ++in_scratch;
      EXPECT_GE(fields[0].size(), DeferredGathers::kFrom);
    }
  }
  EXPECT_EQ(mismatches, 0u);
  EXPECT_GT(in_scratch, 0u);
  // The lasting read copies each into place; the scratch is then unused.
  // Threads reading with scratches of their own beside threads whose
  // lasting reads copy the same values into place (under ASan in CI).
  std::vector<std::thread> threads;
  std::vector<int> wrong(4, 0);
  for (uint32_t t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      RowScratch own;
      std::vector<std::string_view> got;
      for (uint32_t i = 0; i < rows; ++i) {
        const uint32_t row = (i * 7 + t) % rows;
        if (!reader->ReadRow(row, &got, nullptr, t % 2 ? &own : nullptr).ok() ||
            got[0] != eager->binary[row]) {
          ++wrong[t];
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong, std::vector<int>(4, 0));
  for (uint32_t row = 0; row < rows; ++row) {
    ASSERT_TRUE(reader->ReadRow(row, &fields).ok());
    ASSERT_EQ(fields[0], eager->binary[row]);
    const char* lasting = fields[0].data();
    ASSERT_TRUE(reader->ReadRow(row, &fields, nullptr, &scratch).ok());
    EXPECT_EQ(fields[0].data(), lasting) << row;
    EXPECT_EQ(fields[0], eager->binary[row]);
  }
}

// The same values read as pieces (a consumer that copies each value
// anyway): a value that straddles literals is copied nowhere; its field is
// listed with its pieces, nearly all views of the file's literals, that add
// up to its exact bytes, and the scratch is not used. Every row, twice, in any
// order; with threads reading pieces beside lasting reads, which copy the
// values into place: from then on a value is its ordinary view, no pieces.
TEST(SnappyPages, LargeValuesReadAsPiecesAreTheDecodedBytes) {
  const testing::FixtureChunk fx = testing::LoadFixtureChunk("hf_image.parquet", "image");
  Result<ColumnBuffer> eager = DecodeColumnChunk(fx.footer, 0, fx.field, fx.chunk(), "f.parquet");
  ASSERT_TRUE(eager.ok()) << eager.status().ToString();
  const uint32_t rows = static_cast<uint32_t>(fx.footer.meta.row_groups[0].num_rows);
  Result<ParquetShardReader> reader = ParquetShardReader::Open(fx.bytes, "f.parquet", 0, rows, {}, {"image"});
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  const std::string_view file = fx.bytes;
  RowScratch scratch;
  std::vector<std::string_view> fields;
  std::vector<PiecedField> pieced;
  size_t in_pieces = 0, mismatches = 0;
  for (uint32_t read = 0; read < 2 * rows; ++read) {
    const uint32_t row = read < rows ? read : (read * 5) % rows;
    ASSERT_TRUE(reader->ReadRow(row, &fields, nullptr, &scratch, &pieced).ok());
    ASSERT_EQ(fields.size(), 1u);
    ASSERT_LE(pieced.size(), 1u);
    if (pieced.empty()) {
      if (fields[0] != eager->binary[row]) ++mismatches;
      continue;
    }
    ++in_pieces;
    EXPECT_EQ(pieced[0].field.data(), fields[0].data());
    EXPECT_EQ(pieced[0].field.size(), eager->binary[row].size());
    EXPECT_GE(fields[0].size(), DeferredGathers::kFrom);
    EXPECT_GE(pieced[0].pieces.size(), 2u);
    std::string joined;
    size_t in_file = 0;
    for (std::string_view p : pieced[0].pieces) {
      // Literals are views of the file; snappy's few short copies lie in
      // the reader's buffer.
      if (p.data() >= file.data() && p.data() + p.size() <= file.data() + file.size()) {
        in_file += p.size();
      }
      joined += p;
    }
    EXPECT_GE(in_file, joined.size() * 9 / 10);
    if (joined != eager->binary[row]) ++mismatches;
  }
  EXPECT_EQ(mismatches, 0u);
  EXPECT_GT(in_pieces, 0u);
  // Nothing was copied into the scratch.
  ASSERT_EQ(scratch.columns.size(), 1u);
  EXPECT_EQ(scratch.columns[0].size(), 0u);
  std::vector<std::thread> threads;
  std::vector<int> wrong(4, 0);
  for (uint32_t t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::vector<std::string_view> got;
      std::vector<PiecedField> pieces;
      for (uint32_t i = 0; i < rows; ++i) {
        const uint32_t row = (i * 7 + t) % rows;
        if (!reader->ReadRow(row, &got, nullptr, nullptr, t % 2 ? &pieces : nullptr).ok()) {
          ++wrong[t];
          continue;
        }
        std::string value(got[0]);
        if (!pieces.empty()) {
          value.clear();
          for (std::string_view p : pieces[0].pieces) value += p;
        }
        if (value != eager->binary[row]) ++wrong[t];
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong, std::vector<int>(4, 0));
  for (uint32_t row = 0; row < rows; ++row) {
    ASSERT_TRUE(reader->ReadRow(row, &fields).ok());
    ASSERT_TRUE(reader->ReadRow(row, &fields, nullptr, nullptr, &pieced).ok());
    EXPECT_TRUE(pieced.empty()) << row;
    EXPECT_EQ(fields[0], eager->binary[row]);
  }
}

}  // namespace
}  // namespace sluice::parquet
