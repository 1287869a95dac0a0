// PiecewiseBody: PLAIN byte arrays found in a body that lies in pieces are
// DecodeByteArrays' values of the joined body, in place where a value lies
// in one piece, gathered to scratch where it does not.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "formats/parquet/encoding/plain.h"
#include "formats/parquet/encoding/plain_pieces.h"

namespace sluice::parquet {
namespace {

std::string Plain(const std::vector<std::string>& values) {
  std::string out;
  for (const std::string& v : values) {
    const uint32_t n = static_cast<uint32_t>(v.size());
    out.append(reinterpret_cast<const char*>(&n), 4);
    out += v;
  }
  return out;
}

// `body` cut at `cuts` into pieces.
std::vector<std::string_view> Cut(std::string_view body, const std::vector<size_t>& cuts) {
  std::vector<std::string_view> pieces;
  size_t at = 0;
  for (size_t c : cuts) {
    pieces.push_back(body.substr(at, c - at));
    at = c;
  }
  pieces.push_back(body.substr(at));
  return pieces;
}

TEST(PiecewiseBody, ValuesAreTheJoinedBodysInPlaceOrGathered) {
  const std::string body = "LEVELS" + Plain({"alpha", "", "beta-gamma", "d", "epsilon-zeta-eta"});
  // Cuts inside a length (8), inside a value (17, 20), at a value's edge (27).
  const std::vector<std::string_view> pieces = Cut(body, {8, 17, 20, 27});
  std::string scratch(body.size(), '#');
  PiecewiseBody pb(pieces, scratch.data(), 0, scratch.size());
  std::vector<std::string_view> expected(5), got(5);
  ASSERT_TRUE(PlainDecoder(std::string_view(body).substr(6)).DecodeByteArrays(5, expected.data()).ok());
  ASSERT_TRUE(pb.FindByteArrays(6, 5, got.data()));
  const auto in = [](std::string_view v, std::string_view whole) {
    return v.data() >= whole.data() && v.data() + v.size() <= whole.data() + whole.size();
  };
  for (size_t i = 0; i < 5; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(got[i], expected[i]);
  }
  EXPECT_TRUE(in(got[0], body));  // "alpha": [10, 15), in the piece [8, 17)
  EXPECT_TRUE(in(got[2], scratch));  // "beta-gamma": [23, 33), across the cut at 27
  EXPECT_TRUE(in(got[4], body));  // "epsilon-zeta-eta": the last piece
  EXPECT_EQ(pb.scratch_used(), 10u);  // only "beta-gamma" was gathered
  EXPECT_EQ(scratch.substr(0, 10), "beta-gamma");
}

TEST(PiecewiseBody, ValuesNotAllThereOrNoRoomAreRefused) {
  const std::string body = Plain({"one", "two", "three"});
  const std::vector<std::string_view> pieces = Cut(body, {5, 9});
  std::string scratch(body.size(), '#');
  std::vector<std::string_view> out(4);
  EXPECT_FALSE(PiecewiseBody(pieces, scratch.data(), 0, scratch.size()).FindByteArrays(0, 4, out.data()));
  std::string longer = body;
  const uint32_t big = 100;
  std::memcpy(longer.data() + 7, &big, 4);  // "two"'s length past the end
  const std::vector<std::string_view> bad = Cut(longer, {5, 9});
  EXPECT_FALSE(PiecewiseBody(bad, scratch.data(), 0, scratch.size()).FindByteArrays(0, 3, out.data()));
  // "one" straddles the cut at 5 and needs 3 bytes of scratch: given 2.
  EXPECT_FALSE(PiecewiseBody(pieces, scratch.data(), 0, 2).FindByteArrays(0, 1, out.data()));
  EXPECT_TRUE(PiecewiseBody(pieces, scratch.data(), 0, 3).FindByteArrays(0, 1, out.data()));
  EXPECT_EQ(out[0], "one");
}

// With DeferLargeGathers, a value of DeferredGathers::kFrom bytes or more
// that straddles pieces gets its room in scratch and its view at once, its
// bytes only from Ensure; smaller ones are copied as before.
TEST(PiecewiseBody, LargeStraddlingValuesAreDeferred) {
  std::string large(DeferredGathers::kFrom + 100, '\0');
  for (size_t i = 0; i < large.size(); ++i) large[i] = static_cast<char>('a' + i % 23);
  const std::string body = Plain({"small-one", large, "tail"});
  // Cuts inside "small-one" (at 8) and inside the large value (at 1000).
  const std::vector<std::string_view> pieces = Cut(body, {8, 1000});
  std::string scratch(body.size(), '#');
  PiecewiseBody pb(pieces, scratch.data(), 0, scratch.size());
  DeferredGathers deferred;
  pb.DeferLargeGathers(&deferred);
  std::vector<std::string_view> got(3);
  ASSERT_TRUE(pb.FindByteArrays(0, 3, got.data()));
  EXPECT_EQ(got[0], "small-one");  // gathered now
  EXPECT_EQ(static_cast<const void*>(got[0].data()), scratch.data());
  EXPECT_EQ(static_cast<const void*>(got[1].data()), scratch.data() + 9);
  EXPECT_EQ(got[1].size(), large.size());
  EXPECT_EQ(pb.scratch_used(), 9 + large.size());
  EXPECT_EQ(deferred.size(), 1u);
  EXPECT_EQ(got[1], std::string(large.size(), '#'));  // not yet written
  deferred.Ensure(got[1]);
  EXPECT_EQ(got[1], large);
  EXPECT_EQ(got[2], "tail");
  EXPECT_EQ(scratch.substr(9 + large.size()), std::string(scratch.size() - 9 - large.size(), '#'));
}

}  // namespace
}  // namespace sluice::parquet
