// The deliberately damaged fixtures (tests/data/parquet/bad_*): each gives
// its exact error, naming the file and, for a bad page, the row group,
// column and page offset the fixture records; none gives a value.
#include <gtest/gtest.h>

#include <string>

#include "base/file.h"
#include "formats/json/py_json.h"
#include "formats/parquet/footer.h"
#include "formats/parquet/row_group_reader.h"

namespace sluice::parquet {
namespace {

const std::string kDir = std::string(SLUICE_TEST_DATA_DIR) + "/parquet/";

// The first error reading the whole file: footer, then every row group.
std::string FirstError(const std::string& name) {
  Result<std::string> bytes = ReadFile(kDir + name);
  if (!bytes.ok()) return bytes.status().ToString();
  const std::string& b = *bytes;
  RangeReader read = [&b](uint64_t offset, uint64_t size, std::string* out) {
    if (offset > b.size() || size > b.size() - offset) return IoError("past the end");
    out->assign(b, offset, size);
    return Status::Ok();
  };
  Result<FileFooter> f = ReadFooter(b.size(), read, name);
  if (!f.ok()) return f.status().ToString();
  for (size_t rg = 0; rg < f->meta.row_groups.size(); ++rg) {
    Result<std::vector<ColumnBuffer>> r = ReadRowGroup(*f, rg, {}, read, name);
    if (!r.ok()) return r.status().ToString();
  }
  return "ok";
}

TEST(BadFiles, FooterDamage) {
  EXPECT_EQ(FirstError("bad_truncated_file.parquet"),
            "corrupt: bad_truncated_file.parquet: not a Parquet file: it ends in \"0018046d\" (hex), "
            "not \"PAR1\"");
  EXPECT_EQ(FirstError("bad_truncated_footer.parquet"),
            "corrupt: bad_truncated_footer.parquet: footer: FileMetaData field 4: element 0: "
            "RowGroup field 1: element 4: ColumnChunk field 3: ColumnMetaData field 12: Statistics "
            "field 6: offset 610: binary of 4 bytes with 1 left");
  EXPECT_EQ(FirstError("bad_footer_length.parquet"),
            "corrupt: bad_footer_length.parquet: footer of 5863 bytes in a file of 4863");
  EXPECT_EQ(FirstError("bad_magic_head.parquet"),
            "corrupt: bad_magic_head.parquet: not a Parquet file: it starts with \"58415231\" (hex), "
            "not \"PAR1\"");
  EXPECT_EQ(FirstError("bad_magic_tail.parquet"),
            "corrupt: bad_magic_tail.parquet: not a Parquet file: it ends in \"50415230\" (hex), not "
            "\"PAR1\"");
  EXPECT_EQ(FirstError("bad_encrypted_footer_magic.parquet"),
            "unimplemented: bad_encrypted_footer_magic.parquet: the footer is encrypted (PARE)");
}

TEST(BadFiles, PageDamageNamesColumnAndPage) {
  EXPECT_EQ(FirstError("bad_page_crc_mismatch_v1.parquet"),
            "corrupt: bad_page_crc_mismatch_v1.parquet: row group 0 column \"text\": page at offset "
            "1041: CRC-32 of the page's 30 bytes is 74c083d8, the header says 9f62bd13");
  EXPECT_EQ(FirstError("bad_page_crc_mismatch_v2.parquet"),
            "corrupt: bad_page_crc_mismatch_v2.parquet: row group 0 column \"text\": page at offset "
            "694: CRC-32 of the page's 785 bytes is c75d6731, the header says 9e6ee7c7");
  EXPECT_EQ(FirstError("bad_page_gzip_corrupt.parquet"),
            "corrupt: bad_page_gzip_corrupt.parquet: row group 0 column \"text\": page at offset "
            "1501: gz data is corrupt: invalid distance too far back (near input offset 50)");
  EXPECT_EQ(FirstError("bad_page_compressed_size.parquet"),
            "corrupt: bad_page_compressed_size.parquet: row group 0 column \"text\": page at offset "
            "961: 8191 bytes of page after its header, 1018 left in the column chunk");
  EXPECT_EQ(FirstError("bad_page_uncompressed_size.parquet"),
            "corrupt: bad_page_uncompressed_size.parquet: row group 0 column \"text\": page at "
            "offset 1854: SNAPPY data decompresses to 56 bytes, the header says 63");
}

TEST(BadFiles, EveryTruncationOfAFileIsAnError) {
  Result<std::string> good = ReadFile(kDir + "pa26_codec_snappy.parquet");
  ASSERT_TRUE(good.ok());
  for (size_t n = 0; n < good->size(); ++n) {
    const std::string b = good->substr(0, n);
    RangeReader read = [&b](uint64_t offset, uint64_t size, std::string* out) {
      out->assign(b, offset, size);
      return Status::Ok();
    };
    Result<FileFooter> f = ReadFooter(b.size(), read, "cut.parquet");
    ASSERT_FALSE(f.ok()) << n;
    EXPECT_EQ(f.status().message().rfind("cut.parquet: ", 0), 0u) << f.status().ToString();
  }
}

}  // namespace
}  // namespace sluice::parquet
