#include "stores/http/content_range.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

TEST(ContentRangeTest, Parses) {
  auto cr = ParseContentRange("bytes 10-19/100");
  ASSERT_TRUE(cr.has_value());
  EXPECT_EQ(cr->first, 10u);
  EXPECT_EQ(cr->last, 19u);
  EXPECT_EQ(*cr->total, 100u);
  EXPECT_FALSE(ParseContentRange("bytes 10-19/*")->total.has_value());
  EXPECT_FALSE(ParseContentRange("bytes 19-10/100").has_value());
  EXPECT_FALSE(ParseContentRange("bytes 10-100/100").has_value());
  EXPECT_FALSE(ParseContentRange("items 1-2/3").has_value());
}

}  // namespace
}  // namespace sluice
