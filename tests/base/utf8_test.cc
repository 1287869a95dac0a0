#include "base/utf8.h"

#include <gtest/gtest.h>

#include <string>

namespace sluice {
namespace {

constexpr size_t kValid = std::string_view::npos;

TEST(FindInvalidUtf8, AcceptsWhatPythonDecodes) {
  EXPECT_EQ(FindInvalidUtf8(""), kValid);
  EXPECT_EQ(FindInvalidUtf8(std::string("a\0b", 3)), kValid);
  EXPECT_EQ(FindInvalidUtf8("\xc2\x80"), kValid);            // U+0080, shortest 2-byte
  EXPECT_EQ(FindInvalidUtf8("\xe0\xa0\x80"), kValid);        // U+0800, shortest 3-byte
  EXPECT_EQ(FindInvalidUtf8("\xed\x9f\xbf"), kValid);        // U+D7FF, last before surrogates
  EXPECT_EQ(FindInvalidUtf8("\xee\x80\x80"), kValid);        // U+E000, first after them
  EXPECT_EQ(FindInvalidUtf8("\xef\xbf\xbf"), kValid);        // U+FFFF
  EXPECT_EQ(FindInvalidUtf8("\xf0\x90\x80\x80"), kValid);    // U+10000, shortest 4-byte
  EXPECT_EQ(FindInvalidUtf8("\xf4\x8f\xbf\xbf"), kValid);    // U+10FFFF
  EXPECT_EQ(FindInvalidUtf8("h\xc3\xa9llo \xe2\x82\xac"), kValid);
}

// A bad or multi-byte sequence at every offset of a run of ASCII (read
// eight bytes at a time): found at its own offset, or accepted.
TEST(FindInvalidUtf8, FindsASequenceAtAnyOffsetOfAnAsciiRun) {
  const std::string ascii(24, 'a');
  for (size_t at = 0; at <= ascii.size(); ++at) {
    const std::string head = ascii.substr(0, at), tail = ascii.substr(at);
    EXPECT_EQ(FindInvalidUtf8(head + "\x80" + tail), at);
    EXPECT_EQ(FindInvalidUtf8(head + "\xed\xa0\x80" + tail), at);  // a surrogate
    EXPECT_EQ(FindInvalidUtf8(head + "\xe2\x82\xac" + tail), kValid);
    EXPECT_EQ(FindInvalidUtf8(head + "\xe2\x82\xac" + tail + "\xff"), at + 3 + tail.size());
    EXPECT_EQ(FindInvalidUtf8(head + "\xc3"), at);  // truncated at the end
  }
}

// Offsets are those of UnicodeDecodeError.start for bytes.decode("utf-8").
TEST(FindInvalidUtf8, ReportsTheLeadByteOfTheFirstBadSequence) {
  EXPECT_EQ(FindInvalidUtf8("\x80"), 0u);                    // lone continuation
  EXPECT_EQ(FindInvalidUtf8("ab\xc0\x80"), 2u);              // overlong 2-byte lead
  EXPECT_EQ(FindInvalidUtf8("\xc1\xbf"), 0u);
  EXPECT_EQ(FindInvalidUtf8("x\xe0\x9f\xbf"), 1u);           // overlong 3-byte
  EXPECT_EQ(FindInvalidUtf8("\xf0\x8f\xbf\xbf"), 0u);        // overlong 4-byte
  EXPECT_EQ(FindInvalidUtf8("ok\xed\xa0\x80"), 2u);          // surrogate U+D800
  EXPECT_EQ(FindInvalidUtf8("\xed\xbf\xbf"), 0u);            // surrogate U+DFFF
  EXPECT_EQ(FindInvalidUtf8("\xf4\x90\x80\x80"), 0u);        // above U+10FFFF
  EXPECT_EQ(FindInvalidUtf8("\xf5\x80\x80\x80"), 0u);
  EXPECT_EQ(FindInvalidUtf8("\xff"), 0u);
  EXPECT_EQ(FindInvalidUtf8("ok\xc3"), 2u);                  // truncated at the end
  EXPECT_EQ(FindInvalidUtf8("\xe2\x82"), 0u);
  EXPECT_EQ(FindInvalidUtf8("a\xe2\x82("), 1u);              // bad third byte
  EXPECT_EQ(FindInvalidUtf8("\xf0\x9f\x98("), 0u);           // bad fourth byte
  EXPECT_EQ(FindInvalidUtf8("\xc3\xa9\xc3\xa9\xff\x80"), 4u);  // first of two errors
}

}  // namespace
}  // namespace sluice
