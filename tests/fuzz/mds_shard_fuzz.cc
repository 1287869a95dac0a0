// MDS shards (formats/mds MdsShardReader) with their fields decoded.
//
// Input: a control byte picking the shard's columns (those of the seed
// datasets in tests/data/mosaic/mds: all_encodings, fixed_size_only,
// single_shard_no_limit, merged), then the whole decompressed shard.
// Checks: Open never returns OK for a shard its offsets do not fit; every
// sample and field is a view inside the shard, fields exactly fill their
// sample; each field decodes as mds_field_check.h checks.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "formats/index/index.h"
#include "formats/mds/mds_shard_reader.h"
#include "tests/fuzz/fuzz_util.h"
#include "tests/fuzz/mds_encodings.h"
#include "tests/fuzz/mds_field_check.h"

namespace {

struct Columns {
  std::vector<std::string> names, encodings;
};

sluice::ShardEntry EntryFor(uint8_t control) {
  sluice::ShardEntry e;
  e.format = "mds";
  switch (control % 4) {
    case 0:  // all_encodings: one column per name in mds_encodings.h's first 32
      for (size_t i = 0; i < 32; ++i) {
        char col[8];
        std::snprintf(col, sizeof col, "c%02zu", i);
        e.column_names.push_back(col);
        e.column_encodings.push_back(sluice::fuzz::kMdsEncodings[i]);
      }
      break;
    case 1:
      e.column_names = {"arr", "f", "id", "u8"};
      e.column_encodings = {"ndarray:int16:2,2", "float32", "int", "uint8"};
      break;
    case 2:
      e.column_names = {"x", "y"};
      e.column_encodings = {"int", "str"};
      break;
    default:
      e.column_names = {"id", "part", "payload"};
      e.column_encodings = {"int", "str", "bytes"};
      break;
  }
  for (const std::string& enc : e.column_encodings) {
    e.column_sizes.push_back(*sluice::ColumnEncodingSize(enc));
  }
  return e;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sluice::fuzz::Input in(data, size);
  const sluice::ShardEntry entry = EntryFor(in.Byte());
  std::string_view shard = in.Rest();
  auto columns = sluice::MdsColumnsFromEntry(entry, "fuzz.mds");
  FUZZ_CHECK(columns.ok(), "%s", columns.status().message().c_str());
  auto reader = sluice::MdsShardReader::Open(shard, "fuzz.mds", *columns);
  if (!reader.ok()) return 0;
  FUZZ_CHECK(sluice::fuzz::Within(reader->config_json(), shard));
  FUZZ_CHECK(uint64_t{reader->num_samples()} * 4 + 8 <= shard.size(),
             "%u samples in %zu bytes", reader->num_samples(), shard.size());
  std::vector<std::string_view> fields;
  for (uint32_t i = 0; i < reader->num_samples(); ++i) {
    auto bytes = reader->SampleBytes(i);
    FUZZ_CHECK(bytes.ok(), "offsets were validated at Open: %s",
               bytes.status().message().c_str());
    FUZZ_CHECK(sluice::fuzz::Within(*bytes, shard));
    reader->PrefetchOffsets(i);
    reader->Prefetch(i);
    sluice::Status s = reader->ReadSample(i, &fields);
    if (!s.ok()) continue;
    FUZZ_CHECK(fields.size() == columns->size());
    for (size_t c = 0; c < fields.size(); ++c) {
      FUZZ_CHECK(sluice::fuzz::Within(fields[c], *bytes), "field %zu outside sample %u", c, i);
      const auto& enc = (*columns)[c];
      if (enc.fixed_size) FUZZ_CHECK(fields[c].size() == *enc.fixed_size);
      auto one = reader->ReadField(i, c);
      FUZZ_CHECK(one.ok() && one->data() == fields[c].data() && one->size() == fields[c].size(),
                 "ReadField disagrees with ReadSample");
      sluice::fuzz::CheckField(enc, fields[c]);
    }
  }
  FUZZ_CHECK(!reader->SampleBytes(reader->num_samples()).ok());
  (void)reader->ValidateAllSamples();
  return 0;
}
