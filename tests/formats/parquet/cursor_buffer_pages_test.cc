// The page size a chunk's values buffer is mapped in: a ColumnChunkCursor
// (the first-row peek) writes it a page at a time, so in 4 KiB pages; the
// whole chunk's decode fills it whole, so in 2 MiB pages (issue 35). Read
// from what the kernel recorded (/proc/self/smaps), on a hand-made chunk
// whose values buffer is over UninitializedBuffer's 4 MiB threshold.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "base/bytes.h"
#include "formats/parquet/column_chunk_decoder.h"
#include "formats/parquet/footer.h"
#include "tests/base/page_advice.h"
#include "tests/formats/parquet/test_footer.h"
#include "tests/formats/parquet/thrift_test_writer.h"

namespace sluice::parquet {
namespace {

// 1M + 4096 int32 values, all the dictionary's entry 0: a values buffer of
// 4 MiB and more, from a chunk of ~64 KiB (the decoder bounds the buffer by
// 64 times the chunk's bytes).
constexpr int32_t kCursorPagesDictionary = 16384;
constexpr int32_t kCursorPagesValues = (1 << 20) + 4096;

std::string CursorPagesHeader(int32_t type, size_t body, int16_t header_field, int32_t count,
                              int32_t encoding) {
  testing::ThriftWriter w;
  w.BeginStruct();
  w.I32(1, type);
  w.I32(2, static_cast<int32_t>(body));
  w.I32(3, static_cast<int32_t>(body));
  w.Struct(header_field);
  w.I32(1, count);
  w.I32(2, encoding);
  if (type == 0) {  // a v1 data page: its levels' encodings (RLE; none stored)
    w.I32(3, 3);
    w.I32(4, 3);
  }
  w.EndStruct();
  w.EndStruct();
  return w.bytes;
}

// The chunk: a PLAIN dictionary page of entries i * 7 + 1, then one
// RLE_DICTIONARY data page: bit width 14, one RLE run of index 0.
std::string CursorPagesChunk() {
  std::string dictionary;
  for (int32_t i = 0; i < kCursorPagesDictionary; ++i) AppendLE<uint32_t>(dictionary, i * 7 + 1);
  std::string data(1, '\x0e');
  for (uint64_t v = uint64_t{kCursorPagesValues} << 1; ; v >>= 7) {
    data.push_back(static_cast<char>((v & 0x7f) | (v >= 0x80 ? 0x80 : 0)));
    if (v < 0x80) break;
  }
  data.append(2, '\0');
  return CursorPagesHeader(2, dictionary.size(), 7, kCursorPagesDictionary, 0) + dictionary +
         CursorPagesHeader(0, data.size(), 5, kCursorPagesValues, 8) + data;
}

struct CursorPagesFile {
  std::string chunk = CursorPagesChunk();
  std::string bytes;
  Result<FileFooter> footer = InternalError("not read");

  CursorPagesFile() {
    testing::TestFooterSpec spec;
    spec.chunk_size = static_cast<int64_t>(chunk.size());
    spec.rows = spec.footer_rows = kCursorPagesValues;
    const std::string metadata = testing::TestFooter(spec);
    bytes = "PAR1" + chunk + metadata;
    AppendLE<uint32_t>(bytes, static_cast<uint32_t>(metadata.size()));
    bytes += "PAR1";
    RangeReader read = [&](uint64_t offset, uint64_t size, std::string* out) {
      out->assign(bytes.substr(offset, size));
      return Status::Ok();
    };
    footer = ReadFooter(bytes.size(), read, "t.parquet");
  }
};

TEST(CursorBufferPages, ACursorsValuesAreIn4KiBPagesTheWholeDecodesIn2MiB) {
  if (!sluice::testing::KernelTakesHugePageAdvice()) GTEST_SKIP() << "no transparent huge pages";
  const CursorPagesFile f;
  ASSERT_TRUE(f.footer.ok()) << f.footer.status().ToString();
  ASSERT_GE(f.chunk.size(), size_t{64} << 10);
  const std::string first = std::string("\x01\0\0\0", 4);

  ColumnDecodeOptions lazy;
  lazy.lazy_rows = true;
  Result<std::unique_ptr<ColumnChunkCursor>> cursor =
      ColumnChunkCursor::Open(*f.footer, 0, 0, f.chunk, "t.parquet", lazy);
  ASSERT_TRUE(cursor.ok()) << cursor.status().ToString();
  ASSERT_TRUE((*cursor)->DecodeThrough(0).ok());
  ASSERT_FALSE((*cursor)->done());
  ASSERT_GE((*cursor)->HeldBytes(), uint64_t{4} << 20) << "the values buffer under 4 MiB";
  const std::string_view peeked = (*cursor)->buffer().fixed_value(0);
  EXPECT_EQ(peeked, first);
  EXPECT_TRUE(sluice::testing::HasVmFlag(peeked.data(), "nh"));
  EXPECT_FALSE(sluice::testing::HasVmFlag(peeked.data(), "hg"));
  ASSERT_TRUE((*cursor)->DecodeThrough(UINT64_MAX).ok());
  EXPECT_EQ((*cursor)->buffer().fixed_value(kCursorPagesValues - 1), first);

  Result<ColumnBuffer> whole = DecodeColumnChunk(*f.footer, 0, 0, f.chunk, "t.parquet");
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  ASSERT_GE(whole->values.size(), size_t{4} << 20);
  EXPECT_EQ(whole->fixed_value(0), first);
  EXPECT_TRUE(sluice::testing::HasVmFlag(whole->values.data(), "hg"));
  EXPECT_FALSE(sluice::testing::HasVmFlag(whole->values.data(), "nh"));
}

}  // namespace
}  // namespace sluice::parquet
