// A column chunk of a Parquet fixture (tests/data/parquet), loaded whole
// for tests that walk or damage its pages: the file's bytes, its footer,
// the column's field and the chunk's range in row group 0.
#pragma once

#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "base/file.h"
#include "formats/parquet/footer.h"

namespace sluice::parquet::testing {

struct FixtureChunk {
  std::string bytes;
  FileFooter footer;
  size_t field = 0;  // the column's top-level field
  ByteRange range;   // its chunk in row group 0
  std::string_view chunk() const { return std::string_view(bytes).substr(range.offset, range.size); }
};

// `name`'s column `column` (a top-level field holding one leaf).
inline FixtureChunk LoadFixtureChunk(const std::string& name, std::string_view column) {
  FixtureChunk fx;
  auto bytes = ReadFile(std::string(SLUICE_TEST_DATA_DIR) + "/parquet/" + name);
  EXPECT_TRUE(bytes.ok()) << bytes.status().ToString();
  if (!bytes.ok()) return fx;
  fx.bytes = std::move(*bytes);
  RangeReader read = [&](uint64_t offset, uint64_t size, std::string* out) {
    out->assign(fx.bytes, offset, size);
    return Status::Ok();
  };
  auto footer = ReadFooter(fx.bytes.size(), read, "f.parquet");
  EXPECT_TRUE(footer.ok()) << footer.status().ToString();
  if (!footer.ok()) return fx;
  fx.footer = std::move(*footer);
  while (fx.field < fx.footer.schema.fields.size() && fx.footer.schema.fields[fx.field].name != column) {
    ++fx.field;
  }
  EXPECT_LT(fx.field, fx.footer.schema.fields.size()) << name << " has no column " << column;
  if (fx.field == fx.footer.schema.fields.size()) return fx;
  fx.range = fx.footer.chunk_ranges[0][fx.footer.schema.fields[fx.field].first_leaf];
  return fx;
}

}  // namespace sluice::parquet::testing
