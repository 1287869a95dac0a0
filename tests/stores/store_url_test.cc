// The one rule for store URLs against local paths (stores/store.h), which
// the engine, the CLI and Python all use.
#include <gtest/gtest.h>

#include "stores/store.h"

namespace sluice {
namespace {

TEST(StoreUrlTest, SchemesAreReadAsOpenStoreReadsThem) {
  EXPECT_EQ(StoreUrlScheme("s3://bucket/key"), "s3");
  EXPECT_EQ(StoreUrlScheme("GS://b/k"), "gs");
  EXPECT_EQ(StoreUrlScheme("azure-dl://c@a/p"), "azure-dl");
  EXPECT_EQ(StoreUrlScheme("dbfs:/Volumes/c/s/v"), "dbfs");
  EXPECT_EQ(StoreUrlScheme("file:///data/ds"), "file");
  EXPECT_EQ(StoreUrlScheme("/data/ds"), "");
  EXPECT_EQ(StoreUrlScheme("relative/ds"), "");
}

TEST(StoreUrlTest, APathWithColonsOrSchemeLikeTextInsideIsLocal) {
  // The engine once read these as URLs (any "://") while Python did not.
  for (const char* path : {"/data/a://b", "data/x://y", "./s3://bucket", "C:ds", "1s3://x",
                           "my dir/with:colon"}) {
    EXPECT_EQ(StoreUrlScheme(path), "") << path;
    EXPECT_FALSE(IsStoreUrl(path)) << path;
  }
}

TEST(StoreUrlTest, FileUrlsAreNotStores) {
  EXPECT_FALSE(IsStoreUrl("file:///data/ds"));
  EXPECT_TRUE(IsStoreUrl("dbfs:/Volumes/c/s/v"));
  EXPECT_TRUE(IsStoreUrl("https://host/ds"));
  EXPECT_TRUE(IsStoreUrl("nosuch://x"));  // a URL, if not one OpenStore knows
}

TEST(StoreUrlTest, UnknownSchemesAreRejectedWithTheKnownOnes) {
  EXPECT_TRUE(CheckStoreScheme("/data/ds").ok());
  EXPECT_TRUE(CheckStoreScheme("oci://b/k").ok());
  Status s = CheckStoreScheme("nosuch://x/y?sig=secret");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "unknown store URL scheme 'nosuch' in 'nosuch://x/y' (known: file, s3, oci, gs, "
            "azure, azure-dl, http, https, dbfs, hf, or a local path)");
}

}  // namespace
}  // namespace sluice
