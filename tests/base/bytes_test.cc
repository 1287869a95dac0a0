#include "base/bytes.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

TEST(BytesTest, LittleEndian) {
  std::string s;
  AppendLE<uint32_t>(s, 0x01020304u);
  AppendLE<uint16_t>(s, 0xbeefu);
  EXPECT_EQ(HexEncode(s), "04030201efbe");
  EXPECT_EQ(LoadLE<uint32_t>(s.data()), 0x01020304u);
  EXPECT_EQ(LoadLE<uint16_t>(s.data() + 4), 0xbeefu);
}

TEST(BytesTest, Hex) {
  std::string out;
  EXPECT_TRUE(HexDecode("00fFa1", &out));
  EXPECT_EQ(out, std::string("\x00\xff\xa1", 3));
  EXPECT_FALSE(HexDecode("abc", &out));
  EXPECT_FALSE(HexDecode("zz", &out));
}

}  // namespace
}  // namespace sluice
