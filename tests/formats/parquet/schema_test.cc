// Schema -> leaf columns and field shapes, for the list forms writers
// produce, the refused shapes, and malformed schemas.
#include "formats/parquet/schema.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sluice::parquet {
namespace {

SchemaElement Group(const char* name, Repetition r, int children,
                    std::optional<ConvertedType> converted = std::nullopt) {
  SchemaElement e;
  e.name = name;
  e.repetition = r;
  e.num_children = children;
  e.converted_type = converted;
  if (converted == ConvertedType::kList) e.logical_type.kind = LogicalType::Kind::kList;
  return e;
}

SchemaElement Leaf(const char* name, Repetition r, PhysicalType t) {
  SchemaElement e;
  e.name = name;
  e.repetition = r;
  e.type = t;
  return e;
}

FileMetaData Meta(std::vector<SchemaElement> fields, int top_level) {
  FileMetaData m;
  SchemaElement root;
  root.name = "schema";
  root.num_children = top_level;
  m.schema.push_back(root);
  for (auto& f : fields) m.schema.push_back(std::move(f));
  return m;
}

constexpr auto kReq = Repetition::kRequired;
constexpr auto kOpt = Repetition::kOptional;
constexpr auto kRep = Repetition::kRepeated;

std::string Slots(const Field& f) {
  std::string s;
  for (const FieldSlot& slot : f.slots) {
    s += "[" + std::to_string(slot.present_from) + "," + std::to_string(slot.entries_from) +
         (slot.nullable ? ",null]" : "]");
  }
  return s;
}

TEST(Schema, ListFormsWritersProduce) {
  SchemaElement ts = Leaf("ts", kOpt, PhysicalType::kInt64);
  ts.logical_type.kind = LogicalType::Kind::kTimestamp;
  ts.logical_type.unit = TimeUnit::kMicros;
  FileMetaData m = Meta(
      {
          ts,
          // pyarrow / Spark 3-level list<int64>
          Group("ids", kOpt, 1, ConvertedType::kList), Group("list", kRep, 1),
          Leaf("element", kOpt, PhysicalType::kInt64),
          // list<list<int16>>, the outer list required
          Group("ll", kReq, 1, ConvertedType::kList), Group("list", kRep, 1),
          Group("element", kOpt, 1, ConvertedType::kList), Group("list", kRep, 1),
          Leaf("element", kReq, PhysicalType::kInt32),
          // Spark's legacy 2-level list: the repeated primitive is the element
          Group("legacy", kOpt, 1, ConvertedType::kList), Leaf("array", kRep, PhysicalType::kInt32),
          // Hive / parquet-avro "bag"
          Group("hive", kOpt, 1, ConvertedType::kList), Group("bag", kRep, 1),
          Leaf("array_element", kOpt, PhysicalType::kByteArray),
          // a bare repeated primitive
          Leaf("tokens", kRep, PhysicalType::kInt32),
      },
      6);
  Result<Schema> s = BuildSchema(m, "f.parquet");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->leaves.size(), 6u);
  ASSERT_EQ(s->fields.size(), 6u);

  EXPECT_EQ(s->leaves[0].path, "ts");
  EXPECT_EQ(s->leaves[0].max_definition_level, 1);
  EXPECT_EQ(s->leaves[0].max_repetition_level, 0);
  EXPECT_EQ(LogicalTypeName(s->leaves[0].logical_type), "TIMESTAMP(MICROS,local)");
  EXPECT_EQ(s->fields[0].list_depth, 0u);
  EXPECT_EQ(Slots(s->fields[0]), "[1,0,null]");

  EXPECT_EQ(s->leaves[1].path, "ids.list.element");
  EXPECT_EQ(s->leaves[1].path_parts, (std::vector<std::string>{"ids", "list", "element"}));
  EXPECT_EQ(s->leaves[1].max_definition_level, 3);
  EXPECT_EQ(s->leaves[1].max_repetition_level, 1);
  EXPECT_EQ(s->leaves[1].field, 1u);
  EXPECT_EQ(s->fields[1].list_depth, 1u);
  EXPECT_EQ(Slots(s->fields[1]), "[1,2,null][3,0,null]");

  EXPECT_EQ(s->leaves[2].path, "ll.list.element.list.element");
  EXPECT_EQ(s->leaves[2].max_definition_level, 3);
  EXPECT_EQ(s->leaves[2].max_repetition_level, 2);
  EXPECT_EQ(s->fields[2].list_depth, 2u);
  EXPECT_EQ(Slots(s->fields[2]), "[0,1][2,3,null][3,0]");

  EXPECT_EQ(s->leaves[3].path, "legacy.array");
  EXPECT_EQ(s->leaves[3].max_definition_level, 2);
  EXPECT_EQ(Slots(s->fields[3]), "[1,2,null][2,0]");

  EXPECT_EQ(s->leaves[4].path, "hive.bag.array_element");
  EXPECT_EQ(Slots(s->fields[4]), "[1,2,null][3,0,null]");

  EXPECT_EQ(s->leaves[5].path, "tokens");
  EXPECT_EQ(s->leaves[5].max_repetition_level, 1);
  EXPECT_EQ(Slots(s->fields[5]), "[0,1][1,0]");
  for (size_t i = 0; i < s->fields.size(); ++i) {
    EXPECT_TRUE(ReadableField(*s, i, "f.parquet").ok()) << i;
    EXPECT_EQ(s->fields[i].first_leaf, i);
    EXPECT_EQ(s->fields[i].leaf_count, 1u);
  }
}

TEST(Schema, StructsMapsAndListsOfStructsAreRefusedByName) {
  SchemaElement map = Group("m", kOpt, 1, ConvertedType::kMap);
  FileMetaData m = Meta(
      {
          Group("point", kOpt, 2), Leaf("x", kReq, PhysicalType::kDouble),
          Leaf("y", kReq, PhysicalType::kDouble),
          map, Group("key_value", kRep, 2), Leaf("key", kReq, PhysicalType::kByteArray),
          Leaf("value", kOpt, PhysicalType::kInt32),
          // a LIST whose repeated group named "array" is the element: a struct
          Group("legacy_structs", kOpt, 1, ConvertedType::kList), Group("array", kRep, 1),
          Leaf("item", kOpt, PhysicalType::kInt32),
          Group("events", kOpt, 1, ConvertedType::kList), Group("list", kRep, 1),
          Group("element", kOpt, 1), Leaf("at", kReq, PhysicalType::kInt64),
          Leaf("after", kReq, PhysicalType::kBoolean),
      },
      5);
  Result<Schema> s = BuildSchema(m, "f.parquet");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->leaves.size(), 7u);
  EXPECT_EQ(s->leaves[1].path, "point.y");
  EXPECT_EQ(s->leaves[3].path, "m.key_value.value");
  EXPECT_EQ(s->leaves[3].field, 1u);
  EXPECT_EQ(s->leaves[6].path, "after");
  EXPECT_EQ(s->leaves[6].field, 4u);
  EXPECT_EQ(ReadableField(*s, 0, "f.parquet").ToString(),
            "unimplemented: f.parquet: column \"point\": a struct is not supported (primitives "
            "and lists of primitives are)");
  EXPECT_EQ(*s->fields[1].unsupported, "a map (MAP)");
  EXPECT_EQ(*s->fields[2].unsupported, "a list of structs");
  EXPECT_EQ(*s->fields[3].unsupported, "a list of structs");
  EXPECT_TRUE(ReadableField(*s, 4, "f.parquet").ok());
  EXPECT_EQ(ReadableField(*s, 5, "f.parquet").ToString(),
            "not found: f.parquet: no column 5 (5 columns)");
}

std::string SchemaError(FileMetaData m) {
  Result<Schema> s = BuildSchema(m, "bad.parquet");
  return s.ok() ? "ok" : s.status().ToString();
}

TEST(Schema, MalformedSchemas) {
  EXPECT_EQ(SchemaError(FileMetaData{}), "corrupt: bad.parquet: schema: no elements");
  EXPECT_EQ(SchemaError(Meta({Leaf("a", kReq, PhysicalType::kInt32)}, 2)),
            "corrupt: bad.parquet: schema: element 0 (\"schema\"): children counts run past the "
            "2 elements");
  EXPECT_EQ(SchemaError(Meta({Leaf("a", kReq, PhysicalType::kInt32), Leaf("b", kReq, PhysicalType::kInt32)}, 1)),
            "corrupt: bad.parquet: schema: element 2 (\"b\"): 1 elements after the root's children");
  SchemaElement no_rep = Leaf("a", kReq, PhysicalType::kInt32);
  no_rep.repetition.reset();
  EXPECT_EQ(SchemaError(Meta({no_rep}, 1)),
            "corrupt: bad.parquet: schema: element 1 (\"a\"): no repetition type");
  SchemaElement nothing;
  nothing.name = "n";
  nothing.repetition = kOpt;
  EXPECT_EQ(SchemaError(Meta({nothing}, 1)),
            "corrupt: bad.parquet: schema: element 1 (\"n\"): neither a type nor a children count");
  EXPECT_EQ(SchemaError(Meta({Leaf("f", kOpt, PhysicalType::kFixedLenByteArray)}, 1)),
            "corrupt: bad.parquet: schema: element 1 (\"f\"): FIXED_LEN_BYTE_ARRAY without a "
            "positive type_length");
  EXPECT_EQ(SchemaError(Meta({Leaf("t", kOpt, static_cast<PhysicalType>(8))}, 1)),
            "corrupt: bad.parquet: schema: element 1 (\"t\"): unknown physical type Type(8)");
  std::vector<SchemaElement> deep;
  for (int i = 0; i < 70; ++i) deep.push_back(Group("g", kOpt, 1));
  deep.push_back(Leaf("x", kOpt, PhysicalType::kInt32));
  EXPECT_EQ(SchemaError(Meta(deep, 1)),
            "corrupt: bad.parquet: schema: element 64 (\"g\"): nested deeper than 64");
}

}  // namespace
}  // namespace sluice::parquet
