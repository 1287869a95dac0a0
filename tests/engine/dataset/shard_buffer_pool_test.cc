// ShardBufferPool: a buffer comes back for a later Take only once its last
// holder (an alias over its bytes included) has dropped it; the largest
// Keep() returned are kept; a kept buffer is taken only when it holds the
// size asked; a buffer that outlives its pool is freed.
#include "engine/dataset/shard_buffer_pool.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include <gtest/gtest.h>

namespace sluice {
namespace {

constexpr size_t kUnit = size_t{64} << 10;

std::shared_ptr<UninitializedBuffer> Take(ShardBufferPool& pool, size_t size) {
  auto got = pool.Take(size, "a shard");
  EXPECT_TRUE(got.ok()) << got.status().ToString();
  return got.ok() ? std::move(*got) : nullptr;
}

TEST(ShardBufferPool, ABufferReturnsOnlyWhenItsLastHolderDropsIt) {
  ShardBufferPool pool(1);
  std::shared_ptr<UninitializedBuffer> first = Take(pool, 64);
  ASSERT_NE(first, nullptr);
  ASSERT_GE(first->size(), 64u);
  const std::string bytes(64, 'a');
  std::memcpy(first->data(), bytes.data(), bytes.size());
  // A view's keeper (as ArrivedBytes and a sample served in flight hold
  // the shard's room): an alias over the bytes.
  std::shared_ptr<const char> view(first, first->data());
  const char* at = first->data();
  first.reset();
  std::shared_ptr<UninitializedBuffer> second = Take(pool, 64);
  ASSERT_NE(second, nullptr);
  EXPECT_NE(second->data(), at) << "a buffer a view still reaches was handed out again";
  std::memset(second->data(), 'b', 64);
  EXPECT_EQ(std::string(view.get(), 64), bytes);
  EXPECT_EQ(pool.counters().allocated, 2u);
  EXPECT_EQ(pool.counters().reused, 0u);
  // The view dropped, its buffer is kept (the pool keeps one), and the
  // next Take gets it back.
  view.reset();
  std::shared_ptr<UninitializedBuffer> third = Take(pool, 64);
  ASSERT_NE(third, nullptr);
  EXPECT_EQ(third->data(), at);
  EXPECT_EQ(pool.counters().allocated, 2u);
  EXPECT_EQ(pool.counters().reused, 1u);
}

TEST(ShardBufferPool, KeepsTheLargestKeepBuffersAndTakesOnlyOneLargeEnough) {
  ShardBufferPool pool(2);
  // Sizes in units a new buffer is rounded to (RoomFor), so that each is
  // allocated at exactly its size.
  std::shared_ptr<UninitializedBuffer> a = Take(pool, 10 * kUnit), b = Take(pool, 30 * kUnit),
                                       c = Take(pool, 20 * kUnit);
  ASSERT_TRUE(a && b && c);
  const char* b_at = b->data();
  const char* c_at = c->data();
  a.reset();
  b.reset();
  c.reset();  // two are kept already: c's 20 units take the place of a's 10
  EXPECT_EQ(pool.counters().allocated, 3u);
  // 25 units: only b's 30 hold them.
  std::shared_ptr<UninitializedBuffer> d = Take(pool, 25 * kUnit);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->data(), b_at);
  // 15 units: c's 20, the smallest kept that holds them.
  std::shared_ptr<UninitializedBuffer> e = Take(pool, 15 * kUnit);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->data(), c_at);
  EXPECT_EQ(pool.counters().reused, 2u);
  // None kept: new.
  std::shared_ptr<UninitializedBuffer> f = Take(pool, 10 * kUnit);
  EXPECT_EQ(pool.counters().allocated, 4u);
  // A smaller buffer returned to a full pool is not kept; Keep(0) frees
  // what is kept.
  d.reset();
  e.reset();
  f.reset();  // 10 < both kept (30, 20): freed
  std::shared_ptr<UninitializedBuffer> g = Take(pool, 10 * kUnit);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->data(), c_at) << "the smallest kept that holds 10 units";
  g.reset();
  pool.Keep(0);
  std::shared_ptr<UninitializedBuffer> h = Take(pool, 5 * kUnit);
  EXPECT_EQ(pool.counters().allocated, 5u);
  EXPECT_EQ(pool.counters().reused, 3u);
}

// Shards of about one size fit each other's buffers, whichever came
// first; a zip fits its shard's.
TEST(ShardBufferPool, ANewBufferIsRoundedUpSoShardsOfAboutOneSizeFitEachOther) {
  EXPECT_EQ(ShardBufferPool::RoomFor(1), kUnit);
  EXPECT_EQ(ShardBufferPool::RoomFor(kUnit), kUnit);
  EXPECT_EQ(ShardBufferPool::RoomFor(kUnit + 1), 2 * kUnit);
  EXPECT_EQ(ShardBufferPool::RoomFor((size_t{4} << 20) - 1), size_t{4} << 20);
  EXPECT_EQ(ShardBufferPool::RoomFor((size_t{64} << 20) + 5), size_t{66} << 20);
  EXPECT_EQ(ShardBufferPool::RoomFor(SIZE_MAX - 3), SIZE_MAX - 3);
  ShardBufferPool pool(1);
  std::shared_ptr<UninitializedBuffer> smaller = Take(pool, 32700);
  ASSERT_NE(smaller, nullptr);
  EXPECT_EQ(smaller->size(), kUnit);
  const char* at = smaller->data();
  smaller.reset();
  std::shared_ptr<UninitializedBuffer> larger = Take(pool, 32900);
  ASSERT_NE(larger, nullptr);
  EXPECT_EQ(larger->data(), at);
  EXPECT_EQ(pool.counters().reused, 1u);
}

TEST(ShardBufferPool, ABufferThatOutlivesItsPoolIsFreed) {
  std::shared_ptr<UninitializedBuffer> kept;
  {
    ShardBufferPool pool(4);
    kept = Take(pool, 32);
    ASSERT_NE(kept, nullptr);
    std::memset(kept->data(), 'x', 32);
  }
  EXPECT_EQ(std::string(kept->data(), 32), std::string(32, 'x'));
  kept.reset();  // no pool to return to: freed (ASan checks it)
}

}  // namespace
}  // namespace sluice
