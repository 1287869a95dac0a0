#include "tests/stores/credentials/form_fields.h"

#include <gtest/gtest.h>

namespace sluice::testing {
namespace {

TEST(FormFieldsTest, DecodesAsTokenServicesDo) {
  using Fields = std::map<std::string, std::string>;
  EXPECT_EQ(FormFields("grant_type=client_credentials&scope=https%3A%2F%2Fstorage.azure.com%2F.default"),
            (Fields{{"grant_type", "client_credentials"},
                    {"scope", "https://storage.azure.com/.default"}}));
  // '+' is a space; an encoded plus is a plus.
  EXPECT_EQ(FormFields("RoleSessionName=a+b%2Bc"), (Fields{{"RoleSessionName", "a b+c"}}));
  // Names are decoded too; empty pairs are skipped; no '=' is an empty value.
  EXPECT_EQ(FormFields("&x%5Fy=1&&flag&"), (Fields{{"flag", ""}, {"x_y", "1"}}));
  EXPECT_EQ(FormFields(""), Fields{});
  // A malformed escape is visible, not guessed at.
  EXPECT_EQ(FormFields("a=%zz&b=%4"), (Fields{{"a", "<malformed>"}, {"b", "<malformed>"}}));
}

}  // namespace
}  // namespace sluice::testing
