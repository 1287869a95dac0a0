// SnappyPieces: the pieces of a block are exactly its decompressed bytes,
// literals are views of the block as stored, and anything Decompress would
// refuse (or a compressible block) is refused.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "formats/codec/compression.h"
#include "formats/codec/snappy_pieces.h"

namespace sluice {
namespace {

const Compression& Snappy() {
  static const Compression c = *ParseCompression("snappy");
  return c;
}

std::string RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

// PLAIN byte arrays of random bytes, as a Parquet page holds them: the
// repeated 4-byte lengths are what libsnappy finds copies in.
std::string PlainPage(size_t values, size_t length, uint32_t seed) {
  std::string page;
  const std::string bytes = RandomBytes(values * length, seed);
  for (size_t i = 0; i < values; ++i) {
    const uint32_t n = static_cast<uint32_t>(length);
    page.append(reinterpret_cast<const char*>(&n), 4);
    page.append(bytes, i * length, length);
  }
  return page;
}

std::string Joined(const SnappyBody& body) {
  std::string out;
  for (std::string_view p : body.pieces) out += p;
  return out;
}

bool Within(std::string_view piece, std::string_view whole) {
  return piece.data() >= whole.data() && piece.data() + piece.size() <= whole.data() + whole.size();
}

TEST(SnappyPieces, APageOfRandomValuesIsItsLiteralsAndAFewCopies) {
  const std::string raw = PlainPage(1000, 1024, 7);
  const std::string packed = *Compress(Snappy(), raw);
  std::string scratch(raw.size(), '\0');
  SnappyBody body;
  ASSERT_TRUE(SnappyPieces(packed, scratch.data(), scratch.size(), &body));
  EXPECT_EQ(Joined(body), raw);
  ASSERT_EQ(body.pieces.size(), body.starts.size());
  uint64_t at = 0, in_place = 0, copied = 0;
  for (size_t i = 0; i < body.pieces.size(); ++i) {
    EXPECT_EQ(body.starts[i], at);
    at += body.pieces[i].size();
    if (Within(body.pieces[i], packed)) {
      in_place += body.pieces[i].size();
    } else {
      ASSERT_TRUE(Within(body.pieces[i], std::string_view(scratch.data(), body.scratch_used)));
      copied += body.pieces[i].size();
    }
  }
  EXPECT_EQ(copied, body.scratch_used);
  EXPECT_EQ(in_place + copied, raw.size());
  EXPECT_LT(copied * 100, raw.size());  // nearly all of it in place
  EXPECT_GT(copied, 0u);                // libsnappy found some lengths again
}

// A hand-made block: an 80-byte literal, a 3-byte literal, a copy of 6
// from 2 back (overlapping, from the short literal in scratch), and a copy
// of 4 from 89 back (from the first literal, in place). The copies are 10
// of 93 bytes, within the eighth that SnappyPieces takes.
TEST(SnappyPieces, CopiesReadFromEitherKindOfPieceAndMayOverlap) {
  std::string lit;
  for (int i = 0; i < 80; ++i) lit += static_cast<char>('A' + i % 26);
  std::string block;
  block += static_cast<char>(93);             // 80 + 3 + 6 + 4 bytes
  block += static_cast<char>(60 << 2);        // a literal whose length - 1 follows
  block += static_cast<char>(79);
  block += lit;
  block += static_cast<char>((3 - 1) << 2);   // literal of 3
  block += "xyz";
  block += static_cast<char>(2 | ((6 - 1) << 2));  // copy of 6, 2-byte offset
  block += std::string("\x02\x00", 2);
  block += static_cast<char>(2 | ((4 - 1) << 2));  // copy of 4 from 89 back
  block += std::string("\x59\x00", 2);
  const std::string expected = lit + "xyz" + "yzyzyz" + "ABCD";
  ASSERT_EQ(*Decompress(Snappy(), block, 93, "f"), expected);
  std::string scratch(93, '#');
  SnappyBody body;
  ASSERT_TRUE(SnappyPieces(block, scratch.data(), scratch.size(), &body));
  EXPECT_EQ(Joined(body), expected);
  ASSERT_EQ(body.pieces.size(), 2u);  // the literal; the rest, met in scratch
  EXPECT_EQ(body.pieces[0].data(), block.data() + 3);
  EXPECT_EQ(body.starts, (std::vector<uint64_t>{0, 80}));
  EXPECT_EQ(body.scratch_used, 13u);
  EXPECT_EQ(scratch, "xyzyzyzyzABCD" + std::string(80, '#'));  // touched only as needed
}

TEST(SnappyPieces, CompressibleBlocksAreLeftToLibsnappy) {
  std::string raw;
  while (raw.size() < 100000) raw += "the same words again and again ";
  const std::string packed = *Compress(Snappy(), raw);
  std::string scratch(raw.size(), '\0');
  SnappyBody body;
  EXPECT_FALSE(SnappyPieces(packed, scratch.data(), scratch.size(), &body));
}

// Every block that Decompress refuses is refused; so is one larger than
// the room given.
TEST(SnappyPieces, WhatDecompressRefusesIsRefused) {
  const std::string raw = PlainPage(20, 100, 3);
  const std::string packed = *Compress(Snappy(), raw);
  std::string scratch(raw.size() + 64, '\0');
  SnappyBody body;
  std::vector<std::string> bad = {
      "",
      packed.substr(0, packed.size() - 1),  // cut inside the last literal
      packed + std::string(1, '\0'),        // a tag past the declared size
      std::string("\x08\x0c" "abcd" "\x01\x00", 8),  // a copy from offset 0
      std::string("\x08\x0c" "abcd" "\x01\x09", 8),  // a copy from before the start
      std::string("\x09\x0c" "abcd", 6),             // fewer bytes than declared
      std::string("\xff\xff\xff\xff\xff", 5),        // a bad header
  };
  for (size_t i = 0; i < bad.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_FALSE(Decompress(Snappy(), bad[i], scratch.size(), "f").ok());
    EXPECT_FALSE(SnappyPieces(bad[i], scratch.data(), scratch.size(), &body));
  }
  EXPECT_TRUE(SnappyPieces(packed, scratch.data(), raw.size(), &body));
  EXPECT_FALSE(SnappyPieces(packed, scratch.data(), raw.size() - 1, &body));
}

// Damaged copies of a block, byte by byte: whenever pieces are given they
// are Decompress's bytes.
TEST(SnappyPieces, DamagedBlocksGivePiecesOnlyOfDecompressesBytes) {
  const std::string raw = PlainPage(8, 40, 11);
  const std::string packed = *Compress(Snappy(), raw);
  std::string scratch(raw.size() * 2, '\0');
  SnappyBody body;
  size_t given = 0;
  for (size_t i = 0; i < packed.size(); ++i) {
    for (int v : {0x00, 0x01, 0x02, 0x03, 0x80, 0xfd, 0xff}) {
      std::string damaged = packed;
      damaged[i] = static_cast<char>(v);
      Result<std::string> whole = Decompress(Snappy(), damaged, scratch.size(), "f");
      if (SnappyPieces(damaged, scratch.data(), scratch.size(), &body)) {
        ++given;
        ASSERT_TRUE(whole.ok()) << i << " " << v;
        EXPECT_EQ(Joined(body), *whole) << i << " " << v;
      }
    }
  }
  EXPECT_GT(given, packed.size());  // most damage to a literal's bytes decodes
}

// A raw snappy block written tag by tag: literals of the given bytes and
// copies (2-byte offsets, at most 64 bytes a tag).
class BlockWriter {
 public:
  void Literal(std::string_view bytes) {
    const size_t n = bytes.size() - 1;  // 1..65536 bytes
    if (n < 60) {
      tags_ += static_cast<char>(n << 2);
    } else if (n < 256) {
      tags_ += static_cast<char>(60 << 2);
      tags_ += static_cast<char>(n);
    } else {
      tags_ += static_cast<char>(61 << 2);
      tags_ += static_cast<char>(n & 0xff);
      tags_ += static_cast<char>(n >> 8);
    }
    tags_ += bytes;
    raw_ += bytes;
  }
  void Copy(size_t length, size_t offset) {
    tags_ += static_cast<char>(2 | ((length - 1) << 2));
    tags_ += static_cast<char>(offset & 0xff);
    tags_ += static_cast<char>(offset >> 8);
    for (size_t i = 0; i < length; ++i) raw_ += raw_[raw_.size() - offset];
  }
  std::string Block() const {
    std::string block;
    for (uint64_t n = raw_.size(); ; n >>= 7) {  // the varint length
      block += static_cast<char>((n & 0x7f) | (n >= 0x80 ? 0x80 : 0));
      if (n < 0x80) break;
    }
    return block + tags_;
  }
  const std::string& raw() const { return raw_; }

 private:
  std::string tags_, raw_;
};

// Pieces pay per tag, libsnappy per tag and per byte: blocks of short
// tags, or whose first 64 KiB are more than an eighth copies, are left to
// libsnappy even where the whole block's copies are within the eighth
// (a 1.2 MB dictionary page of words was walked whole before libsnappy
// decompressed it: twice libsnappy's instructions). Long tags still give
// pieces.
TEST(SnappyPieces, ShortTagsOrEarlyCopiesAreLeftToLibsnappy) {
  const std::string bytes = RandomBytes(1 << 20, 5);
  size_t at = 0;
  const auto next = [&](size_t n) { return std::string_view(bytes).substr((at += n) - n, n); };
  BlockWriter short_tags;  // 36-byte literals and 4-byte copies: 20 bytes a tag, 10% copies
  while (short_tags.raw().size() < 200000) {
    short_tags.Literal(next(36));
    short_tags.Copy(4, 36);
  }
  BlockWriter early_copies;  // 23% copies in the first 64 KiB, 4% of the whole
  while (early_copies.raw().size() < 70000) {
    early_copies.Literal(next(200));
    early_copies.Copy(60, 200);
  }
  while (early_copies.raw().size() < 400000) early_copies.Literal(next(4000));
  BlockWriter long_tags;  // 1000-byte literals and 8-byte copies: 504 bytes a tag
  while (long_tags.raw().size() < 400000) {
    long_tags.Literal(next(1000));
    long_tags.Copy(8, 1000);
  }
  SnappyBody body;
  for (const BlockWriter* w : {&short_tags, &early_copies, &long_tags}) {
    const std::string block = w->Block();
    std::string scratch(w->raw().size(), '\0');
    ASSERT_EQ(*Decompress(Snappy(), block, w->raw().size(), "f"), w->raw());
    const bool pieces = SnappyPieces(block, scratch.data(), scratch.size(), &body);
    EXPECT_EQ(pieces, w == &long_tags) << w->raw().size();
    if (pieces) {
      EXPECT_EQ(Joined(body), w->raw());
    }
  }
}

}  // namespace
}  // namespace sluice
