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

// A Parquet row group's piece is read in parts of the source's PartSize
// (StreamShards::ReadPiece): the part size the stream's store was opened
// with, not the default's.
TEST(RemoteSourceTest, PartSizeIsTheOneTheSourceWasOpenedWith) {
  StoreOptions options;
  options.part_size = uint64_t{3} << 20;
  Result<std::unique_ptr<RemoteSource>> r = OpenRemoteSource("s3://bucket/ds", options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)->PartSize(), uint64_t{3} << 20);
  Result<std::unique_ptr<RemoteSource>> plain = OpenRemoteSource("s3://bucket/ds");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ((*plain)->PartSize(), StoreOptions{}.part_size);
  options.part_size = 0;  // never parts of no bytes
  Result<std::unique_ptr<RemoteSource>> zero = OpenRemoteSource("s3://bucket/ds", options);
  ASSERT_TRUE(zero.ok());
  EXPECT_EQ((*zero)->PartSize(), 1u);
}

}  // namespace
}  // namespace sluice
