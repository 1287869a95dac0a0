// CSV / TSV / XSV split shards (formats/text XsvShardReader, split_meta).
// Input: see text_fuzz_input.h; control bits 1-2 pick csv, tsv, or xsv
// with separator "|" or "::". Checks: an opened shard has the entry's
// sample count; every line is inside the data file; a decoded sample has
// one value per column, each of the column's type, `str` values being
// valid UTF-8 views into the data file.
#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>

#include "base/utf8.h"
#include "formats/json/py_number_text.h"
#include "formats/text/text_columns.h"
#include "formats/text/xsv_shard_reader.h"
#include "tests/fuzz/fuzz_util.h"
#include "tests/fuzz/text_fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const sluice::fuzz::SplitShardInput in = sluice::fuzz::ReadSplitShardInput(data, size);
  sluice::ShardEntry entry;
  static const char* kFormats[] = {"csv", "tsv", "xsv", "xsv"};
  const unsigned pick = (in.control >> 1) & 3;
  entry.format = kFormats[pick];
  if (pick == 2) entry.separator = "|";
  if (pick == 3) entry.separator = "::";
  entry.column_names = {"id", "name", "score"};
  entry.column_encodings = {"int", "str", "float"};
  sluice::fuzz::FillSplitEntry(entry, in, entry.format);
  auto reader = sluice::XsvShardReader::Open(entry, in.data, in.meta);
  if (!reader.ok()) return 0;
  FUZZ_CHECK(reader->size() == entry.samples);
  for (uint32_t i = 0; i < reader->size(); ++i) {
    sluice::fuzz::CheckLine(*reader, i, in.data);
    auto sample = reader->Sample(i);
    if (!sample.ok()) continue;
    FUZZ_CHECK(sample->size() == reader->columns().size());
    for (size_t c = 0; c < sample->size(); ++c) {
      const sluice::TextValue& v = (*sample)[c];
      FUZZ_CHECK(sluice::TextValueMatches(reader->columns()[c].encoding, v),
                 "sample %u column %zu of the wrong type", i, c);
      if (const auto* big = std::get_if<sluice::TextBigInt>(&v)) {
        FUZZ_CHECK(!sluice::ParsePyIntText(big->digits) &&
                       sluice::ParsePyIntDigits(big->digits) == big->digits,
                   "a big int that fits int64 or is not canonical");
      }
      if (const auto* s = std::get_if<std::string_view>(&v)) {
        FUZZ_CHECK(sluice::fuzz::Within(*s, in.data), "str value outside the data file");
        FUZZ_CHECK(sluice::FindInvalidUtf8(*s) == std::string_view::npos, "invalid UTF-8");
        FUZZ_CHECK(s->find(reader->separator()) == std::string_view::npos,
                   "a value holds the separator");
      }
    }
  }
  FUZZ_CHECK(!reader->Line(reader->size()).ok());
  return 0;
}
