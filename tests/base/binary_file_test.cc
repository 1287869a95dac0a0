// The binary files' header rule (base/binary_file.h): a sealed file reads
// back, and a truncated, corrupt, stale, wrong-version or wrong-magic one
// gives its exact error.
#include "base/binary_file.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

namespace sluice {
namespace {

// A keyed file: the head, two u64 counts, then `records` of 8 bytes and a
// text of `text` bytes.
struct TestHeader {
  KeyedFileHead head;
  uint64_t records;
  uint64_t text;
};

constexpr BinaryFileKind kKind{"SLUICETS", 3, sizeof(TestHeader), "a test file", "made from another test"};

std::string Sealed(uint64_t key) {
  const std::string records = std::string("\1\0\0\0\0\0\0\0\2\0\0\0\0\0\0\0", 16);
  const std::string text = "hello";
  const std::string_view body[] = {records, text};
  TestHeader h{SealKeyedHead(kKind, key, body), 2, text.size()};
  std::string out(reinterpret_cast<const char*>(&h), sizeof(h));
  return out + records + text;
}

Status Check(std::string_view bytes, uint64_t key = 7) {
  auto head = ReadKeyedHead(bytes, kKind, key, "state/t.bin");
  if (!head.ok()) return head.status();
  TestHeader h;
  std::memcpy(&h, bytes.data(), sizeof(h));
  return CheckKeyedBody(bytes, *head, {{h.records, 8}, {h.text, 1}}, "state/t.bin");
}

TEST(BinaryFile, ASealedFileReadsBackWithItsKeyAndChecksum) {
  const std::string good = Sealed(7);
  ASSERT_EQ(good.size(), 48u + 16 + 5);
  // The head's bytes: magic, version, header size, key, then the checksum.
  EXPECT_EQ(good.substr(0, 16), std::string("SLUICETS\3\0\0\0\x30\0\0\0", 16));
  EXPECT_EQ(good.substr(16, 8), std::string("\7\0\0\0\0\0\0\0", 8));
  EXPECT_TRUE(Check(good).ok()) << Check(good).ToString();
  auto head = ReadKeyedHead(good, kKind, 7, "t");
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(head->key, 7u);
  EXPECT_EQ(head->header_bytes, sizeof(TestHeader));
}

TEST(BinaryFile, ATruncatedFileSaysHowShort) {
  const std::string good = Sealed(7);
  EXPECT_EQ(Check(good.substr(0, 40)).ToString(),
            "corrupt: state/t.bin: 40 bytes, shorter than the 48-byte header of a test file");
  EXPECT_EQ(Check("").ToString(), "corrupt: state/t.bin: 0 bytes, shorter than the 48-byte header of a test file");
  EXPECT_EQ(Check(good.substr(0, good.size() - 1)).ToString(),
            "corrupt: state/t.bin: sections larger than the file's 68 bytes");
  EXPECT_EQ(Check(good + "x").ToString(), "corrupt: state/t.bin: 70 bytes where its header says 69");
  // Counts that overflow when multiplied are too large, not wrapped.
  std::string huge = good;
  const uint64_t records = uint64_t{1} << 61;
  std::memcpy(huge.data() + 32, &records, 8);
  EXPECT_EQ(Check(huge).ToString(), "corrupt: state/t.bin: sections larger than the file's 69 bytes");
}

TEST(BinaryFile, ACorruptBodyIsAChecksumMismatch) {
  const std::string good = Sealed(7);
  for (size_t at = sizeof(TestHeader); at < good.size(); ++at) {
    std::string bad = good;
    bad[at] ^= 0x04;
    EXPECT_EQ(Check(bad).ToString(), "corrupt: state/t.bin: checksum mismatch") << at;
  }
}

TEST(BinaryFile, AnotherVersionOrMagicOrHeaderSizeIsNotRead) {
  std::string bad = Sealed(7);
  bad[8] = 4;
  EXPECT_EQ(Check(bad).ToString(), "corrupt: state/t.bin: a test file of layout 4, expected 3");
  bad = Sealed(7);
  bad[7] = 'X';
  EXPECT_EQ(Check(bad).ToString(), "corrupt: state/t.bin: not a test file");
  bad = Sealed(7);
  bad[12] = 40;
  EXPECT_EQ(Check(bad).ToString(), "corrupt: state/t.bin: a header of 40 bytes, expected 48");
}

TEST(BinaryFile, AFileOfAnotherKeyIsStaleBeforeItsBodyIsRead) {
  std::string old = Sealed(8);
  EXPECT_EQ(Check(old).ToString(), "not found: state/t.bin: made from another test (stale)");
  old[sizeof(TestHeader)] ^= 1;  // the body is not hashed: still stale, not corrupt
  EXPECT_EQ(Check(old).ToString(), "not found: state/t.bin: made from another test (stale)");
}

TEST(BinaryFile, TheTagAloneChecksMagicVersionAndSize) {
  const BinaryFileTag tag = TagOf(kKind);
  std::string bytes(reinterpret_cast<const char*>(&tag), sizeof(tag));
  EXPECT_EQ(bytes, std::string("SLUICETS\3\0\0\0", 12));
  EXPECT_EQ(CheckBinaryTag(bytes, kKind, "f").ToString(),
            "corrupt: f: 12 bytes, shorter than the 48-byte header of a test file");
  bytes.resize(48, '\0');
  EXPECT_TRUE(CheckBinaryTag(bytes, kKind, "f").ok());
}

}  // namespace
}  // namespace sluice
