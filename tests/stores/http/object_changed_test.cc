#include <gtest/gtest.h>

#include "stores/http/http_client.h"

namespace sluice {
namespace {

TEST(ObjectChangedTest, BothChangesAreToldWithContextInFront) {
  Status size = ObjectSizeChangedError("s3://b/shard.00000.mds", 900, 1000);
  Status version = ObjectVersionChangedError("s3://b/shard.00000.mds", "\"v1\"", "\"v2\"", 0, 64);
  EXPECT_EQ(size.ToString(),
            "corrupt: s3://b/shard.00000.mds: the object is 900 bytes, index.json says 1000 "
            "(the remote changed since it was indexed?)");
  EXPECT_EQ(version.ToString(),
            "corrupt: s3://b/shard.00000.mds: changed since it was listed (ETag \"v2\", listed "
            "\"v1\"); bytes 0..64 not read");
  EXPECT_TRUE(IsObjectChangedError(size));
  EXPECT_TRUE(IsObjectChangedError(version));
  EXPECT_TRUE(IsObjectChangedError(size.WithContext("shard 0").WithContext("peeking")));
  EXPECT_TRUE(IsObjectChangedError(version.WithContext("shard 0")));
}

// The mark decides, not the words: an error that merely quotes a changed
// object's text (a corrupt shard whose message ends the same way) is another
// failure, and one of another code never is.
TEST(ObjectChangedTest, TheWordsAloneDoNotMakeAChange) {
  Status size = ObjectSizeChangedError("u", 1, 2);
  EXPECT_FALSE(IsObjectChangedError(CorruptError(size.message())));
  EXPECT_FALSE(IsObjectChangedError(Status(StatusCode::kIoError, size.message())
                                        .WithMark(StatusMark::kSourceChanged)));
  EXPECT_FALSE(IsObjectChangedError(CorruptError("u: truncated")));
}

}  // namespace
}  // namespace sluice
