// ShardBufferPool: a buffer comes back for a later Take only once its last
// holder (an alias over its bytes included) has dropped it; at most Keep()
// are kept; a kept buffer is taken only when it holds the size asked; a
// buffer that outlives its pool is freed.
#include "engine/dataset/shard_buffer_pool.h"

#include <cstring>
#include <memory>
#include <string>

#include <gtest/gtest.h>

namespace sluice {
namespace {

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

TEST(ShardBufferPool, KeepsAtMostKeepBuffersAndTakesOnlyOneLargeEnough) {
  ShardBufferPool pool(2);
  std::shared_ptr<UninitializedBuffer> a = Take(pool, 100), b = Take(pool, 300),
                                       c = Take(pool, 200);
  ASSERT_TRUE(a && b && c);
  const char* b_at = b->data();
  a.reset();
  b.reset();
  c.reset();  // the third returned: two are kept already, it is freed
  EXPECT_EQ(pool.counters().allocated, 3u);
  // 250 bytes: only b's 300 holds them.
  std::shared_ptr<UninitializedBuffer> d = Take(pool, 250);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->data(), b_at);
  // 200 bytes: a's 100 does not hold them and c's was not kept: new.
  std::shared_ptr<UninitializedBuffer> e = Take(pool, 200);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(pool.counters().allocated, 4u);
  EXPECT_EQ(pool.counters().reused, 1u);
  // Keep(0) frees what is kept: a's buffer is not taken again.
  pool.Keep(0);
  std::shared_ptr<UninitializedBuffer> f = Take(pool, 50);
  EXPECT_EQ(pool.counters().allocated, 5u);
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
