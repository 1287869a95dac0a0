// OpenRemoteSource: which sources a stream's remote opens, and what fails
// at open rather than at the first download.
#include "engine/dataset/remote_source.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

TEST(RemoteSourceTest, AnUnknownSchemeFailsAtOpen) {
  Result<std::unique_ptr<RemoteSource>> r = OpenRemoteSource("nosuch://bucket/ds?token=t");
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(),
            "unknown store URL scheme 'nosuch' in 'nosuch://bucket/ds' (known: file, s3, oci, gs, "
            "azure, azure-dl, http, https, dbfs, hf, or a local path)");
}

TEST(RemoteSourceTest, APathWithSchemeLikeTextInsideIsAFolder) {
  Result<std::unique_ptr<RemoteSource>> r = OpenRemoteSource("/data/a://b");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE((*r)->RetriesItself());  // a folder copy, not a store
  EXPECT_EQ((*r)->Describe(), "/data/a://b");
}

TEST(RemoteSourceTest, KnownSchemesOpenWithoutTouchingTheStore) {
  // Credentials and the URL's shape are checked by the fetching process.
  Result<std::unique_ptr<RemoteSource>> r = OpenRemoteSource("s3://bucket/ds");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE((*r)->RetriesItself());
}

}  // namespace
}  // namespace sluice
