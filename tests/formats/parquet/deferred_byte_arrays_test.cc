// The values of a chunk's PLAIN byte-array pages are found together at the
// chunk's end (FindByteArrays): a bad page's error is still the first
// fault in file order, as when each page was decoded in turn, naming the
// page. Damage written into a real file's pages (pa26_plain_pages_v1:
// uncompressed, no CRCs, several PLAIN pages per byte-array column).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "base/file.h"
#include "formats/parquet/column_chunk_decoder.h"
#include "formats/parquet/page_reader.h"
#include "tests/formats/parquet/fixture_chunk.h"

namespace sluice::parquet {
namespace {

struct PlainPagesFile : testing::FixtureChunk {
  std::vector<uint64_t> pages;        // data pages' header offsets in the file
  std::vector<uint64_t> first_value;  // each one's first value's length, in the file
};

PlainPagesFile LoadPlainPagesFile() {
  PlainPagesFile fx;
  static_cast<testing::FixtureChunk&>(fx) =
      testing::LoadFixtureChunk("pa26_plain_pages_v1.parquet", "binary_prefixed");
  const std::string_view chunk = fx.chunk();
  const size_t leaf = fx.footer.schema.fields[fx.field].first_leaf;
  PageReader reader(chunk, fx.range.offset, fx.footer.chunk(0, leaf).codec, "walk");
  Page page;
  while (*reader.Next(&page)) {
    if (page.header.type != PageType::kDataPage) continue;
    EXPECT_FALSE(page.header.crc.has_value());
    EXPECT_EQ(page.header.data_page_header->encoding, Encoding::kPlain);
    // v1: the definition levels with their 4-byte length, then the values.
    const uint64_t body = fx.range.offset + static_cast<uint64_t>(page.body.data() - chunk.data());
    fx.pages.push_back(page.file_offset);
    fx.first_value.push_back(body + 4 + LoadLE<uint32_t>(page.body.data()));
  }
  return fx;
}

std::string DecodeDamaged(const PlainPagesFile& fx, const std::string& bytes) {
  const std::string_view chunk = std::string_view(bytes).substr(fx.range.offset, fx.range.size);
  Result<ColumnBuffer> b = DecodeColumnChunk(fx.footer, 0, fx.field, chunk, "f.parquet");
  return b.ok() ? "ok" : b.status().ToString();
}

void SetFirstLength(std::string* bytes, uint64_t at, uint32_t length) {
  std::memcpy(bytes->data() + at, &length, 4);  // little-endian hosts only
}

TEST(DeferredByteArrays, TheFirstBadPageInFileOrderIsNamed) {
  const PlainPagesFile fx = LoadPlainPagesFile();
  ASSERT_EQ(fx.pages.size(), 19u);
  ASSERT_EQ(fx.pages[0], 38542u);
  ASSERT_EQ(fx.pages[1], 39136u);
  ASSERT_EQ(fx.pages[2], 39940u);
  EXPECT_EQ(DecodeDamaged(fx, fx.bytes), "ok");
  const std::string column = "corrupt: f.parquet: row group 0 column \"binary_prefixed\": ";
  // A bad length in page 2 alone, then in page 0 too: page 0's is named.
  std::string bad = fx.bytes;
  SetFirstLength(&bad, fx.first_value[2], 0x7fffffff);
  EXPECT_EQ(DecodeDamaged(fx, bad), column +
            "page at offset 39940: PLAIN at offset 0: byte array 0 of 16 has length 2147483647; "
            "expected 0 to the 532 bytes left");
  SetFirstLength(&bad, fx.first_value[0], 0x80000000);
  const std::string page0 = column +
      "page at offset 38542: PLAIN at offset 0: byte array 0 of 16 has length -2147483648; "
      "expected 0 to the 500 bytes left";
  EXPECT_EQ(DecodeDamaged(fx, bad), page0);
  // Page 1's header unreadable, alone: its own error.
  std::string header = fx.bytes;
  std::memset(header.data() + fx.pages[1], 0xff, 8);
  EXPECT_EQ(DecodeDamaged(fx, header), column +
            "page at offset 39136: header: PageHeader field 0: offset 0: field of unknown type 15");
  // With page 0's bad length too: page 0's value comes first, though its
  // values are found only after page 1's header was read.
  SetFirstLength(&header, fx.first_value[0], 0x80000000);
  EXPECT_EQ(DecodeDamaged(fx, header), page0);
}

}  // namespace
}  // namespace sluice::parquet
