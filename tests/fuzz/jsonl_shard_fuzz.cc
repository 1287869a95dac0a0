// JSONL split shards (formats/text JsonlShardReader, split_meta).
// Input: see text_fuzz_input.h. Checks: an opened shard has the entry's
// sample count; every line is inside the data file; a sample that parses
// has exactly the declared columns, each of its declared JSON type.
#include <cstddef>
#include <cstdint>
#include <string>

#include "formats/text/jsonl_shard_reader.h"
#include "tests/fuzz/fuzz_util.h"
#include "tests/fuzz/text_fuzz_input.h"

namespace {

bool TypeMatches(sluice::TextEncoding enc, const sluice::JsonValue& v) {
  switch (enc) {
    case sluice::TextEncoding::kInt:
      return std::holds_alternative<int64_t>(v.v) ||
             std::holds_alternative<sluice::JsonValue::BigInt>(v.v) ||
             std::holds_alternative<bool>(v.v);  // a Python bool, as Mosaic writes it
    case sluice::TextEncoding::kFloat:
      return std::holds_alternative<double>(v.v);
    case sluice::TextEncoding::kStr:
      return std::holds_alternative<std::string>(v.v);
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const sluice::fuzz::SplitShardInput in = sluice::fuzz::ReadSplitShardInput(data, size);
  sluice::ShardEntry entry;
  entry.format = "json";
  entry.columns = {{"id", "int"}, {"name", "str"}, {"score", "float"}};
  if (in.control & 2) entry.columns = {{"text", "str"}};
  sluice::fuzz::FillSplitEntry(entry, in, "json");
  auto reader = sluice::JsonlShardReader::Open(entry, in.data, in.meta);
  if (!reader.ok()) return 0;
  FUZZ_CHECK(reader->size() == entry.samples);
  for (uint32_t i = 0; i < reader->size(); ++i) {
    sluice::fuzz::CheckLine(*reader, i, in.data);
    auto sample = reader->Sample(i);
    if (!sample.ok()) continue;
    const auto* obj = std::get_if<sluice::JsonValue::Object>(&sample->v);
    FUZZ_CHECK(obj != nullptr, "sample %u is not an object", i);
    FUZZ_CHECK(obj->size() == reader->columns().size(), "sample %u has %zu keys", i,
               obj->size());
    for (const auto& [key, value] : *obj) {
      bool found = false;
      for (const sluice::TextColumn& col : reader->columns()) {
        if (col.name != key) continue;
        found = true;
        FUZZ_CHECK(TypeMatches(col.encoding, value), "sample %u: '%s' of the wrong type", i,
                   key.c_str());
      }
      FUZZ_CHECK(found, "sample %u: undeclared key accepted", i);
    }
  }
  FUZZ_CHECK(!reader->Line(reader->size()).ok());
  return 0;
}
