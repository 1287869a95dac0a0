// A raw-file dataset's index from a listing: what is left out, globs, the
// canonical order, manifests, the cached listing document and its errors.
#include "formats/raw/file_listing.h"

#include <fnmatch.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "formats/codec/hashes.h"

namespace sluice {
namespace {

// ListingFingerprint of [["a.parquet", 10], ["b.parquet", 11]] as every
// version has computed it.
constexpr char kOldFingerprint[] = "1b52f5454ef17a42";

std::vector<std::string> Paths(const std::vector<ListedFile>& files) {
  std::vector<std::string> out;
  for (const ListedFile& f : files) out.push_back(f.path);
  return out;
}

std::vector<ListedFile> Sized(std::vector<std::string> paths) {
  std::vector<ListedFile> out;
  uint64_t size = 10;
  for (std::string& p : paths) out.push_back(ListedFile{std::move(p), size++});
  return out;
}

TEST(FileListing, LeavesOutWhatSparkAndDatabricksWriteBesideTheData) {
  for (const char* side : {"_SUCCESS", "_started_123", "_committed_456", "part/_temporary/x.jpg",
                           ".hidden.jpg", "a/.part-0.crc", ".sluice/state", "_delta_log/0.json"}) {
    EXPECT_TRUE(IsBesideTheData(side)) << side;
  }
  for (const char* data : {"a.jpg", "x_y.jpg", "a/b_c/d.jpg", "a./b.jpg", "part-0.parquet"}) {
    EXPECT_FALSE(IsBesideTheData(data)) << data;
  }
}

TEST(FileListing, GlobsMatchTheNameAtAnyDepthOrTheWholePathWithASlash) {
  FileSelection jpg{{"*.jpg"}};
  EXPECT_TRUE(IsSelected("a.jpg", jpg));
  EXPECT_TRUE(IsSelected("cats/a.jpg", jpg));
  EXPECT_FALSE(IsSelected("cats/a.png", jpg));
  EXPECT_FALSE(IsSelected("cats/.a.jpg", jpg));
  FileSelection train{{"train/*.jpg", "*.png"}};
  EXPECT_TRUE(IsSelected("train/a.jpg", train));
  EXPECT_FALSE(IsSelected("train/x/a.jpg", train));  // '*' does not cross '/'
  EXPECT_FALSE(IsSelected("val/a.jpg", train));
  EXPECT_TRUE(IsSelected("val/a.png", train));
  EXPECT_TRUE(IsSelected("anything", FileSelection{}));
}

TEST(FileListing, SelectsSortsBytewiseAndIndexesOneShardPerFile) {
  auto files = SelectFiles(Sized({"b/2.jpg", "B.jpg", "a.jpg", "_SUCCESS", "b/10.jpg", "b.txt"}),
                           FileSelection{{"*.jpg"}}, "s3://bkt/imgs");
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  EXPECT_EQ(Paths(*files), (std::vector<std::string>{"B.jpg", "a.jpg", "b/10.jpg", "b/2.jpg"}));
  Index index = IndexOfFiles(*files);
  ASSERT_EQ(index.shards.size(), 4u);
  const ShardEntry& e = index.shards[2];
  EXPECT_EQ(e.format, "raw");
  EXPECT_EQ(e.samples, 1u);
  EXPECT_EQ(e.raw_data.basename, "b/10.jpg");
  EXPECT_EQ(e.raw_data.bytes, 14u);
  EXPECT_FALSE(e.zip_data.has_value());
  EXPECT_FALSE(e.compression.has_value());
}

// A listing already in path order (as stores list) is kept as it is; one
// out of order anywhere, even last, is sorted; a path twice is the error
// whether or not the rest is in order.
TEST(FileListing, AListingInPathOrderOrNotSelectsTheSameSortedFiles) {
  const std::vector<std::string> want = {"a/1.jpg", "a/2.jpg", "b.jpg", "c.jpg"};
  for (const std::vector<std::string>& order :
       {want, std::vector<std::string>{"a/1.jpg", "a/2.jpg", "c.jpg", "b.jpg"},
        std::vector<std::string>{"c.jpg", "b.jpg", "a/2.jpg", "a/1.jpg"}}) {
    auto files = SelectFiles(Sized(order), {}, "s");
    ASSERT_TRUE(files.ok()) << files.status().ToString();
    EXPECT_EQ(Paths(*files), want);
  }
  EXPECT_EQ(SelectFiles(Sized({"a.jpg", "b.jpg", "b.jpg"}), {}, "m").status().message(),
            "m: file \"b.jpg\" is listed twice");
  EXPECT_EQ(SelectFiles(Sized({"b.jpg", "a.jpg", "b.jpg"}), {}, "m").status().message(),
            "m: file \"b.jpg\" is listed twice");
}

TEST(FileListing, SelectionErrorsNameTheSource) {
  EXPECT_EQ(SelectFiles(Sized({"a.jpg", "/etc/passwd"}), {}, "m.txt").status().message(),
            "m.txt: unsafe file path \"/etc/passwd\" (must be relative, without '..', '\\' or NUL)");
  EXPECT_EQ(SelectFiles(Sized({"a\\b.jpg"}), {}, "m.txt").status().code(), StatusCode::kCorrupt);
  // ".." starts with '.': left out with what is beside the data.
  auto dotdot = SelectFiles(Sized({"a.jpg", "../etc/passwd", "b/../../c.jpg"}), {}, "m.txt");
  ASSERT_TRUE(dotdot.ok()) << dotdot.status().ToString();
  EXPECT_EQ(Paths(*dotdot), std::vector<std::string>{"a.jpg"});
  // A glob that leaves the unsafe key out.
  auto safe = SelectFiles(Sized({"a.jpg", "/x.txt"}), FileSelection{{"*.jpg"}}, "m.txt");
  ASSERT_TRUE(safe.ok()) << safe.status().ToString();
  EXPECT_EQ(Paths(*safe), std::vector<std::string>{"a.jpg"});
  EXPECT_EQ(SelectFiles(Sized({"a.jpg", "a.jpg"}), {}, "m.txt").status().message(),
            "m.txt: file \"a.jpg\" is listed twice");
  EXPECT_EQ(SelectFiles({ListedFile{"a.jpg", std::nullopt}}, {}, "m.txt").status().message(),
            "m.txt: file \"a.jpg\" has no size");
  EXPECT_EQ(SelectFiles(Sized({"a.txt", "_SUCCESS"}), FileSelection{{"*.jpg", "*.png"}}, "s3://b/p")
                .status()
                .message(),
            "s3://b/p: no data file among the 2 listed that matches \"*.jpg\", \"*.png\" (names "
            "starting with '_' or '.' are left out)");
  EXPECT_EQ(SelectFiles({}, {}, "/data").status().message(),
            "/data: no data file among the 0 listed (names starting with '_' or '.' are left out)");
  // An unselected file needs no size.
  auto ok = SelectFiles({ListedFile{"a.jpg", 3}, ListedFile{"b.txt", std::nullopt}},
                        FileSelection{{"*.jpg"}}, "m");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(Paths(*ok), std::vector<std::string>{"a.jpg"});
}

TEST(FileListing, ManifestOfPathsOrJsonLines) {
  auto files = ParseFileManifest(
      "# images\r\n"
      "cats/1.jpg\r\n"
      "\n"
      "  dogs/2.jpg  \n"
      "{\"path\": \"x/3.jpg\", \"size\": 1234}\n"
      "{\"size\": null, \"path\": \"y.jpg\"}",
      "files.txt");
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  ASSERT_EQ(files->size(), 4u);
  EXPECT_EQ(Paths(*files),
            (std::vector<std::string>{"cats/1.jpg", "dogs/2.jpg", "x/3.jpg", "y.jpg"}));
  EXPECT_FALSE((*files)[0].size.has_value());
  EXPECT_EQ((*files)[2].size, std::optional<uint64_t>(1234));
  EXPECT_FALSE((*files)[3].size.has_value());
}

TEST(FileListing, ManifestErrorsNameTheLine) {
  EXPECT_EQ(ParseFileManifest("a.jpg\n{\"path\": 3}\n", "m.jsonl").status().message(),
            "m.jsonl line 2: \"path\" must be a string");
  EXPECT_EQ(ParseFileManifest("{\"path\": \"a\", \"size\": -1}", "m").status().message(),
            "m line 1: \"size\" must be a byte count (a non-negative integer)");
  EXPECT_EQ(ParseFileManifest("{\"path\": \"a\", \"bytes\": 1}", "m").status().message(),
            "m line 1: unknown key \"bytes\" (expected path, size)");
  EXPECT_EQ(ParseFileManifest("[\"a\"]", "m").status().code(), StatusCode::kOk);  // a path
  EXPECT_EQ(ParseFileManifest("{\"path\": ", "m").status().code(), StatusCode::kCorrupt);
  EXPECT_EQ(ParseFileManifest("{1}", "m").status().message().rfind("m line 1: ", 0), 0u);
}

TEST(FileListing, ListingDocumentRoundTripsAndChecksItsFingerprint) {
  std::vector<ListedFile> files = {{"a \"q\".jpg", 0}, {"b/\xc3\xa9.jpg", 42}, {"c", std::nullopt}};
  std::string doc = SerializeListingDocument("s3://b/imgs manifest m.txt", files);
  auto back = ParseListingDocument(doc, "s3://b/imgs manifest m.txt", "/c/.sluice/listing.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(Paths(*back), Paths(files));
  EXPECT_EQ((*back)[1].size, std::optional<uint64_t>(42));
  EXPECT_FALSE((*back)[2].size.has_value());
  EXPECT_EQ(ListingFingerprint(*back), ListingFingerprint(files));

  auto other = ParseListingDocument(doc, "s3://b/other", "L");
  EXPECT_EQ(other.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(other.status().message(),
            "L: lists \"s3://b/imgs manifest m.txt\", not \"s3://b/other\"");

  std::string tampered = doc;
  tampered.replace(tampered.find("42"), 2, "43");
  EXPECT_EQ(ParseListingDocument(tampered, "s3://b/imgs manifest m.txt", "L").status().message(),
            "L: its fingerprint does not match its files");
  EXPECT_EQ(ParseListingDocument("{\"files\": []}", "x", "L").status().message(),
            "L: not a listing (expected source, fingerprint, files)");
  EXPECT_EQ(ParseListingDocument("{", "x", "L").status().code(), StatusCode::kCorrupt);
}

TEST(FileListing, ListingDocumentKeepsEachFilesEtag) {
  std::vector<ListedFile> files = {{"a.parquet", 10, "\"9b2c\""}, {"b.parquet", 10},
                                   {"c.parquet", 11, "0x8DB1"}};
  std::string doc = SerializeListingDocument("s3://b/t", files);
  EXPECT_EQ(doc.substr(doc.find("\"files\"")),
            "\"files\": [\n[\"a.parquet\", 10, \"\\\"9b2c\\\"\"],\n[\"b.parquet\", 10],\n"
            "[\"c.parquet\", 11, \"0x8DB1\"]]}\n");
  bool kept_etags = false;
  auto back = ParseListingDocument(doc, "s3://b/t", "L", nullptr, &kept_etags);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(kept_etags);
  ASSERT_EQ(back->size(), 3u);
  EXPECT_EQ((*back)[0].etag, "\"9b2c\"");
  EXPECT_EQ((*back)[1].etag, "");
  EXPECT_EQ((*back)[2].etag, "0x8DB1");
  // The etag is part of the fingerprint: a changed one is a tampered file.
  std::string tampered = doc;
  tampered.replace(tampered.find("0x8DB1"), 6, "0x8DB2");
  EXPECT_EQ(ParseListingDocument(tampered, "s3://b/t", "L").status().message(),
            "L: its fingerprint does not match its files");
  EXPECT_EQ(ParseListingDocument("{\"source\": \"x\", \"fingerprint\": \"0\", \"files\": "
                                 "[[\"a\", 1, 2]]}",
                                 "x", "L")
                .status()
                .message(),
            "L: file 0 is not [path, size] or [path, size, etag]");
}

// Each file's line as written: a quoted path (escaped, ensure_ascii), the
// size or null, the etag when known; a path or etag that is not UTF-8 as
// the words that say so; the uncommitted paths after the files.
TEST(FileListing, ListingDocumentWritesEachFilesLineByteForByte) {
  const std::vector<ListedFile> files = {{"a \"q\".jpg", 0},
                                         {"b/\xc3\xa9.jpg", 42},
                                         {"c", std::nullopt, "t1"},
                                         {"d\xff", 7, "e\xfe"},
                                         {"e", std::numeric_limits<uint64_t>::max(), "t"}};
  const std::string doc = SerializeListingDocument("s3://b/t", files, {"u/v.jpg"});
  EXPECT_EQ(doc.substr(0, doc.find("\"fingerprint\"")), "{\"source\": \"s3://b/t\", \"etags\": true, ");
  EXPECT_EQ(doc.substr(doc.find("\"files\"")),
            "\"files\": [\n[\"a \\\"q\\\".jpg\", 0],\n[\"b/\\u00e9.jpg\", 42],\n"
            "[\"c\", null, \"t1\"],\n"
            "[(a path that is not UTF-8), 7, (a path that is not UTF-8)],\n"
            "[\"e\", 18446744073709551615, \"t\"]], \"uncommitted\": [\"u/v.jpg\"]}\n");
  EXPECT_EQ(SerializeListingDocument("s", {}).substr(SerializeListingDocument("s", {}).find("\"files\"")),
            "\"files\": []}\n");
}

// A listing of several parts (serialized at once on several threads) is
// the same document, byte for byte, as one written entry after entry.
TEST(FileListing, ALargeListingDocumentIsItsEntriesInOrderByteForByte) {
  std::vector<ListedFile> files;
  std::string entries;
  for (size_t i = 0; i < 200'000; ++i) {
    const std::string path = "d/part-" + std::to_string(1'000'000 + i) + ".parquet";
    if (i % 3 == 0) {
      files.push_back({path, i, "t" + std::to_string(i)});
      entries += (i ? ",\n[\"" : "\n[\"") + path + "\", " + std::to_string(i) + ", \"t" +
                 std::to_string(i) + "\"]";
    } else {
      files.push_back({path, i % 3 == 1 ? std::optional<uint64_t>(i) : std::nullopt, ""});
      entries += ",\n[\"" + path + "\", " + (i % 3 == 1 ? std::to_string(i) : "null") + "]";
    }
  }
  const std::string doc = SerializeListingDocument("s3://b/t", files, {"u/v.parquet"});
  const std::string expected = "{\"source\": \"s3://b/t\", \"etags\": true, \"fingerprint\": \"" +
                               ListingFingerprint(files) + "\", \"files\": [" + entries +
                               "], \"uncommitted\": [\"u/v.parquet\"]}\n";
  // Not EXPECT_EQ of the two: gtest's diff of 200,000 lines would not end.
  const auto [got, want] = std::mismatch(doc.begin(), doc.end(), expected.begin(), expected.end());
  const size_t at = static_cast<size_t>(got - doc.begin());
  EXPECT_TRUE(got == doc.end() && want == expected.end())
      << "differs at byte " << at << ": " << doc.substr(at >= 40 ? at - 40 : 0, 80) << " against "
      << expected.substr(at >= 40 ? at - 40 : 0, 80);
}

// SelectFiles says when its answer is the listing as given, whose
// fingerprint a caller then need not compute again; the document and its
// parse give the fingerprint they hold.
TEST(FileListing, SelectFilesSaysWhenItKeptTheListingAsGiven) {
  const std::vector<ListedFile> listed = {{"a.parquet", 1}, {"b.parquet", 2}, {"c/d.parquet", 3}};
  std::string fingerprint;
  const std::string doc = SerializeListingDocument("src", listed, {}, &fingerprint);
  EXPECT_EQ(fingerprint, ListingFingerprint(listed));
  std::string parsed_fingerprint;
  ASSERT_TRUE(ParseListingDocument(doc, "src", "L", nullptr, nullptr, &parsed_fingerprint).ok());
  EXPECT_EQ(parsed_fingerprint, fingerprint);
  const FileSelection parquet{{"*.parquet"}};
  bool unchanged = false;
  auto all = SelectFiles(listed, parquet, "src", {}, &unchanged);
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE(unchanged);
  EXPECT_EQ(ListingFingerprint(*all), fingerprint);
  // A file left out, or a listing out of order: not the listing as given.
  std::vector<ListedFile> more = listed;
  more.push_back({"_SUCCESS", 0});
  auto some = SelectFiles(more, parquet, "src", {}, &unchanged);
  ASSERT_TRUE(some.ok());
  EXPECT_FALSE(unchanged);
  const std::vector<ListedFile> unsorted = {listed[1], listed[0], listed[2]};
  auto sorted = SelectFiles(unsorted, parquet, "src", {}, &unchanged);
  ASSERT_TRUE(sorted.ok());
  EXPECT_FALSE(unchanged);
  EXPECT_EQ(ListingFingerprint(*sorted), fingerprint);
  // Out of order and listed twice: still the error.
  auto twice = SelectFiles({listed[1], listed[0], listed[1]}, parquet, "src", {}, &unchanged);
  EXPECT_EQ(twice.status().message(), "src: file \"b.parquet\" is listed twice");
}

// IsSelected answers as fnmatch(glob, name or path, FNM_PATHNAME) of its
// globs (after leaving out what lies beside the data), "*" then a literal
// (matched without fnmatch) among them.
TEST(FileListing, IsSelectedAnswersAsFnmatchForEveryGlob) {
  const std::vector<std::string> globs = {
      "*.parquet", "*", "*.tar.gz", "*t", "*.PARQUET", "*a*", "x*.parquet", "*\\*", "*[",
      "*.parquet/", "d/*.parquet", "*/*.parquet", "*?", "*[.]parquet", "*.parquet\\", "*é.parquet"};
  const std::vector<std::string> paths = {
      "a.parquet", "x.parquet", "d/a.parquet", "d/e/b.parquet", ".parquet", "parquet", "a.parquetx",
      "a.PARQUET", "a.tar.gz", "t", "a*", "a[", "é.parquet", "aé.parquet", "a.parquet/",
      std::string("a\0.parquet", 10), "d/x.parquet", "\xff\xfe.parquet", "a.parquet\\"};
  for (const std::string& glob : globs) {
    const FileSelection selection{{glob}};
    for (const std::string& path : paths) {
      const size_t slash = path.rfind('/');
      const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
      const bool whole = glob.find('/') != std::string::npos;
      const bool expected = !IsBesideTheData(path) &&
                            ::fnmatch(glob.c_str(), (whole ? path : name).c_str(), FNM_PATHNAME) == 0;
      EXPECT_EQ(IsSelected(path, selection), expected) << glob << " " << path;
    }
  }
  const FileSelection two{{"*.csv", "*.parquet"}};
  EXPECT_TRUE(IsSelected("d/a.parquet", two));
  EXPECT_TRUE(IsSelected("a.csv", two));
  EXPECT_FALSE(IsSelected("a.json", two));
  EXPECT_FALSE(IsSelected("_a.parquet", two));
}

// The fingerprint is the xxh64 of each file's path, NUL, size (or "-"),
// NUL, and, with an etag, NUL, etag, NUL, in order, over a listing many
// times the builder's block (its files straddle the blocks' ends), and
// over every prefix of a few files (a last block of any length).
TEST(FileListing, TheFingerprintIsTheXxh64OfEveryFilesBytesInOrder) {
  std::vector<ListedFile> files;
  std::string bytes;
  for (size_t i = 0; i < 20000; ++i) {
    ListedFile f{"d" + std::to_string(i % 13) + "/" + std::string(i % 41, 'p') + std::to_string(i),
                 i % 7 == 3 ? std::nullopt : std::optional<uint64_t>(i * 1000003 % 99991 + (i % 5 == 0 ? UINT64_MAX - 9 : 0)),
                 i % 3 == 0 ? "\"etag-" + std::to_string(i) + "\"" : ""};
    bytes += f.path + '\0' + (f.size ? std::to_string(*f.size) : "-") + '\0';
    if (!f.etag.empty()) bytes += '\0' + f.etag + '\0';
    files.push_back(std::move(f));
    if (i < 5) {
      auto of_prefix = HashHex("xxh64", bytes);
      ASSERT_TRUE(of_prefix.ok());
      EXPECT_EQ(ListingFingerprint(files), *of_prefix) << i;
    }
  }
  ASSERT_GT(bytes.size(), size_t{10} << 16);  // ten of the builder's 64 KiB blocks
  auto expected = HashHex("xxh64", bytes);
  ASSERT_TRUE(expected.ok());
  EXPECT_EQ(ListingFingerprint(files), *expected);
  EXPECT_EQ(ListingFingerprint({}), *HashHex("xxh64", ""));
}

TEST(FileListing, AListingWrittenBeforeEtagsReadsAsUnknownEtags) {
  // As written before listings kept etags: no "etags", pairs only, and
  // the fingerprint of paths and sizes alone.
  ASSERT_EQ(ListingFingerprint({{"a.parquet", 10}, {"b.parquet", 11}}), kOldFingerprint);
  const std::string old_doc =
      std::string("{\"source\": \"s3://b/t\", \"fingerprint\": \"") + kOldFingerprint + "\", \"files\": [\n"
      "[\"a.parquet\", 10],\n[\"b.parquet\", 11]]}\n";
  bool kept_etags = true;
  auto back = ParseListingDocument(old_doc, "s3://b/t", "L", nullptr, &kept_etags);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_FALSE(kept_etags);  // LoadStreamListing lists such a listing anew
  ASSERT_EQ(back->size(), 2u);
  EXPECT_EQ((*back)[0].etag, "");
  EXPECT_EQ((*back)[1].etag, "");
  EXPECT_EQ(ListingFingerprint(*back), kOldFingerprint);
}

TEST(FileListing, FingerprintsDifferWithEtags) {
  const std::string none = ListingFingerprint({{"a", 1}, {"b", 2}});
  const std::string tagged = ListingFingerprint({{"a", 1, "e1"}, {"b", 2}});
  EXPECT_NE(tagged, none);
  EXPECT_NE(ListingFingerprint({{"a", 1, "e2"}, {"b", 2}}), tagged);
  EXPECT_EQ(ListingFingerprint({{"a", 1, "e1"}, {"b", 2}}), tagged);
  // An etag never reads as the next file's path.
  EXPECT_NE(ListingFingerprint({{"a", 1, "b"}}), ListingFingerprint({{"a", 1}, {"b", std::nullopt}}));
}

TEST(FileListing, FingerprintsDifferWithPathsAndSizes) {
  const std::string base = ListingFingerprint({{"a", 1}, {"b", 2}});
  EXPECT_EQ(base.size(), 16u);
  EXPECT_NE(ListingFingerprint({{"a", 1}, {"b", 3}}), base);
  EXPECT_NE(ListingFingerprint({{"a", 1}, {"c", 2}}), base);
  EXPECT_NE(ListingFingerprint({{"a1", std::nullopt}, {"b", 2}}), ListingFingerprint({{"a", 1}, {"b", 2}}));
  EXPECT_EQ(ListingFingerprint({{"a", 1}, {"b", 2}}), base);
}

}  // namespace
}  // namespace sluice

namespace sluice {
namespace {

TEST(FileListingCommits, KeepsOnlyWhatAMarkerOfTheFolderAddsAndNoneRemoves) {
  EXPECT_TRUE(IsCommitMarker("_committed_123"));
  EXPECT_TRUE(IsCommitMarker("d=1/_committed_vacuum456"));
  EXPECT_FALSE(IsCommitMarker("_started_123"));
  EXPECT_FALSE(IsCommitMarker("_committed_/x.parquet"));
  EXPECT_FALSE(IsCommitMarker("a_committed_1"));

  auto m1 = ParseCommitMarker(
      R"({"added":["part-00000-tid-1-a-c000.snappy.parquet","part-00001-tid-1-b-c000.snappy.parquet"],"removed":[]})",
      "s3://b/t/_committed_1");
  ASSERT_TRUE(m1.ok()) << m1.status().message();
  auto m2 = ParseCommitMarker(R"({"added":["part-00002-tid-2-c.parquet"],"removed":["part-00001-tid-1-b-c000.snappy.parquet"]})",
                              "s3://b/t/_committed_2");
  ASSERT_TRUE(m2.ok());
  auto other = ParseCommitMarker(R"({"added":["x.parquet"]})", "s3://b/t/d=1/_committed_3");
  ASSERT_TRUE(other.ok());
  EXPECT_TRUE(other->removed.empty());

  std::vector<ListedFile> files = Sized({
      "_SUCCESS", "_committed_1", "_committed_2", "_started_3",
      "part-00000-tid-1-a-c000.snappy.parquet",   // committed by 1
      "part-00001-tid-1-b-c000.snappy.parquet",   // committed by 1, removed by 2
      "part-00002-tid-2-c.parquet",               // committed by 2
      "part-00003-tid-3-d.parquet",               // task 3 never committed
      "d=1/_committed_3", "d=1/x.parquet", "d=1/y.parquet",
      "plain/z.parquet"});                        // a folder without markers
  CommittedFiles c = KeepCommitted(files, {{"_committed_1", *m1}, {"_committed_2", *m2},
                                           {"d=1/_committed_3", *other}});
  EXPECT_EQ(c.dropped, (std::vector<std::string>{"part-00001-tid-1-b-c000.snappy.parquet",
                                                 "part-00003-tid-3-d.parquet", "d=1/y.parquet"}));
  auto selected = SelectFiles(c.kept, FileSelection{{"*.parquet"}}, "s3://b/t", c.dropped);
  ASSERT_TRUE(selected.ok()) << selected.status().message();
  EXPECT_EQ(Paths(*selected),
            (std::vector<std::string>{"d=1/x.parquet", "part-00000-tid-1-a-c000.snappy.parquet",
                                      "part-00002-tid-2-c.parquet", "plain/z.parquet"}));

  // A glob that names a dropped file exactly is an error naming it.
  auto named = SelectFiles(c.kept, FileSelection{{"part-00003-tid-3-d.parquet", "*.json"}},
                           "s3://b/t", c.dropped);
  EXPECT_EQ(named.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(named.status().message(),
            "s3://b/t: file \"part-00003-tid-3-d.parquet\", which glob "
            "\"part-00003-tid-3-d.parquet\" names, is not committed: no _committed_ marker of its "
            "folder adds it (a task's output that Spark did not commit)");
  // A selection left empty by the rule names what it dropped.
  auto empty = SelectFiles(c.kept, FileSelection{{"d=1/y*"}}, "s3://b/t", c.dropped);
  EXPECT_EQ(empty.status().message(),
            "s3://b/t: no data file among the 9 listed that matches \"d=1/y*\" (names starting "
            "with '_' or '.' are left out, and 1 uncommitted, first \"d=1/y.parquet\")");

  EXPECT_EQ(ParseCommitMarker(R"({"removed":[]})", "M").status().message(),
            "M: \"added\" must be a list of file names");
  EXPECT_EQ(ParseCommitMarker(R"({"added":[1]})", "M").status().message(),
            "M: \"added\" holds a value that is not a name");
  EXPECT_EQ(ParseCommitMarker("[]", "M").status().message(), "M: a commit marker must be a JSON object");
}

TEST(FileListingCommits, ListingDocumentKeepsTheUncommittedPaths) {
  std::string doc = SerializeListingDocument("src", Sized({"a.parquet"}), {"b.parquet", "d/c.parquet"});
  std::vector<std::string> uncommitted;
  auto back = ParseListingDocument(doc, "src", "L", &uncommitted);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(Paths(*back), std::vector<std::string>{"a.parquet"});
  EXPECT_EQ(uncommitted, (std::vector<std::string>{"b.parquet", "d/c.parquet"}));
  auto none = ParseListingDocument(SerializeListingDocument("src", Sized({"a"})), "src", "L",
                                   &uncommitted);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(uncommitted.empty());
}

// A maker hands its listing on without reading the document back only when
// the document reads back as exactly it; each case it refuses does not.
TEST(FileListing, ListingDocumentRoundTripsSaysWhenTheDocumentReadsBackAsTheListing) {
  auto round_trips = [](const std::vector<ListedFile>& files,
                        const std::vector<std::string>& uncommitted) {
    std::vector<std::string> back_uncommitted;
    auto back = ParseListingDocument(SerializeListingDocument("src", files, uncommitted), "src",
                                     "L", &back_uncommitted);
    if (!back.ok() || back->size() != files.size() || back_uncommitted != uncommitted) return false;
    for (size_t i = 0; i < files.size(); ++i) {
      const ListedFile& a = files[i];
      const ListedFile& b = (*back)[i];
      if (a.path != b.path || a.size != b.size || a.etag != b.etag) return false;
    }
    return true;
  };
  const std::vector<ListedFile> fine = {{"a \"q\"\t.jpg", 0, "1-2"},
                                        {"b/\xc3\xa9\xf0\x9f\x98\x80", 9223372036854775807u},
                                        {"c", std::nullopt}};
  EXPECT_TRUE(ListingDocumentRoundTrips(fine, {"d/\xc3\xa9"}));
  EXPECT_TRUE(round_trips(fine, {"d/\xc3\xa9"}));
  const std::vector<std::pair<std::vector<ListedFile>, std::vector<std::string>>> refused = {
      {{{"a\xff", 1}}, {}},                                  // not UTF-8: written as a stand-in
      {{{"a\xed\xa0\x80\xed\xb0\x80", 1}}, {}},           // two encoded surrogates: one back
      {{{"a", 9223372036854775808u}}, {}},                    // a size past int64
      {{{"a", 1, "e\xff"}}, {}},                             // an etag not UTF-8
      {{{"a", 1}}, {"u\xff"}},                               // an uncommitted path not UTF-8
  };
  for (const auto& [files, uncommitted] : refused) {
    EXPECT_FALSE(ListingDocumentRoundTrips(files, uncommitted)) << files[0].path;
    EXPECT_FALSE(round_trips(files, uncommitted)) << files[0].path;
  }
}

}  // namespace
}  // namespace sluice
