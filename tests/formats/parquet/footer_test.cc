// Footer reading from ranged reads on hand-made files: how many reads and
// of which ranges, each check's error, and truncation at every byte.
#include "formats/parquet/footer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/formats/parquet/test_footer.h"

namespace sluice::parquet {
namespace {

using FileSpec = testing::TestFooterSpec;

std::string Metadata(const FileSpec& s) { return testing::TestFooter(s); }

std::string File(const std::string& metadata, size_t data_bytes = 10) {
  return testing::TestParquetFile(metadata, data_bytes);
}

// A RangeReader over bytes in memory that records what it was asked for.
struct Reads {
  explicit Reads(std::string f) : file(std::move(f)) {}
  std::string file;
  std::vector<std::pair<uint64_t, uint64_t>> log;
  RangeReader reader() {
    return [this](uint64_t offset, uint64_t size, std::string* out) {
      log.emplace_back(offset, size);
      if (offset > file.size() || size > file.size() - offset) return IoError("past the end");
      out->assign(file, offset, size);
      return Status::Ok();
    };
  }
};

TEST(Footer, SmallFileOneReadCoversTheWholeFile) {
  Reads r{File(Metadata({}))};
  Result<FileFooter> f = ReadFooter(r.file.size(), r.reader(), "t.parquet");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  ASSERT_EQ(r.log.size(), 1u);
  EXPECT_EQ(r.log[0], std::make_pair(uint64_t{0}, uint64_t{r.file.size()}));
  EXPECT_EQ(f->meta.num_rows, 5);
  EXPECT_EQ(f->metadata_length, Metadata({}).size());
  ASSERT_EQ(f->schema.leaves.size(), 1u);
  EXPECT_EQ(f->chunk_ranges[0][0].offset, 4u);
  EXPECT_EQ(f->chunk_ranges[0][0].size, 10u);
}

TEST(Footer, LargeFileReadsTheTailThenTheHead) {
  Reads r{File(Metadata({}), 100000)};
  Result<FileFooter> f = ReadFooter(r.file.size(), r.reader(), "t.parquet");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  ASSERT_EQ(r.log.size(), 2u);
  EXPECT_EQ(r.log[0], std::make_pair(uint64_t{r.file.size() - 65536}, uint64_t{65536}));
  EXPECT_EQ(r.log[1], std::make_pair(uint64_t{0}, uint64_t{4}));
  r.log.clear();
  ASSERT_TRUE(ReadFooter(r.file.size(), r.reader(), "t.parquet", {}, false).ok());
  EXPECT_EQ(r.log.size(), 1u);
}

TEST(Footer, AFooterLargerThanTheGuessTakesOneMoreReadOfWhatIsMissing) {
  FileSpec s;
  s.padding = std::string(300, 'p');
  Reads r{File(Metadata(s), 10000)};
  FooterOptions o;
  o.first_read_bytes = 100;
  Result<FileFooter> f = ReadFooter(r.file.size(), r.reader(), "t.parquet", o, false);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  ASSERT_EQ(r.log.size(), 2u);
  const uint64_t meta = Metadata(s).size();
  EXPECT_EQ(r.log[0], std::make_pair(uint64_t{r.file.size() - 100}, uint64_t{100}));
  EXPECT_EQ(r.log[1], std::make_pair(uint64_t{r.file.size() - 8 - meta}, uint64_t{meta + 8 - 100}));
  EXPECT_EQ(f->meta.key_value_metadata.at(0).value, s.padding);
}

std::string FileFooterError(const std::string& file, FooterOptions o = {}) {
  Reads r{file};
  Result<FileFooter> f = ReadFooter(file.size(), r.reader(), "t.parquet", o);
  return f.ok() ? "ok" : f.status().ToString();
}

TEST(Footer, EachCheckHasItsError) {
  const std::string good = File(Metadata({}));
  EXPECT_EQ(FileFooterError("PAR1PAR1"),
            "corrupt: t.parquet: not a Parquet file: 8 bytes, fewer than the 12 of the smallest");
  std::string bad_tail = good;
  bad_tail.back() = '2';
  EXPECT_EQ(FileFooterError(bad_tail), "corrupt: t.parquet: not a Parquet file: it ends in \"50415232\" (hex), not \"PAR1\"");
  std::string pare = good;
  pare.replace(pare.size() - 4, 4, "PARE");
  EXPECT_EQ(FileFooterError(pare), "unimplemented: t.parquet: the footer is encrypted (PARE)");
  std::string bad_head = good;
  bad_head[0] = 'X';
  EXPECT_EQ(FileFooterError(bad_head), "corrupt: t.parquet: not a Parquet file: it starts with \"58415231\" (hex), not \"PAR1\"");
  std::string long_len = good;
  const size_t at = long_len.size() - 8;
  long_len[at] = static_cast<char>(0xff);
  long_len[at + 1] = static_cast<char>(0x00);
  EXPECT_EQ(FileFooterError(long_len), "corrupt: t.parquet: footer of 255 bytes in a file of " +
                                 std::to_string(good.size()));
  FooterOptions tiny;
  tiny.max_footer_bytes = 10;
  EXPECT_EQ(FileFooterError(good, tiny), "corrupt: t.parquet: footer of " +
                                   std::to_string(Metadata({}).size()) +
                                   " bytes, more than the limit of 10");
  FileSpec past;
  past.chunk_size = 11;
  EXPECT_EQ(FileFooterError(File(Metadata(past))),
            "corrupt: t.parquet: row group 0 column \"a\": its pages at [4, 15) are not inside "
            "the data at [4, 14)");
  FileSpec at0;
  at0.chunk_offset = 0;
  EXPECT_EQ(FileFooterError(File(Metadata(at0))),
            "corrupt: t.parquet: row group 0 column \"a\": its pages at [0, 10) are not inside "
            "the data at [4, 14)");
  FileSpec path;
  path.path = "b";
  EXPECT_EQ(FileFooterError(File(Metadata(path))),
            "corrupt: t.parquet: row group 0 column \"a\": the chunk's path is \"b\"");
  FileSpec type;
  type.type = 2;
  EXPECT_EQ(FileFooterError(File(Metadata(type))),
            "corrupt: t.parquet: row group 0 column \"a\": the chunk's type is INT64, the "
            "schema's INT32");
  FileSpec rows;
  rows.footer_rows = 6;
  EXPECT_EQ(FileFooterError(File(Metadata(rows))),
            "corrupt: t.parquet: the row groups hold 5 rows, the footer says 6");
  auto reader = [](uint64_t, uint64_t, std::string*) { return IoError("disk on fire"); };
  EXPECT_EQ(ReadFooter(good.size(), reader, "t.parquet").status().ToString(),
            "i/o error: t.parquet: reading bytes [0, " + std::to_string(good.size()) +
                "): disk on fire");
}

TEST(Footer, TruncationAtEveryByteIsAnError) {
  const std::string meta = Metadata({});
  const std::string good = File(meta);
  // The file cut short anywhere.
  for (size_t n = 0; n < good.size(); ++n) {
    EXPECT_NE(FileFooterError(good.substr(0, n)), "ok") << n;
  }
  // The metadata cut short with a length that matches: every cut is a
  // decoding error naming the file and the footer.
  for (size_t n = 0; n < meta.size(); ++n) {
    const std::string e = FileFooterError(File(meta.substr(0, n)));
    EXPECT_EQ(e.rfind("corrupt: t.parquet: footer: ", 0), 0u) << n << " " << e;
  }
}

// What a decode gave, as text: the values the readers use, or the error.
std::string Decoded(const Status& s, const FileFooter& f) {
  if (!s.ok()) return s.ToString();
  std::string out = "rows " + std::to_string(f.meta.num_rows) + " schema";
  for (const SchemaElement& e : f.meta.schema) out += " " + e.name;
  for (const LeafColumn& c : f.schema.leaves) {
    out += " leaf " + c.path + ":" + PhysicalTypeName(c.physical_type);
  }
  for (const Field& field : f.schema.fields) out += " field " + field.name;
  for (const RowGroup& g : f.meta.row_groups) out += " group " + std::to_string(g.num_rows);
  for (const auto& group : f.chunk_ranges) {
    for (const ByteRange& r : group) {
      out += " [" + std::to_string(r.offset) + "+" + std::to_string(r.size) + "]";
    }
  }
  return out;
}

// One FileFooter decoded into file after file gives what a fresh decode of
// each gives, keeping the schema only while its bytes repeat: across other
// schemas, a schema BuildSchema refuses (twice, so its decoded elements
// are not kept for a schema never built), and a footer that fails after
// its schema was decoded.
TEST(Footer, DecodedIntoOneFooterFileAfterFileIsEachFilesDecode) {
  FileSpec a, a7, b, untyped, a_bad_chunk, a_padded;
  a7.rows = a7.footer_rows = 7;
  a7.chunk_size = 9;
  b.leaf = b.path = "b";
  b.leaf_type = b.type = 2;
  untyped.leaf_type = -1;
  a_bad_chunk.path = "z";
  a_padded.padding = std::string(40, 'p');
  struct Step {
    FileSpec spec;
    bool kept;  // the schema kept from the file before
  };
  const std::vector<Step> steps = {
      {a, false},     {a7, true},         {a, true},          {b, false},
      {a, false},     {untyped, false},   {untyped, false},   {a, false},
      {a_bad_chunk, true}, {a, true},     {a_padded, true},   {b, false},
      {b, true},      {a7, false}};
  FileFooter into;
  for (size_t i = 0; i < steps.size(); ++i) {
    const std::string meta = Metadata(steps[i].spec);
    const std::string file = File(meta);
    const Result<FileFooter> fresh = DecodeFooter(meta, file.size(), "t.parquet");
    const Status s = DecodeFooterInto(meta, file.size(), "t.parquet", FooterOptions(), &into);
    EXPECT_EQ(Decoded(s, into), fresh.ok() ? Decoded(Status::Ok(), *fresh) : fresh.status().ToString())
        << "step " << i;
    if (s.ok()) {
      EXPECT_EQ(into.schema_source.kept, steps[i].kept) << "step " << i;
    }
  }
  EXPECT_EQ(Decoded(DecodeFooterInto(Metadata(untyped), 200, "t.parquet", {}, &into), into),
            DecodeFooter(Metadata(untyped), 200, "t.parquet").status().ToString());
}

}  // namespace
}  // namespace sluice::parquet
