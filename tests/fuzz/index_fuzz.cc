// index.json (formats/index): ParseIndex on any bytes. What it accepts is
// safe to use (basenames confined to the dataset folder, sizes the formats
// can hold) and survives a serialize -> parse -> serialize round trip.
#include <cstddef>
#include <cstdint>
#include <string>

#include "formats/index/index.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

void CheckFile(const sluice::FileInfo& f) {
  FUZZ_CHECK(sluice::IsSafeBasename(f.basename), "unsafe basename accepted: %s",
             f.basename.c_str());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  sluice::Result<sluice::Index> index = sluice::ParseIndex(text, "fuzz/index.json");
  if (!index.ok()) {
    FUZZ_CHECK(!index.status().message().empty());
    return 0;
  }
  for (const sluice::ShardEntry& e : index->shards) {
    CheckFile(e.raw_data);
    if (e.zip_data) CheckFile(*e.zip_data);
    if (e.raw_meta) CheckFile(*e.raw_meta);
    if (e.zip_meta) CheckFile(*e.zip_meta);
    FUZZ_CHECK(e.raw_data.bytes <= sluice::kMaxShardFileBytes, "raw_data.bytes %llu",
               static_cast<unsigned long long>(e.raw_data.bytes));
    FUZZ_CHECK(e.samples <= (uint64_t{1} << 32));
    if (e.raw_meta) FUZZ_CHECK(e.raw_meta->bytes <= sluice::MaxSplitMetaBytes(e.samples));
    FUZZ_CHECK(e.compression.has_value() == e.zip_data.has_value(),
               "compression and zip_data disagree");
  }
  // Round trip: what Sluice writes from a parsed index parses back to an
  // index that writes the same bytes.
  sluice::Result<std::string> once = sluice::SerializeIndexSorted(*index);
  if (!once.ok()) return 0;  // e.g. non-UTF-8 text it will not write
  sluice::Result<sluice::Index> again = sluice::ParseIndex(*once, "fuzz/reserialized");
  FUZZ_CHECK(again.ok(), "own output refused: %s", again.status().message().c_str());
  sluice::Result<std::string> twice = sluice::SerializeIndexSorted(*again);
  FUZZ_CHECK(twice.ok(), "%s", twice.status().message().c_str());
  FUZZ_CHECK(*once == *twice, "serialization not stable");
  return 0;
}
