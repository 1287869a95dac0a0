// DeferredGathers: a value's bytes are its segments laid end to end once
// Ensure (or GatherAll) has returned, copied once however many threads ask,
// and nothing is written for a view that is not a deferred value.
#include "formats/parquet/encoding/deferred_gathers.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace sluice::parquet {
namespace {

TEST(DeferredGathers, EnsureCopiesTheSegmentsOfThatValueOnly) {
  const std::string a = "alpha-", b = "beta-", c = "gamma";
  std::string dst(32, '#');
  DeferredGathers d;
  const std::vector<std::string_view> first = {a, b}, second = {c, a};
  ASSERT_TRUE(d.Add(dst.data(), first));
  ASSERT_TRUE(d.Add(dst.data() + 16, second));
  // Not past the last value: refused, nothing added.
  EXPECT_FALSE(d.Add(dst.data() + 8, first));
  EXPECT_EQ(d.size(), 2u);
  EXPECT_EQ(dst, std::string(32, '#'));
  d.Ensure(std::string_view(dst.data() + 16, 11));
  EXPECT_EQ(dst, std::string(16, '#') + "gammaalpha-#####");
  d.Ensure(std::string_view(dst.data() + 1, 10));  // not a value's start: nothing
  d.Ensure(std::string_view());
  EXPECT_EQ(dst.substr(0, 16), std::string(16, '#'));
  d.GatherAll();
  EXPECT_EQ(dst, "alpha-beta-#####gammaalpha-#####");
}

// Transient copies a value not yet in place into the scratch (grown when
// too small, reused otherwise) and leaves its place alone; a value Ensure
// has copied, or a view that is no value's, comes back as it is.
TEST(DeferredGathers, TransientCopiesIntoTheScratchAndLeavesThePlaceAlone) {
  const std::string a = "alpha-", b = "beta-", c = "gamma";
  std::string dst(32, '#');
  DeferredGathers d;
  const std::vector<std::string_view> first = {a, b}, second = {c};
  ASSERT_TRUE(d.Add(dst.data(), first));
  ASSERT_TRUE(d.Add(dst.data() + 16, second));
  UninitializedBuffer scratch;
  Result<std::string_view> v = d.Transient(std::string_view(dst.data(), 11), &scratch);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(*v, "alpha-beta-");
  EXPECT_EQ(v->data(), scratch.data());
  EXPECT_EQ(scratch.size(), 11u);
  // The next value overwrites the scratch, which has room already.
  const char* before = scratch.data();
  v = d.Transient(std::string_view(dst.data() + 16, 5), &scratch);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, "gamma");
  EXPECT_EQ(v->data(), before);
  EXPECT_EQ(std::string_view(scratch.data(), 11), "gamma-beta-");
  EXPECT_EQ(dst, std::string(32, '#'));  // nothing written in place
  // Copied in place by Ensure: its own view from then on.
  d.Ensure(std::string_view(dst.data() + 16, 5));
  v = d.Transient(std::string_view(dst.data() + 16, 5), &scratch);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->data(), dst.data() + 16);
  EXPECT_EQ(*v, "gamma");
  // Not a value's start, or empty: as it is.
  const std::string_view other(dst.data() + 1, 4);
  EXPECT_EQ(d.Transient(other, &scratch)->data(), other.data());
  EXPECT_EQ(d.Transient(std::string_view(), &scratch)->data(), nullptr);
}

// Pieces gives a value not yet in place as its segments, writing nothing;
// once Ensure has copied it, or for a view that is no value's, none.
TEST(DeferredGathers, PiecesAreTheSegmentsOfAValueNotYetInPlace) {
  const std::string a = "alpha-", b = "beta-", c = "gamma";
  std::string dst(32, '#');
  DeferredGathers d;
  const std::vector<std::string_view> first = {a, b}, second = {c};
  ASSERT_TRUE(d.Add(dst.data(), first));
  ASSERT_TRUE(d.Add(dst.data() + 16, second));
  std::span<const std::string_view> p = d.Pieces(std::string_view(dst.data(), 11));
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].data(), a.data());
  EXPECT_EQ(p[0], "alpha-");
  EXPECT_EQ(p[1].data(), b.data());
  EXPECT_EQ(p[1], "beta-");
  p = d.Pieces(std::string_view(dst.data() + 16, 5));
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].data(), c.data());
  EXPECT_EQ(dst, std::string(32, '#'));  // nothing written
  d.Ensure(std::string_view(dst.data() + 16, 5));
  EXPECT_TRUE(d.Pieces(std::string_view(dst.data() + 16, 5)).empty());
  EXPECT_EQ(d.Pieces(std::string_view(dst.data(), 11)).size(), 2u);
  EXPECT_TRUE(d.Pieces(std::string_view(dst.data() + 1, 4)).empty());
  EXPECT_TRUE(d.Pieces(std::string_view()).empty());
}

TEST(DeferredGathers, TruncateForgetsTheLaterValues) {
  const std::string a = "0123456789";
  std::string dst(20, '#');
  DeferredGathers d;
  const std::vector<std::string_view> one = {a};
  ASSERT_TRUE(d.Add(dst.data(), one));
  ASSERT_TRUE(d.Add(dst.data() + 10, one));
  d.Truncate(1);
  EXPECT_EQ(d.size(), 1u);
  d.GatherAll();
  EXPECT_EQ(dst, "0123456789##########");
  // The room of the forgotten value may be taken again.
  ASSERT_TRUE(d.Add(dst.data() + 10, one));
  d.Ensure(std::string_view(dst.data() + 10, 10));
  EXPECT_EQ(dst, "01234567890123456789");
}

// Threads read the same values at once: each sees the whole value.
TEST(DeferredGathers, ThreadsAskingAtOnceSeeTheWholeValue) {
  std::string src(1 << 20, '\0');
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<char>(i * 7 + i / 251);
  constexpr size_t kValues = 16, kSize = (size_t{1} << 20) / kValues;
  std::string dst(src.size(), '#');
  DeferredGathers d;
  for (size_t v = 0; v < kValues; ++v) {
    const std::string_view s(src.data() + v * kSize, kSize);
    const std::vector<std::string_view> segments = {s.substr(0, 1000), s.substr(1000, 5), s.substr(1005)};
    ASSERT_TRUE(d.Add(dst.data() + v * kSize, segments));
  }
  std::vector<std::thread> threads;
  std::vector<int> ok(4, 1);
  for (size_t t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (size_t v = 0; v < kValues; ++v) {
        const size_t k = (v + t) % kValues;
        const std::string_view view(dst.data() + k * kSize, kSize);
        d.Ensure(view);
        if (view != std::string_view(src).substr(k * kSize, kSize)) ok[t] = 0;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(ok, std::vector<int>(4, 1));
  EXPECT_EQ(dst, src);
}

}  // namespace
}  // namespace sluice::parquet
