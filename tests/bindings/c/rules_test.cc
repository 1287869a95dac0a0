// The engine's rules that bindings ask instead of keeping their own: URL
// schemes and local paths, what a shard format's fields hold, which MDS
// encodings are unsafe, Mosaic's default num_canonical_nodes.
#include "sluice.h"

#include <gtest/gtest.h>

#include <string>

namespace {

std::string Scheme(const char* url) {
  char* out = nullptr;
  EXPECT_EQ(sluice_url_scheme(url, &out), SLUICE_OK) << sluice_last_error();
  std::string s = out ? out : "<null>";
  sluice_free(out);
  return s;
}

std::string LocalPath(const char* url, sluice_status want = SLUICE_OK) {
  char* out = nullptr;
  EXPECT_EQ(sluice_local_path(url, &out), want) << url << ": " << sluice_last_error();
  std::string s = out ? out : "<null>";
  sluice_free(out);
  return s;
}

TEST(CApiRules, UrlSchemes) {
  EXPECT_EQ(Scheme("s3://bucket/key"), "s3");
  EXPECT_EQ(Scheme("GS://bucket"), "gs");
  EXPECT_EQ(Scheme("azure-dl://c/p"), "azure-dl");
  EXPECT_EQ(Scheme("dbfs:/Volumes/a/b"), "dbfs");
  EXPECT_EQ(Scheme("file:///data/x"), "file");
  EXPECT_EQ(Scheme("/data/a://b"), "");
  EXPECT_EQ(Scheme("relative/dir"), "");
  EXPECT_EQ(Scheme("s3:bucket"), "");  // no "//": a local name
  char* out = nullptr;
  EXPECT_EQ(sluice_url_scheme(nullptr, &out), SLUICE_EINVAL);
}

TEST(CApiRules, LocalPaths) {
  EXPECT_EQ(LocalPath("file:///data/x/"), "/data/x");
  EXPECT_EQ(LocalPath("file://localhost/data/a%20b"), "/data/a b");
  EXPECT_EQ(LocalPath("/plain/path"), "/plain/path");
  EXPECT_EQ(LocalPath("rel/dir"), "rel/dir");
  EXPECT_EQ(LocalPath("s3://b/k", SLUICE_EINVAL), "<null>");
  EXPECT_STREQ(sluice_last_error(), "invalid argument: 's3://b/k' is a store URL, not a local path");
  EXPECT_EQ(LocalPath("file://other/x", SLUICE_EINVAL), "<null>");
  EXPECT_STREQ(sluice_last_error(),
               "invalid argument: malformed file URL 'file://other/x': names host 'other' (only "
               "local paths: file:///path)");
}

TEST(CApiRules, FormatInfo) {
  struct Want {
    const char* format;
    int form, has_meta;
  };
  for (const Want& w : {Want{"mds", SLUICE_FIELD_STORED_BYTES, 0},
                        Want{"raw", SLUICE_FIELD_STORED_BYTES, 0},
                        Want{"json", SLUICE_FIELD_JSON_TEXT, 1},
                        Want{"csv", SLUICE_FIELD_PLAIN_TEXT, 1},
                        Want{"tsv", SLUICE_FIELD_PLAIN_TEXT, 1},
                        Want{"xsv", SLUICE_FIELD_PLAIN_TEXT, 1}}) {
    int form = -1, has_meta = -1;
    ASSERT_EQ(sluice_format_info(w.format, &form, &has_meta), SLUICE_OK) << sluice_last_error();
    EXPECT_EQ(form, w.form) << w.format;
    EXPECT_EQ(has_meta, w.has_meta) << w.format;
  }
  EXPECT_EQ(sluice_format_info("mds", nullptr, nullptr), SLUICE_OK);
  EXPECT_EQ(sluice_format_info("mixed", nullptr, nullptr), SLUICE_EUNIMPLEMENTED);
  EXPECT_STREQ(sluice_last_error(), "unimplemented: sluice_format_info: unknown shard format 'mixed'");
}

TEST(CApiRules, UnsafeEncodings) {
  EXPECT_EQ(sluice_mds_encoding_is_unsafe("pkl"), 1);
  EXPECT_EQ(sluice_mds_encoding_is_unsafe("json"), 0);
  EXPECT_EQ(sluice_mds_encoding_is_unsafe("pkl:x"), 0);  // Mosaic compares whole names
  EXPECT_EQ(sluice_mds_encoding_is_unsafe(nullptr), 0);
}

TEST(CApiRules, DefaultNumCanonicalNodes) {
  int64_t n = 0;
  ASSERT_EQ(sluice_default_num_canonical_nodes("py1s", 3, &n), SLUICE_OK);
  EXPECT_EQ(n, 192);
  ASSERT_EQ(sluice_default_num_canonical_nodes("py2s", 1, &n), SLUICE_OK);
  EXPECT_EQ(n, 64);
  ASSERT_EQ(sluice_default_num_canonical_nodes("py1e", 3, &n), SLUICE_OK);
  EXPECT_EQ(n, 3);
  ASSERT_EQ(sluice_default_num_canonical_nodes("naive", 2, &n), SLUICE_OK);
  EXPECT_EQ(n, 2);
  EXPECT_EQ(sluice_default_num_canonical_nodes("py9", 2, &n), SLUICE_EINVAL);
  EXPECT_EQ(sluice_default_num_canonical_nodes("py1s", 0, &n), SLUICE_EINVAL);
}

}  // namespace
