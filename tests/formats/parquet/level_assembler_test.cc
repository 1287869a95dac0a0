// Definition/repetition levels into list and leaf slots: the shapes of
// list<int>, list<list<int>> and a primitive, and each inconsistency's error.
#include "formats/parquet/level_assembler.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sluice::parquet {
namespace {

// optional list<optional int>: slots [1,2,null][3,0,null], max def 3, rep 1.
Field ListField() {
  Field f;
  f.name = "ids";
  f.list_depth = 1;
  f.slots = {FieldSlot{1, 2, true}, FieldSlot{3, 0, true}};
  f.leaf_count = 1;
  return f;
}

LeafColumn Leaf(int16_t def, int16_t rep) {
  LeafColumn l;
  l.max_definition_level = def;
  l.max_repetition_level = rep;
  return l;
}

template <class Flags>  // a list level's or the leaf's validity
std::string Bytes(const Flags& v) {
  std::string s;
  for (uint8_t b : v) s += static_cast<char>('0' + b);
  return s;
}

std::string Offsets(const SlotArray<int64_t>& v) {
  std::string s;
  for (int64_t o : v) s += (s.empty() ? "" : ",") + std::to_string(o);
  return s;
}

TEST(LevelAssembler, ListOfNullableInts) {
  // rows: [1, null], null, [], [4]   (values as def levels)
  const Field f = ListField();
  ColumnBuffer b;
  LevelAssembler a(f, Leaf(3, 1), &b);
  const std::vector<uint32_t> def = {3, 2, 0, 1, 3};
  const std::vector<uint32_t> rep = {0, 1, 0, 0, 0};
  ASSERT_TRUE(a.Append(def.data(), rep.data(), 3).ok());  // pages may split anywhere
  ASSERT_TRUE(a.Append(def.data() + 3, rep.data() + 3, 2).ok());
  EXPECT_EQ(b.num_rows, 4u);
  ASSERT_EQ(b.lists.size(), 1u);
  EXPECT_EQ(Bytes(b.lists[0].validity), "1011");
  EXPECT_EQ(Offsets(b.lists[0].offsets), "0,2,2,2,3");
  EXPECT_EQ(Bytes(b.validity), "101");
  EXPECT_EQ(a.levels_seen(), 5u);
}

TEST(LevelAssembler, LongListsSplitAcrossPagesCountPresentSlots) {
  // rows: [1, 2, null, 4, 5], [6, null], null — the second page continues
  // the first row's list.
  const Field f = ListField();
  ColumnBuffer b;
  LevelAssembler a(f, Leaf(3, 1), &b);
  const std::vector<uint32_t> def = {3, 3, 2, 3, 3, 3, 2, 0};
  const std::vector<uint32_t> rep = {0, 1, 1, 1, 1, 0, 1, 0};
  ASSERT_TRUE(a.Append(def.data(), rep.data(), 2).ok());
  EXPECT_EQ(a.present_slots(), 2u);
  ASSERT_TRUE(a.Append(def.data() + 2, rep.data() + 2, 6).ok());
  EXPECT_EQ(b.num_rows, 3u);
  EXPECT_EQ(Bytes(b.lists[0].validity), "110");
  EXPECT_EQ(Offsets(b.lists[0].offsets), "0,5,7,7");
  EXPECT_EQ(Bytes(b.validity), "1101110");
  EXPECT_EQ(a.present_slots(), 5u);
}

TEST(LevelAssembler, ListOfLists) {
  // required list<optional list<required int>>: slots [0,1][2,3,null][3]
  Field f;
  f.list_depth = 2;
  f.slots = {FieldSlot{0, 1, false}, FieldSlot{2, 3, true}, FieldSlot{3, 0, false}};
  ColumnBuffer b;
  LevelAssembler a(f, Leaf(3, 2), &b);
  // rows: [[1, 2], null, []], [], [[3]]
  const std::vector<uint32_t> def = {3, 3, 1, 2, 0, 3};
  const std::vector<uint32_t> rep = {0, 2, 1, 1, 0, 0};
  ASSERT_TRUE(a.Append(def.data(), rep.data(), def.size()).ok());
  EXPECT_EQ(b.num_rows, 3u);
  EXPECT_EQ(Bytes(b.lists[0].validity), "111");
  EXPECT_EQ(Offsets(b.lists[0].offsets), "0,3,3,4");
  EXPECT_EQ(Bytes(b.lists[1].validity), "1011");
  EXPECT_EQ(Offsets(b.lists[1].offsets), "0,2,2,2,3");
  EXPECT_EQ(Bytes(b.validity), "111");
}

TEST(LevelAssembler, Primitive) {
  Field f;
  f.slots = {FieldSlot{1, 0, true}};
  ColumnBuffer b;
  LevelAssembler a(f, Leaf(1, 0), &b);
  const std::vector<uint32_t> def = {1, 0, 1};
  ASSERT_TRUE(a.Append(def.data(), nullptr, 3).ok());
  EXPECT_EQ(b.num_rows, 3u);
  EXPECT_EQ(Bytes(b.validity), "101");
  const std::vector<uint32_t> bad = {2};
  EXPECT_EQ(a.Append(bad.data(), nullptr, 1).ToString(),
            "corrupt: level 3: definition level 2 above the maximum 1");
}

std::string AssembleError(std::vector<uint32_t> def, std::vector<uint32_t> rep) {
  const Field f = ListField();
  ColumnBuffer b;
  LevelAssembler a(f, Leaf(3, 1), &b);
  return a.Append(def.data(), rep.data(), def.size()).ToString();
}

TEST(LevelAssembler, Inconsistencies) {
  EXPECT_EQ(AssembleError({3}, {1}), "corrupt: level 0: repetition level 1 continues a list that is not open");
  EXPECT_EQ(AssembleError({1, 3}, {0, 1}), "corrupt: level 1: repetition level 1 continues a list that is not open");
  EXPECT_EQ(AssembleError({3, 1}, {0, 1}),
            "corrupt: level 1: definition level 1 leaves empty a list that repetition level 1 continues");
  EXPECT_EQ(AssembleError({3, 3}, {0, 2}), "corrupt: level 1: repetition level 2 above the maximum 1");
  EXPECT_EQ(AssembleError({4}, {0}), "corrupt: level 0: definition level 4 above the maximum 3");
  // Inside a run of elements continuing a list.
  EXPECT_EQ(AssembleError({3, 3, 3, 4, 3}, {0, 1, 1, 1, 1}),
            "corrupt: level 3: definition level 4 above the maximum 3");
  EXPECT_EQ(AssembleError({3, 3, 3, 3}, {0, 1, 1, 2}), "corrupt: level 3: repetition level 2 above the maximum 1");
  EXPECT_EQ(AssembleError({3, 3, 1, 3}, {0, 1, 1, 1}),
            "corrupt: level 2: definition level 1 leaves empty a list that repetition level 1 continues");
}

}  // namespace
}  // namespace sluice::parquet
