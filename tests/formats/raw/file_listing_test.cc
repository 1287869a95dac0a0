// A raw-file dataset's index from a listing: what is left out, globs, the
// canonical order, manifests, the cached listing document and its errors.
#include "formats/raw/file_listing.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sluice {
namespace {

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
