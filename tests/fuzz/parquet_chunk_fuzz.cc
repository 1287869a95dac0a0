// Parquet column chunks (formats/parquet): a whole file through ReadFooter
// and ReadRowGroup: page headers, CRCs, every codec, dictionary pages,
// levels and every encoding, on any bytes. What is decoded must be a
// consistent buffer: offsets that rise and end at the next level's size,
// one leaf value per slot, views inside bytes the buffer keeps; and read
// with large values copied only when asked for (defer_large_gathers, as the
// shard reader reads), the same outcome and, once gathered, the same bytes.
// Layout: the file's bytes.
#include <cstddef>
#include <cstdint>
#include <string>

#include "formats/parquet/footer.h"
#include "formats/parquet/row_group_reader.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using namespace sluice::parquet;

bool Kept(std::string_view v, const ColumnBuffer& b) {
  if (v.empty()) return true;
  if (b.source && sluice::fuzz::Within(v, *b.source)) return true;
  for (const auto& s : b.owned) {
    if (sluice::fuzz::Within(v, *s)) return true;
  }
  for (const sluice::UninitializedBuffer* u : {&b.pages, &b.values}) {
    if (sluice::fuzz::Within(v, std::string_view(u->data(), u->size()))) return true;
  }
  return false;
}

void Check(const ColumnBuffer& b) {
  size_t slots = b.num_rows;
  for (const ListSlots& l : b.lists) {
    FUZZ_CHECK(l.size() == slots && l.offsets.size() == slots + 1 && l.offsets[0] == 0);
    for (size_t i = 0; i < slots; ++i) FUZZ_CHECK(l.offsets[i] <= l.offsets[i + 1]);
    slots = static_cast<size_t>(l.offsets.back());
  }
  FUZZ_CHECK(b.validity.size() == slots, "%zu leaf slots, lists say %zu", b.validity.size(), slots);
  if (b.width > 0) {
    size_t covered = 0;
    for (const FixedRun& r : b.fixed_runs) {
      FUZZ_CHECK(r.first_slot == covered && r.bytes.size() % b.width == 0 && !r.bytes.empty());
      FUZZ_CHECK(Kept(r.bytes, b), "a run outside the buffer's bytes");
      covered += r.bytes.size() / b.width;
    }
    FUZZ_CHECK(covered == slots, "runs cover %zu of %zu slots", covered, slots);
  } else {
    FUZZ_CHECK(b.binary.size() == slots);
    for (std::string_view v : b.binary) FUZZ_CHECK(Kept(v, b), "a view outside the buffer's bytes");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  RangeReader read = [&](uint64_t offset, uint64_t n, std::string* out) -> sluice::Status {
    FUZZ_CHECK(offset <= bytes.size() && n <= bytes.size() - offset);
    out->assign(bytes, offset, n);
    return sluice::Status::Ok();
  };
  sluice::Result<FileFooter> f = ReadFooter(bytes.size(), read, "fuzz.parquet");
  if (!f.ok()) return 0;
  RowGroupReadOptions o;
  o.decode.max_level_entries = 1 << 20;  // budgets a caller would set
  o.decode.max_value_bytes = 64 << 20;
  o.decode.pages.max_page_bytes = 16 << 20;
  for (size_t rg = 0; rg < f->meta.row_groups.size() && rg < 8; ++rg) {
    // Bounded work per input: each chunk may expand to a million levels.
    for (size_t field = 0; field < f->schema.fields.size() && field < 16; ++field) {
      sluice::Result<std::vector<ColumnBuffer>> r = ReadRowGroup(*f, rg, {field}, read, "fuzz.parquet", o);
      RowGroupReadOptions lazy_options = o;
      lazy_options.decode.defer_large_gathers = true;
      sluice::Result<std::vector<ColumnBuffer>> lazy =
          ReadRowGroup(*f, rg, {field}, read, "fuzz.parquet", lazy_options);
      FUZZ_CHECK(r.status().ToString() == lazy.status().ToString(), "%s vs deferred %s",
                 r.status().ToString().c_str(), lazy.status().ToString().c_str());
      if (!r.ok()) {
        FUZZ_CHECK(r.status().message().rfind("fuzz.parquet: ", 0) == 0, "%s",
                   r.status().message().c_str());
        continue;
      }
      Check((*r)[0]);
      const ColumnBuffer& l = (*lazy)[0];
      l.deferred.GatherAll();
      Check(l);
      FUZZ_CHECK(l.binary.size() == (*r)[0].binary.size());
      for (size_t i = 0; i < l.binary.size(); ++i) {
        FUZZ_CHECK(l.binary[i] == (*r)[0].binary[i], "slot %zu differs once gathered", i);
      }
      FUZZ_CHECK((*r)[0].num_rows == static_cast<size_t>(f->meta.row_groups[rg].num_rows));
    }
  }
  return 0;
}
