// Which decoded values are views into the column chunk's bytes, and that
// those views are exactly the values' bytes: every readable column chunk of
// every fixture is decoded, and its pages are walked again here, apart from
// the decoder (levels counted with the RLE decoder, PLAIN values split by
// hand), to say which bytes each present value must be.
//
//   PLAIN byte arrays in a page stored uncompressed: the very bytes of the
//     page (same address and length), across page boundaries, v1 and v2,
//     with nulls between them.
//   PLAIN fixed-width values in such a page: the same bytes; the same
//     address when the page has no null (else, for a column that is not a
//     list, the run is a copy with zeros for the nulls).
//   DELTA_LENGTH_BYTE_ARRAY values in such a page: inside the chunk.
//   PLAIN byte arrays of a snappy page of incompressible values: views of
//     the page's stored bytes where a value lies inside one literal, copies
//     where it does not (formats/codec/snappy_pieces.h).
//   Copies, never inside the chunk: values of other compressed pages, dictionary
//     indices gathered into fixed-width values, DELTA_BINARY_PACKED,
//     DELTA_BYTE_ARRAY and BYTE_STREAM_SPLIT values; dictionary byte arrays
//     view the dictionary page, so inside the chunk only when that page is
//     stored uncompressed.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "base/file.h"
#include "formats/parquet/encoding/rle_bit_packed.h"
#include "formats/parquet/page_reader.h"
#include "formats/parquet/parquet_shard_reader.h"
#include "formats/parquet/row_group_reader.h"
#include "formats/parquet/value_decoder.h"

namespace sluice::parquet {
namespace {

const std::string kFixtures = std::string(SLUICE_TEST_DATA_DIR) + "/parquet";

std::vector<std::string> FixtureFiles() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(kFixtures)) {
    const std::string name = e.path().filename().string();
    if (e.path().extension() == ".parquet" && name.rfind("bad_", 0) != 0) out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// One data page as walked here.
struct PageFacts {
  Encoding encoding = Encoding::kPlain;
  bool v2 = false;
  bool stored_plain = false;  // its values lie in the chunk as stored
  size_t entries = 0;         // level entries (num_values)
  size_t present = 0;         // non-null leaf values
  std::vector<std::string_view> plain;  // PLAIN: each present value's bytes
  uint64_t begin = 0, end = 0;          // where the page (header included) lies in the chunk
};

struct WalkedChunk {
  std::vector<PageFacts> pages;
  std::string_view dictionary;  // the dictionary page's body when stored uncompressed
  uint64_t dictionary_begin = 0, dictionary_end = 0;  // where its page lies in the chunk
};

size_t CountPresent(RleBitPackedDecoder d, size_t n, int16_t max) {
  std::vector<uint32_t> levels(n);
  EXPECT_TRUE(d.Decode(n, levels.data()).ok());
  return static_cast<size_t>(std::count(levels.begin(), levels.end(), static_cast<uint32_t>(max)));
}

WalkedChunk WalkPages(std::string_view chunk, const ColumnMetaData& meta, const LeafColumn& leaf) {
  WalkedChunk out;
  PageReader reader(chunk, 0, meta.codec, "walk");
  Page page;
  const int rep_width = leaf.max_repetition_level ? std::bit_width(uint32_t(leaf.max_repetition_level)) : 0;
  const int def_width = leaf.max_definition_level ? std::bit_width(uint32_t(leaf.max_definition_level)) : 0;
  const size_t width = FixedWidth(leaf);
  const auto in_chunk = [&](std::string_view v) {
    return v.data() >= chunk.data() && v.data() + v.size() <= chunk.data() + chunk.size();
  };
  while (true) {
    Result<bool> more = reader.Next(&page);
    EXPECT_TRUE(more.ok()) << more.status().ToString();
    if (!more.ok() || !*more) break;
    if (page.header.type == PageType::kDictionaryPage) {
      if (in_chunk(page.body)) out.dictionary = page.body;
      out.dictionary_begin = page.file_offset;
      out.dictionary_end = chunk.size();  // until the first data page
      continue;
    }
    if (out.pages.empty() && out.dictionary_end == chunk.size()) out.dictionary_end = page.file_offset;
    PageFacts f;
    f.begin = page.file_offset;
    f.end = chunk.size();
    if (!out.pages.empty() && out.pages.back().end == chunk.size()) out.pages.back().end = f.begin;
    f.v2 = page.header.type == PageType::kDataPageV2;
    f.encoding = f.v2 ? page.header.data_page_header_v2->encoding : page.header.data_page_header->encoding;
    f.entries = static_cast<size_t>(f.v2 ? page.header.data_page_header_v2->num_values
                                         : page.header.data_page_header->num_values);
    f.stored_plain = in_chunk(page.body);
    std::string_view values = page.body;
    f.present = f.entries;
    if (f.v2) {
      if (def_width) {
        f.present = CountPresent(*RleBitPackedDecoder::Create(page.definition_levels, def_width),
                                 f.entries, leaf.max_definition_level);
      }
    } else {
      size_t used = 0;
      if (rep_width) {
        EXPECT_TRUE(RleBitPackedDecoder::CreateWithLengthPrefix(values, rep_width, &used).ok());
        values.remove_prefix(used);
      }
      if (def_width) {
        f.present = CountPresent(*RleBitPackedDecoder::CreateWithLengthPrefix(values, def_width, &used),
                                 f.entries, leaf.max_definition_level);
        values.remove_prefix(used);
      }
    }
    if (f.encoding == Encoding::kPlain && leaf.physical_type == PhysicalType::kByteArray) {
      for (size_t i = 0; i < f.present; ++i) {
        uint32_t n = 0;
        std::memcpy(&n, values.data(), 4);
        f.plain.push_back(values.substr(4, n));
        values.remove_prefix(4 + size_t{n});
      }
      EXPECT_TRUE(values.empty());
    } else if (f.encoding == Encoding::kPlain && width > 0 && leaf.physical_type != PhysicalType::kBoolean) {
      for (size_t i = 0; i < f.present; ++i) f.plain.push_back(values.substr(i * width, width));
    }
    out.pages.push_back(std::move(f));
  }
  return out;
}

TEST(ColumnViews, ViewsAreThePagesBytesAndCopiesWhereTheEncodingNeedsThem) {
  // Cases seen across the fixtures, each required below so that the test
  // keeps covering them.
  std::map<std::string, size_t> seen;
  for (const std::string& path : FixtureFiles()) {
    SCOPED_TRACE(path);
    const std::string bytes = *ReadFile(path);
    RangeReader read = [&](uint64_t offset, uint64_t size, std::string* out) {
      out->assign(bytes, offset, size);
      return Status::Ok();
    };
    Result<FileFooter> footer = ReadFooter(bytes.size(), read, path);
    ASSERT_TRUE(footer.ok()) << footer.status().ToString();
    for (size_t rg = 0; rg < footer->meta.row_groups.size(); ++rg) {
      for (size_t f = 0; f < footer->schema.fields.size(); ++f) {
        if (!ReadableField(footer->schema, f, path).ok()) continue;
        // One field: its read is exactly its chunk, the buffer's source.
        Result<std::vector<ColumnBuffer>> r = ReadRowGroup(*footer, rg, {f}, read, path);
        ASSERT_TRUE(r.ok()) << r.status().ToString();
        const ColumnBuffer& b = (*r)[0];
        if (!b.source) continue;  // an empty chunk
        const std::string_view chunk(*b.source);
        const LeafColumn& leaf = b.leaf;
        SCOPED_TRACE(leaf.path + " row group " + std::to_string(rg));
        const WalkedChunk walked = WalkPages(chunk, footer->chunk(rg, footer->schema.fields[f].first_leaf), leaf);
        const auto inside = [&](std::string_view v) {
          return v.data() >= chunk.data() && v.data() + v.size() <= chunk.data() + chunk.size();
        };
        size_t slot = 0;
        const auto next_present = [&]() {
          while (!b.validity[slot]) {
            EXPECT_TRUE(b.width > 0 || b.binary[slot].empty());  // nulls: "" (zeros if fixed)
            ++slot;
          }
          return slot++;
        };
        const bool binary = leaf.physical_type == PhysicalType::kByteArray;
        if (leaf.physical_type == PhysicalType::kBoolean) continue;
        for (size_t p = 0; p < walked.pages.size(); ++p) {
          const PageFacts& page = walked.pages[p];
          const bool dict = page.encoding == Encoding::kRleDictionary ||
                            page.encoding == Encoding::kPlainDictionary;
          const std::string kind = std::string(binary ? "binary" : "fixed") + (page.v2 ? " v2" : " v1");
          for (size_t k = 0; k < page.present; ++k) {
            const size_t i = next_present();
            const std::string_view v = binary ? b.binary[i] : b.fixed_value(i);
            if (page.stored_plain && page.encoding == Encoding::kPlain) {
              ASSERT_EQ(v, page.plain[k]) << "page " << p << " value " << k;
              if (binary || page.present == page.entries) {
                ASSERT_EQ(static_cast<const void*>(v.data()), page.plain[k].data())
                    << "page " << p << " value " << k;
                ++seen["view " + kind];
                if (p > 0) ++seen["view " + kind + " after a page boundary"];
                if (page.present < page.entries) ++seen["view " + kind + " among nulls"];
              } else if (b.list_depth == 0) {  // (a list's entries are not all leaf slots)
                ASSERT_FALSE(inside(v)) << "page " << p << " value " << k;
                ++seen["copy fixed among nulls"];
              }
            } else if (!page.stored_plain && binary && page.encoding == Encoding::kPlain &&
                       inside(v)) {
              ASSERT_EQ(footer->chunk(rg, footer->schema.fields[f].first_leaf).codec,
                        CompressionCodec::kSnappy);
              ASSERT_GE(v.data(), chunk.data() + page.begin) << "page " << p << " value " << k;
              ASSERT_LE(v.data() + v.size(), chunk.data() + page.end) << "page " << p << " value " << k;
              ++seen["view " + kind + " of a snappy page"];
            } else if (!page.stored_plain && binary && dict && inside(v)) {
              // A snappy dictionary page of incompressible values is read in
              // place as a PLAIN data page is.
              ASSERT_EQ(footer->chunk(rg, footer->schema.fields[f].first_leaf).codec,
                        CompressionCodec::kSnappy);
              ASSERT_GE(v.data(), chunk.data() + walked.dictionary_begin) << "page " << p << " value " << k;
              ASSERT_LE(v.data() + v.size(), chunk.data() + walked.dictionary_end)
                  << "page " << p << " value " << k;
              ++seen["dictionary binary view of a snappy page"];
            } else if (!page.stored_plain) {
              ASSERT_FALSE(inside(v)) << "page " << p << " value " << k;
              ++seen["copy " + kind + " of a compressed page"];
            } else if (page.encoding == Encoding::kDeltaLengthByteArray) {
              ASSERT_TRUE(inside(v)) << "page " << p << " value " << k;
              ++seen["view " + kind + " DELTA_LENGTH_BYTE_ARRAY"];
            } else if (dict && binary) {
              const std::string_view d = walked.dictionary;
              ASSERT_EQ(!d.empty() && v.data() >= d.data() && v.data() + v.size() <= d.data() + d.size(),
                        inside(v));
              ++seen["dictionary binary"];
            } else if (dict || page.encoding == Encoding::kDeltaBinaryPacked ||
                       page.encoding == Encoding::kDeltaByteArray ||
                       page.encoding == Encoding::kByteStreamSplit) {
              ASSERT_FALSE(inside(v)) << "page " << p << " value " << k;
              ++seen["copy " + kind + " " + EncodingName(page.encoding)];
            }
          }
        }
        while (slot < b.leaf_slots()) ASSERT_FALSE(b.validity[slot++]);
      }
    }
  }
  std::string all;
  for (const auto& [what, n] : seen) all += what + ": " + std::to_string(n) + "\n";
  for (const char* want :
       {"view binary v1", "view binary v2", "view binary v1 after a page boundary",
        "view binary v1 among nulls", "view fixed v1", "view fixed v2",
        "view fixed v1 after a page boundary", "copy fixed among nulls",
        "copy binary v1 of a compressed page", "copy fixed v2 of a compressed page",
        "dictionary binary", "copy fixed v1 RLE_DICTIONARY", "copy fixed v2 DELTA_BINARY_PACKED",
        "copy binary v2 DELTA_BYTE_ARRAY", "copy fixed v2 BYTE_STREAM_SPLIT",
        "view binary v2 DELTA_LENGTH_BYTE_ARRAY", "view binary v1 of a snappy page",
        "dictionary binary view of a snappy page"}) {
    EXPECT_GT(seen[want], 0u) << want << " never seen; seen:\n" << all;
  }
}

// The shard reader hands a flat byte-array column's rows out as the views
// the buffer holds: in the file's bytes for an uncompressed PLAIN page, a
// null pointer for a null row.
TEST(ColumnViews, ShardReaderRowsAreTheFilesBytes) {
  const std::string path = kFixtures + "/duckdb_uncompressed.parquet";
  const std::string bytes = *ReadFile(path);
  RangeReader read = [&](uint64_t offset, uint64_t size, std::string* out) {
    out->assign(bytes, offset, size);
    return Status::Ok();
  };
  Result<FileFooter> footer = ReadFooter(bytes.size(), read, path);
  ASSERT_TRUE(footer.ok());
  size_t checked = 0, nulls = 0;
  for (size_t f = 0; f < footer->schema.fields.size(); ++f) {
    const Field& field = footer->schema.fields[f];
    const LeafColumn& leaf = footer->schema.leaves[field.first_leaf];
    if (leaf.physical_type != PhysicalType::kByteArray || field.list_depth != 0) continue;
    Result<ParquetShardReader> reader = ParquetShardReader::Open(
        bytes, "d.parquet", 0, static_cast<uint64_t>(footer->meta.row_groups[0].num_rows), {}, {field.name});
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    Result<std::vector<ColumnBuffer>> r = ReadRowGroup(*footer, 0, {f}, read, path);
    ASSERT_TRUE(r.ok());
    const ColumnBuffer& b = (*r)[0];
    std::vector<std::string_view> row;
    for (uint32_t i = 0; i < reader->num_rows(); ++i) {
      ASSERT_TRUE(reader->ReadRow(i, &row).ok());
      ASSERT_EQ(row.size(), 1u);
      if (!b.validity[i]) {
        EXPECT_EQ(row[0].data(), nullptr);
        ++nulls;
        continue;
      }
      EXPECT_EQ(row[0], b.binary[i]);
      const bool in_file = row[0].data() >= bytes.data() && row[0].data() <= bytes.data() + bytes.size();
      const bool in_read = b.binary[i].data() >= b.source->data() &&
                           b.binary[i].data() <= b.source->data() + b.source->size();
      EXPECT_EQ(in_file, in_read);
      checked += in_file;
    }
  }
  EXPECT_GT(checked, 0u);
  EXPECT_GT(nulls, 0u);
}

}  // namespace
}  // namespace sluice::parquet
