#include "stores/http/parts_version.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

TEST(PartsVersionTest, TheFirstAnswerFixesTheVersionAndLaterOnesMustStateIt) {
  PartsVersion v;
  EXPECT_EQ(v.Etag(), "");
  EXPECT_EQ(v.Disagreement(2, "\"v1\""), std::nullopt);
  EXPECT_EQ(v.Etag(), "\"v1\"");
  EXPECT_EQ(v.first_part(), 2u);
  EXPECT_EQ(v.Disagreement(0, "v1"), std::nullopt);  // quoted or bare: SameEtag
  EXPECT_EQ(v.Disagreement(4, "\"v2\""), "part 3 has ETag \"v1\", part 5 has ETag \"v2\"");
  // The lower part is named first, whichever answered first.
  EXPECT_EQ(v.Disagreement(1, ""), "part 2 has ETag (none), part 3 has ETag \"v1\"");
  EXPECT_EQ(v.first_part(), 2u);
}

TEST(PartsVersionTest, AFirstAnswerStatingNoETagIsAVersionToo) {
  PartsVersion v;
  EXPECT_EQ(v.Disagreement(0, ""), std::nullopt);
  EXPECT_EQ(v.Etag(), "");  // nothing to ask for by If-Match
  EXPECT_EQ(v.Disagreement(1, ""), std::nullopt);
  EXPECT_EQ(v.Disagreement(2, "\"v1\""), "part 1 has ETag (none), part 3 has ETag \"v1\"");
}

}  // namespace
}  // namespace sluice
