// Definition/repetition levels into list and leaf slots: the shapes of
// list<int>, list<list<int>> and a primitive, and each inconsistency's error.
#include "formats/parquet/level_assembler.h"

#include <gtest/gtest.h>

#include <random>
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

// The list<primitive> path checks blocks of 8 present elements together
// (level_assembler.cc, PresentElements): its output against a per-entry
// model of the rules, for each shape of max definition level 1 to 3, with
// runs of present elements ending inside and at the edges of blocks, null
// elements, null and empty lists between them, and pages cut anywhere.
struct Shape {
  const char* name;
  FieldSlot list;
  FieldSlot element;
  int16_t max_def;
};

constexpr Shape kShapes[] = {
    {"required list<required>", {0, 1, false}, {1, 0, false}, 1},
    {"optional list<required>", {1, 2, true}, {2, 0, false}, 2},
    {"required list<optional>", {0, 1, false}, {2, 0, true}, 2},
    {"optional list<optional>", {1, 2, true}, {3, 0, true}, 3},
};

struct Assembled {
  uint64_t rows = 0;
  std::string list_validity;
  std::string offsets = "0";
  std::string leaf_validity;
  uint64_t present = 0;
};

Assembled Model(const Shape& shape, const std::vector<uint32_t>& def, const std::vector<uint32_t>& rep) {
  Assembled m;
  std::vector<int64_t> offsets = {0};
  for (size_t i = 0; i < def.size(); ++i) {
    if (rep[i] == 0) {
      ++m.rows;
      offsets.push_back(offsets.back());
      m.list_validity += def[i] >= static_cast<uint32_t>(shape.list.present_from) ? '1' : '0';
      if (def[i] < static_cast<uint32_t>(shape.list.entries_from)) continue;
    }
    ++offsets.back();
    const bool present = def[i] >= static_cast<uint32_t>(shape.element.present_from);
    m.leaf_validity += present ? '1' : '0';
    m.present += present;
  }
  m.offsets.clear();
  for (int64_t o : offsets) m.offsets += (m.offsets.empty() ? "" : ",") + std::to_string(o);
  return m;
}

// Rows of a random mix: long runs of present elements (lengths around the
// block of 8), null elements alone and in runs, empty and null lists.
void RandomRows(const Shape& shape, std::mt19937* rng, size_t rows, std::vector<uint32_t>* def,
                std::vector<uint32_t>* rep) {
  const uint32_t max_def = static_cast<uint32_t>(shape.max_def);
  auto pick = [&](uint32_t bound) { return static_cast<uint32_t>((*rng)() % bound); };
  for (size_t r = 0; r < rows; ++r) {
    const uint32_t kind = pick(8);
    if (kind == 0 && shape.list.nullable) {  // a null list
      def->push_back(0);
      rep->push_back(0);
      continue;
    }
    if (kind == 1) {  // an empty list
      def->push_back(static_cast<uint32_t>(shape.list.entries_from) - 1);
      rep->push_back(0);
      continue;
    }
    const size_t length = 1 + (kind == 2 ? pick(300) : pick(40));
    for (size_t e = 0; e < length; ++e) {
      uint32_t d = max_def;
      if (shape.element.nullable && pick(kind == 3 ? 2 : 25) == 0) d = max_def - 1;
      def->push_back(d);
      rep->push_back(e == 0 ? 0 : 1);
    }
  }
}

Assembled Assemble(const Shape& shape, const std::vector<uint32_t>& def, const std::vector<uint32_t>& rep,
                   const std::vector<size_t>& cuts) {
  Field f;
  f.list_depth = 1;
  f.slots = {shape.list, shape.element};
  ColumnBuffer b;
  LevelAssembler a(f, Leaf(shape.max_def, 1), &b);
  size_t from = 0;
  for (size_t cut : cuts) {
    EXPECT_TRUE(a.Append(def.data() + from, rep.data() + from, cut - from).ok());
    from = cut;
  }
  EXPECT_TRUE(a.Append(def.data() + from, rep.data() + from, def.size() - from).ok());
  Assembled m;
  m.rows = b.num_rows;
  m.list_validity = Bytes(b.lists[0].validity);
  m.offsets = Offsets(b.lists[0].offsets);
  m.leaf_validity = Bytes(b.validity);
  m.present = a.present_slots();
  EXPECT_EQ(a.levels_seen(), def.size());
  return m;
}

void ExpectSame(const Assembled& got, const Assembled& want) {
  EXPECT_EQ(got.rows, want.rows);
  EXPECT_EQ(got.list_validity, want.list_validity);
  EXPECT_EQ(got.offsets, want.offsets);
  EXPECT_EQ(got.leaf_validity, want.leaf_validity);
  EXPECT_EQ(got.present, want.present);
}

TEST(LevelAssembler, ListBlocksMatchThePerEntryRules) {
  for (const Shape& shape : kShapes) {
    SCOPED_TRACE(shape.name);
    std::mt19937 rng(35);
    for (int round = 0; round < 20; ++round) {
      std::vector<uint32_t> def, rep;
      RandomRows(shape, &rng, 60, &def, &rep);
      std::vector<size_t> cuts;  // pages cut at random levels, a row's middle included
      for (size_t at = 1 + rng() % 50; at < def.size(); at += 1 + rng() % 200) cuts.push_back(at);
      ExpectSame(Assemble(shape, def, rep, cuts), Model(shape, def, rep));
    }
  }
}

TEST(LevelAssembler, ListBlockEdges) {
  // One row whose list holds a null element at each position 0..19 in
  // turn (a block's first, middle and last entry, and the entry after
  // it), rows of 7, 8, 9, 16 and 17 present elements, an empty list and a
  // null one between; pages cut at every level in turn.
  for (const Shape& shape : kShapes) {
    SCOPED_TRACE(shape.name);
    const uint32_t max_def = static_cast<uint32_t>(shape.max_def);
    for (size_t hole = 0; hole < 20; ++hole) {
      std::vector<uint32_t> def, rep;
      for (size_t e = 0; e < 20; ++e) {
        def.push_back(e == hole && shape.element.nullable ? max_def - 1 : max_def);
        rep.push_back(e == 0 ? 0 : 1);
      }
      for (size_t length : {7, 8, 9, 16, 17}) {
        for (size_t e = 0; e < length; ++e) {
          def.push_back(max_def);
          rep.push_back(e == 0 ? 0 : 1);
        }
        def.push_back(static_cast<uint32_t>(shape.list.entries_from) - 1);  // empty
        rep.push_back(0);
        def.push_back(0);  // null where the list is optional, else empty
        rep.push_back(0);
      }
      const Assembled want = Model(shape, def, rep);
      ExpectSame(Assemble(shape, def, rep, {}), want);
      for (size_t cut = 1; cut < def.size(); cut += 3) ExpectSame(Assemble(shape, def, rep, {cut}), want);
    }
  }
}

TEST(LevelAssembler, InconsistenciesInsideBlocks) {
  // The same errors, at the same level, where the fault lies deep in a
  // run of present elements (inside the second and third blocks of 8).
  std::vector<uint32_t> def(30, 3), rep(30, 1);
  rep[0] = 0;
  std::vector<uint32_t> d = def;
  d[13] = 4;
  EXPECT_EQ(AssembleError(d, rep), "corrupt: level 13: definition level 4 above the maximum 3");
  std::vector<uint32_t> r = rep;
  r[17] = 2;
  EXPECT_EQ(AssembleError(def, r), "corrupt: level 17: repetition level 2 above the maximum 1");
  d = def;
  d[23] = 1;
  EXPECT_EQ(AssembleError(d, rep),
            "corrupt: level 23: definition level 1 leaves empty a list that repetition level 1 continues");
}

}  // namespace
}  // namespace sluice::parquet
