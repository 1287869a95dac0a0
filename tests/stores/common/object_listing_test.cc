// One reader for the pages of S3's and Azure's XML listings.
#include "stores/common/object_listing.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace sluice {
namespace {

// The stores' own dialects (S3 and GCS; Azure).
constexpr const XmlListingDialect& kS3 = kListObjectsV2Dialect;
constexpr const XmlListingDialect& kAzure = kListBlobsDialect;

TEST(XmlListingPageTest, EachDialectReadsTheEtagOfEveryEntry) {
  std::vector<ObjectInfo> out;
  // S3 quotes its ETag (escaped or not); GCS's S3-compatible listing too.
  Result<std::string> next = ReadXmlListingPage(
      kS3,
      "<ListBucketResult><IsTruncated>false</IsTruncated>"
      "<Contents><Key>ds/a.parquet</Key><LastModified>2026-01-01T00:00:00.000Z</LastModified>"
      "<ETag>&quot;9b2cf535f27731c974343645a3985328&quot;</ETag><Size>10</Size></Contents>"
      "<Contents><Key>ds/b.parquet</Key><ETag>\"abc-2\"</ETag><Size>11</Size></Contents>"
      "<Contents><Key>ds/c.parquet</Key><Size>12</Size></Contents></ListBucketResult>",
      0, "", "ds/", "s3://b/ds", &out);
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].etag, "\"9b2cf535f27731c974343645a3985328\"");
  EXPECT_EQ(out[1].etag, "\"abc-2\"");
  EXPECT_EQ(out[2].etag, "");  // none listed: unknown

  out.clear();
  next = ReadXmlListingPage(kAzure,
                            "<EnumerationResults><Blobs><Blob><Name>k</Name><Properties>"
                            "<Last-Modified>Thu, 03 Dec 2026 10:00:00 GMT</Last-Modified>"
                            "<Etag>0x8DB1A2B3C4D5E6F</Etag>"
                            "<Content-Length>7</Content-Length></Properties></Blob></Blobs>"
                            "<NextMarker/></EnumerationResults>",
                            0, "", "", "azure://c", &out);
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].key, "k");
  EXPECT_EQ(out[0].etag, "0x8DB1A2B3C4D5E6F");

  out.clear();
  next = ReadXmlListingPage(kS3,
                            "<ListBucketResult><Contents><Key>x</Key><ETag>&bogus;</ETag>"
                            "<Size>1</Size></Contents></ListBucketResult>",
                            0, "", "", "s3://b", &out);
  EXPECT_EQ(next.status().code(), StatusCode::kCorrupt);
}

TEST(XmlListingPageTest, ReadsEntriesUnderTheRootAndTheNextToken) {
  std::vector<ObjectInfo> out;
  Result<std::string> next = ReadXmlListingPage(
      kS3,
      "<ListBucketResult><IsTruncated>true</IsTruncated>"
      "<Contents><Key>ds/a&amp;b.mds</Key><Size>10</Size></Contents>"
      "<Contents><Key>other/x</Key><Size>1</Size></Contents>"
      "<NextContinuationToken>t&lt;2</NextContinuationToken></ListBucketResult>",
      0, "", "ds/", "s3://b/ds", &out);
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_EQ(*next, "t<2");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].key, "a&b.mds");
  EXPECT_EQ(out[0].size, 10u);

  out.clear();
  next = ReadXmlListingPage(kAzure,
                            "<EnumerationResults><Blobs><Blob><Name>k</Name><Properties>"
                            "<Content-Length>7</Content-Length></Properties></Blob></Blobs>"
                            "<NextMarker/></EnumerationResults>",
                            3, "m", "", "azure://c", &out);
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_EQ(*next, "");  // the last page
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].size, 7u);
}

TEST(XmlListingPageTest, ADelimitedPageGivesSubPrefixesUnderTheRoot) {
  std::vector<ObjectInfo> out;
  std::vector<std::string> folders;
  Result<std::string> next = ReadXmlListingPage(
      kS3,
      "<ListBucketResult><Prefix>ds/</Prefix><IsTruncated>false</IsTruncated>"
      "<Contents><Key>ds/index.json</Key><Size>5</Size></Contents>"
      "<CommonPrefixes><Prefix>ds/a&amp;b/</Prefix></CommonPrefixes>"
      "<CommonPrefixes><Prefix>ds/c/</Prefix></CommonPrefixes></ListBucketResult>",
      0, "", "ds/", "s3://b/ds", &out, &folders);
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].key, "index.json");
  EXPECT_EQ(folders, (std::vector<std::string>{"a&b/", "c/"}));

  out.clear();
  folders.clear();
  next = ReadXmlListingPage(kAzure,
                            "<EnumerationResults><Blobs><BlobPrefix><Name>x/</Name></BlobPrefix>"
                            "<Blob><Name>k</Name><Properties><Content-Length>7</Content-Length>"
                            "</Properties></Blob></Blobs><NextMarker/></EnumerationResults>",
                            0, "", "", "azure://c", &out, &folders);
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].key, "k");
  EXPECT_EQ(folders, (std::vector<std::string>{"x/"}));
}

TEST(XmlListingPageTest, APageThatWouldLoopForeverIsCorrupt) {
  std::vector<ObjectInfo> out;
  Result<std::string> s3 = ReadXmlListingPage(
      kS3,
      "<ListBucketResult><IsTruncated>true</IsTruncated>"
      "<NextContinuationToken>same</NextContinuationToken></ListBucketResult>",
      4, "same", "", "s3://b", &out);
  EXPECT_EQ(s3.status().code(), StatusCode::kCorrupt);
  EXPECT_EQ(s3.status().message(),
            "s3://b: list page 4 announces another page but gives no new "
            "<NextContinuationToken>");
  Result<std::string> azure = ReadXmlListingPage(
      kAzure, "<EnumerationResults><Blobs/><NextMarker>m</NextMarker></EnumerationResults>", 2,
      "m", "", "azure://c", &out);
  EXPECT_EQ(azure.status().message(),
            "azure://c: List Blobs page 2 announces another page but gives no new <NextMarker>");
  Result<std::string> truncated_without_token =
      ReadXmlListingPage(kS3, "<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>",
                         0, "", "", "s3://b", &out);
  EXPECT_EQ(truncated_without_token.status().code(), StatusCode::kCorrupt);
}

TEST(XmlListingPageTest, APageOfAnotherKindIsCorrupt) {
  std::vector<ObjectInfo> out;
  Result<std::string> r =
      ReadXmlListingPage(kS3, "<Error><Code>AccessDenied</Code></Error>", 0, "", "", "s3://b", &out);
  EXPECT_EQ(r.status().code(), StatusCode::kCorrupt);
  EXPECT_EQ(r.status().message(), "s3://b: list page 0 has no <ListBucketResult>");
}

// A small listing (one sort, no parts): short keys (held in the string
// itself) and long ones, in cycles of several lengths and a fixed point,
// each moved with its size and etag.
TEST(SortByKeyTest, ASmallListingIsInKeyOrderWithItsFields) {
  std::vector<ObjectInfo> objects = {
      {"c", 3, "tag-c"},
      {"a/long-enough-to-live-outside-the-string-1.parquet", 11, "etag-long-1"},
      {"b", 2, "tag-b"},  // already in its place
      {"_x", 0, ""},
      {"a/long-enough-to-live-outside-the-string-0.parquet", 10, "etag-long-0"},
      {"a", 1, "tag-a"},
  };
  SortByKey(&objects);
  const std::vector<ObjectInfo> expected = {
      {"_x", 0, ""},
      {"a", 1, "tag-a"},
      {"a/long-enough-to-live-outside-the-string-0.parquet", 10, "etag-long-0"},
      {"a/long-enough-to-live-outside-the-string-1.parquet", 11, "etag-long-1"},
      {"b", 2, "tag-b"},
      {"c", 3, "tag-c"},
  };
  ASSERT_EQ(objects.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(objects[i].key, expected[i].key) << i;
    EXPECT_EQ(objects[i].size, expected[i].size) << i;
    EXPECT_EQ(objects[i].etag, expected[i].etag) << i;
  }
  std::vector<ObjectInfo> none;
  SortByKey(&none);
  EXPECT_TRUE(none.empty());
  std::vector<ObjectInfo> one = {{"k", 5, "e"}};
  SortByKey(&one);
  EXPECT_EQ(one[0].key, "k");
  EXPECT_EQ(one[0].etag, "e");
}

// Keys whose order the 8 bytes after their shared prefix cannot tell
// alone: a key the prefix of another, NUL bytes (beside the zeros past a
// short key's end), bytes above 0x7f (unsigned, as std::string compares),
// keys alike for more than 8 bytes, one key the shared prefix itself. In
// every rotation and reversal, the order std::sort gives the keys.
TEST(SortByKeyTest, KeysAlikeInTheirFirstBytesAreInBytewiseOrder) {
  using namespace std::string_literals;
  const std::vector<std::string> keys = {
      "p/",          "p/a",          "p/a\0"s,      "p/a\0\0"s,  "p/a\x01",
      "p/ab",        "p/\x80",      "p/\xff\x01", "p/\x7f",     "p/abcdefgh",
      "p/abcdefghi", "p/abcdefgh\0"s, "p/abcdefgg\xff", "p/abcdefgh-1", "p/abcdefgh-0",
  };
  std::vector<std::string> sorted = keys;
  std::sort(sorted.begin(), sorted.end());
  for (size_t rotation = 0; rotation < keys.size(); ++rotation) {
    for (const bool reversed : {false, true}) {
      std::vector<ObjectInfo> objects;
      for (size_t i = 0; i < keys.size(); ++i) {
        const std::string& k = keys[(i + rotation) % keys.size()];
        objects.push_back({k, k.size(), "e" + k});
      }
      if (reversed) std::reverse(objects.begin(), objects.end());
      SortByKey(&objects);
      ASSERT_EQ(objects.size(), sorted.size());
      for (size_t i = 0; i < sorted.size(); ++i) {
        ASSERT_EQ(objects[i].key, sorted[i]) << rotation << " " << reversed << " " << i;
        ASSERT_EQ(objects[i].size, sorted[i].size());
        ASSERT_EQ(objects[i].etag, "e" + sorted[i]);
      }
    }
  }
}

// A listing large enough to be sorted in parts and merged: every object
// in key order, each with its own size and etag (moved with its key).
TEST(SortByKeyTest, ALargeListingSortedInPartsIsInKeyOrderWithItsFields) {
  const size_t n = 3 * kParallelSortFrom + 7;
  std::vector<ObjectInfo> objects;
  objects.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const size_t k = (i * 7919) % n;  // a permutation: 7919 is prime, n not its multiple
    objects.push_back({"d/part-" + std::to_string(k) + ".parquet", k, "e" + std::to_string(k)});
  }
  std::vector<ObjectInfo> expected = objects;
  std::sort(expected.begin(), expected.end(),
            [](const ObjectInfo& a, const ObjectInfo& b) { return a.key < b.key; });
  SortByKey(&objects);
  ASSERT_EQ(objects.size(), n);
  for (size_t i = 0; i < n; ++i) {
    ASSERT_EQ(objects[i].key, expected[i].key) << i;
    ASSERT_EQ(objects[i].size, expected[i].size) << i;
    ASSERT_EQ(objects[i].etag, expected[i].etag) << i;
  }
  EXPECT_EQ(objects.front().key, "d/part-0.parquet");
  EXPECT_EQ(objects.back().key, "d/part-99999.parquet");
}

}  // namespace
}  // namespace sluice
