// The page reader on hand-made chunks: CRC checked, codecs, v2 levels
// before compressed values, and each size check's error.
#include "formats/parquet/page_reader.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <string>

#include "formats/codec/compression.h"
#include "tests/base/page_advice.h"
#include "tests/formats/parquet/thrift_test_writer.h"

namespace sluice::parquet {
namespace {

using testing::ThriftWriter;

std::string DictionaryPage(const std::string& stored, int32_t raw_size, std::optional<uint32_t> crc) {
  ThriftWriter w;
  w.BeginStruct();
  w.I32(1, 2);  // DICTIONARY_PAGE
  w.I32(2, raw_size);
  w.I32(3, static_cast<int32_t>(stored.size()));
  if (crc) w.I32(4, static_cast<int32_t>(*crc));
  w.Struct(7);
  w.I32(1, 1);
  w.I32(2, 0);
  w.EndStruct();
  w.EndStruct();
  return w.bytes + stored;
}

uint32_t Crc(const std::string& s) {
  return static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(s.data()), static_cast<uInt>(s.size())));
}

TEST(PageReader, UncompressedAndSnappyPagesWithCrc) {
  const std::string raw = "dictionary bytes";
  const std::string snappy = *Compress(*ParseCompression("snappy"), raw);
  const std::string chunk = DictionaryPage(raw, 16, Crc(raw));
  PageReader plain(chunk, 100, CompressionCodec::kUncompressed, "f.parquet: row group 0 column \"a\"");
  Page page;
  Result<bool> more = plain.Next(&page);
  ASSERT_TRUE(more.ok() && *more) << more.status().ToString();
  EXPECT_EQ(page.body, raw);
  EXPECT_EQ(page.body.data(), chunk.data() + chunk.size() - raw.size());  // not copied
  EXPECT_EQ(page.file_offset, 100u);
  EXPECT_FALSE(*plain.Next(&page));

  const std::string first = DictionaryPage(snappy, 16, Crc(snappy));
  const std::string two = first + DictionaryPage(snappy, 16, std::nullopt);
  PageReader compressed(two, 4, CompressionCodec::kSnappy, "c");
  ASSERT_TRUE(*compressed.Next(&page));
  EXPECT_EQ(page.body, raw);
  ASSERT_TRUE(page.storage != nullptr);
  ASSERT_TRUE(*compressed.Next(&page));
  EXPECT_EQ(page.body, raw);
  EXPECT_EQ(page.file_offset, 4 + first.size());
}

std::string FirstError(const std::string& chunk, CompressionCodec codec, PageLimits limits = {}) {
  PageReader r(chunk, 4, codec, "f.parquet: row group 0 column \"a\"", limits);
  Page page;
  while (true) {
    Result<bool> more = r.Next(&page);
    if (!more.ok()) return more.status().ToString();
    if (!*more) return "ok";
  }
}

TEST(PageReader, Errors) {
  const std::string raw = "dictionary bytes";
  std::string bad_crc = DictionaryPage(raw, 16, Crc(raw) ^ 1);
  EXPECT_EQ(FirstError(bad_crc, CompressionCodec::kUncompressed),
            "corrupt: f.parquet: row group 0 column \"a\": page at offset 4: CRC-32 of the page's 16 "
            "bytes is " + [&] { char b[9]; std::snprintf(b, 9, "%08x", Crc(raw)); return std::string(b); }() +
                ", the header says " + [&] { char b[9]; std::snprintf(b, 9, "%08x", Crc(raw) ^ 1); return std::string(b); }());
  PageLimits no_crc;
  no_crc.verify_crc = false;
  EXPECT_EQ(FirstError(bad_crc, CompressionCodec::kUncompressed, no_crc), "ok");
  const std::string page = DictionaryPage(raw, 16, std::nullopt);
  EXPECT_EQ(FirstError(page.substr(0, page.size() - 1), CompressionCodec::kUncompressed),
            "corrupt: f.parquet: row group 0 column \"a\": page at offset 4: 16 bytes of page after "
            "its header, 15 left in the column chunk");
  EXPECT_EQ(FirstError(DictionaryPage(raw, 17, std::nullopt), CompressionCodec::kUncompressed),
            "corrupt: f.parquet: row group 0 column \"a\": page at offset 4: 16 bytes stored "
            "uncompressed, the header says 17");
  PageLimits small;
  small.max_page_bytes = 10;
  EXPECT_EQ(FirstError(page, CompressionCodec::kUncompressed, small),
            "corrupt: f.parquet: row group 0 column \"a\": page at offset 4: a page of 16 bytes, more "
            "than the limit of 10");
  EXPECT_EQ(FirstError(page, CompressionCodec::kLzo),
            "unimplemented: f.parquet: row group 0 column \"a\": page at offset 4: compression LZO is "
            "not supported (UNCOMPRESSED, SNAPPY, GZIP, ZSTD, BROTLI, LZ4_RAW and LZ4 are)");
  const std::string zstd = *Compress(*ParseCompression("zstd"), raw);
  EXPECT_EQ(FirstError(DictionaryPage(zstd, 15, std::nullopt), CompressionCodec::kZstd),
            "corrupt: f.parquet: row group 0 column \"a\": page at offset 4: zstd data is corrupt: the "
            "frame header declares 16 bytes, more than the expected raw size of 15");
  EXPECT_EQ(FirstError(page + "\x15", CompressionCodec::kUncompressed),
            "corrupt: f.parquet: row group 0 column \"a\": page at offset " +
                std::to_string(4 + page.size()) +
                ": header: PageHeader field 1: offset 1: varint runs past the end of the input");
}

TEST(PageReader, PageBufferHoldsKeptPagesBackToBack) {
  const std::string a = "first page's bytes", b = "second";
  const Compression snappy = *ParseCompression("snappy");
  const std::string chunk = DictionaryPage(*Compress(snappy, a), static_cast<int32_t>(a.size()), std::nullopt) +
                            DictionaryPage(*Compress(snappy, b), static_cast<int32_t>(b.size()), std::nullopt) +
                            DictionaryPage(*Compress(snappy, b), static_cast<int32_t>(b.size()), std::nullopt);
  PageReader r(chunk, 0, CompressionCodec::kSnappy, "c");
  r.ReservePageBuffer(200);
  Page first, second, third;
  ASSERT_TRUE(*r.Next(&first));
  EXPECT_TRUE(first.in_page_buffer);
  EXPECT_EQ(first.storage, nullptr);
  r.KeepLastPage();
  ASSERT_TRUE(*r.Next(&second));  // not kept: the third page takes its place
  ASSERT_TRUE(*r.Next(&third));
  EXPECT_FALSE(*r.Next(&third));
  UninitializedBuffer pages = r.TakePageBuffer();
  ASSERT_EQ(pages.size(), 200u);
  EXPECT_EQ(first.body.data(), pages.data());
  EXPECT_EQ(first.body, a);
  EXPECT_EQ(second.body.data(), pages.data() + 64);  // on the next cache line
  EXPECT_EQ(third.body.data(), second.body.data());
  EXPECT_EQ(third.body, b);
}

// A page buffer from 4 MiB is mapped in the pages it was reserved with
// (a cursor's: 4 KiB, written a page at a time; issue 35).
TEST(PageReader, PageBufferIsMappedInThePagesReserved) {
  if (!sluice::testing::KernelTakesHugePageAdvice()) GTEST_SKIP() << "no transparent huge pages";
  const std::string raw = "a page's bytes";
  const std::string chunk = DictionaryPage(*Compress(*ParseCompression("snappy"), raw),
                                           static_cast<int32_t>(raw.size()), std::nullopt);
  for (const bool small : {true, false}) {
    SCOPED_TRACE(small ? "kSmall" : "kHuge");
    PageReader r(chunk, 0, CompressionCodec::kSnappy, "c");
    r.ReservePageBuffer((size_t{5} << 20) + 3, small ? UninitializedBuffer::Pages::kSmall
                                                     : UninitializedBuffer::Pages::kHuge);
    Page page;
    ASSERT_TRUE(*r.Next(&page));
    ASSERT_TRUE(page.in_page_buffer);
    EXPECT_EQ(page.body, raw);
    EXPECT_EQ(sluice::testing::HasVmFlag(page.body.data(), "nh"), small);
    EXPECT_EQ(sluice::testing::HasVmFlag(page.body.data(), "hg"), !small);
  }
}

TEST(PageReader, PageTooLargeForTheBufferGetsItsOwn) {
  const std::string raw(100, 'x');
  const std::string chunk = DictionaryPage(*Compress(*ParseCompression("zstd"), raw), 100, std::nullopt);
  PageReader r(chunk, 0, CompressionCodec::kZstd, "c");
  r.ReservePageBuffer(99);
  Page page;
  ASSERT_TRUE(*r.Next(&page));
  EXPECT_FALSE(page.in_page_buffer);
  ASSERT_NE(page.storage, nullptr);
  EXPECT_EQ(page.body, raw);
}

TEST(PageReader, PageBufferKeepsTheErrors) {
  const std::string raw = "dictionary bytes";
  for (const char* family : {"snappy", "zstd", "gz"}) {
    SCOPED_TRACE(family);
    const std::string stored = *Compress(*ParseCompression(family), raw);
    const CompressionCodec codec = std::string_view(family) == "snappy" ? CompressionCodec::kSnappy
                                   : std::string_view(family) == "zstd" ? CompressionCodec::kZstd
                                                                        : CompressionCodec::kGzip;
    for (int32_t size : {15, 17}) {
      const std::string chunk = DictionaryPage(stored, size, std::nullopt);
      PageReader with(chunk, 4, codec, "f.parquet: row group 0 column \"a\"");
      with.ReservePageBuffer(1000);
      Page page;
      Result<bool> got = with.Next(&page);
      ASSERT_FALSE(got.ok());
      EXPECT_EQ(got.status().ToString(), FirstError(chunk, codec));
    }
  }
  const std::string snappy = *Compress(*ParseCompression("snappy"), raw);
  const std::string chunk = DictionaryPage(snappy, 17, std::nullopt);
  PageReader r(chunk, 4, CompressionCodec::kSnappy, "c");
  r.ReservePageBuffer(1000);
  Page page;
  EXPECT_EQ(r.Next(&page).status().ToString(),
            "corrupt: c: page at offset 4: SNAPPY data decompresses to 16 bytes, the header says 17");
}

TEST(PageReader, V2LevelsStayUncompressed) {
  const std::string levels = "\x02\x03";  // repetition (1 byte), definition (1 byte)
  const std::string values = "values values values";
  const std::string gz = *Compress(*ParseCompression("gz"), values);
  ThriftWriter w;
  w.BeginStruct();
  w.I32(1, 3);  // DATA_PAGE_V2
  w.I32(2, static_cast<int32_t>(levels.size() + values.size()));
  w.I32(3, static_cast<int32_t>(levels.size() + gz.size()));
  w.Struct(8);
  w.I32(1, 4);
  w.I32(2, 0);
  w.I32(3, 2);
  w.I32(4, 0);
  w.I32(5, 1);
  w.I32(6, 1);
  w.EndStruct();
  w.EndStruct();
  const std::string chunk = w.bytes + levels + gz;
  PageReader r(chunk, 4, CompressionCodec::kGzip, "c");
  Page page;
  Result<bool> more = r.Next(&page);
  ASSERT_TRUE(more.ok() && *more) << more.status().ToString();
  EXPECT_EQ(page.repetition_levels, "\x02");
  EXPECT_EQ(page.definition_levels, "\x03");
  EXPECT_EQ(page.body, values);
}

}  // namespace
}  // namespace sluice::parquet
