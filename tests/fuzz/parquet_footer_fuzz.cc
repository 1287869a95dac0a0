// Parquet footers (formats/parquet): the Thrift compact decoder, the
// metadata model, the schema and the footer's checks on any bytes.
// Layout: a mode byte, then
//   0: a serialized FileMetaData (DecodeFileMetaData, then BuildSchema)
//   1: a whole file (ReadFooter over ranged reads of it, small first guess)
//   2: a page header followed by anything (DecodePageHeader)
// What is accepted must be safe to use: chunk ranges inside the file's data,
// levels that fit the schema's depth, a header no longer than its input.
#include <cstddef>
#include <cstdint>
#include <string>

#include "formats/parquet/footer.h"
#include "formats/parquet/metadata_decoder.h"
#include "formats/parquet/schema.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using namespace sluice::parquet;

void CheckSchema(const Schema& s, size_t elements) {
  FUZZ_CHECK(s.leaves.size() < elements || elements == 0);
  for (const LeafColumn& l : s.leaves) {
    FUZZ_CHECK(l.max_definition_level >= l.max_repetition_level);
    FUZZ_CHECK(static_cast<size_t>(l.max_definition_level) <= kMaxSchemaDepth);
    FUZZ_CHECK(l.field < s.fields.size());
  }
  for (const Field& f : s.fields) {
    if (f.unsupported) continue;
    FUZZ_CHECK(f.leaf_count == 1, "supported field with %zu leaves", f.leaf_count);
    FUZZ_CHECK(f.slots.size() == f.list_depth + 1);
    const LeafColumn& leaf = s.leaves[f.first_leaf];
    FUZZ_CHECK(f.slots.back().present_from == leaf.max_definition_level);
    FUZZ_CHECK(static_cast<size_t>(leaf.max_repetition_level) == f.list_depth);
    for (size_t i = 0; i + 1 < f.slots.size(); ++i) {
      FUZZ_CHECK(f.slots[i].present_from < f.slots[i].entries_from);
      FUZZ_CHECK(f.slots[i].entries_from <= f.slots[i + 1].present_from);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sluice::fuzz::Input in(data, size);
  const uint8_t mode = in.Byte() % 3;
  const std::string bytes(in.Rest());
  if (mode == 0) {
    sluice::Result<FileMetaData> m = DecodeFileMetaData(bytes);
    if (!m.ok()) {
      FUZZ_CHECK(!m.status().message().empty());
      return 0;
    }
    sluice::Result<Schema> s = BuildSchema(*m, "fuzz.parquet");
    if (s.ok()) CheckSchema(*s, m->schema.size());
    return 0;
  }
  if (mode == 1) {
    FooterOptions o;
    o.first_read_bytes = 64;  // exercise the second read
    auto read = [&](uint64_t offset, uint64_t n, std::string* out) -> sluice::Status {
      FUZZ_CHECK(offset <= bytes.size() && n <= bytes.size() - offset,
                 "read [%llu, +%llu) outside a file of %zu", (unsigned long long)offset,
                 (unsigned long long)n, bytes.size());
      out->assign(bytes, offset, n);
      return sluice::Status::Ok();
    };
    sluice::Result<FileFooter> f = ReadFooter(bytes.size(), read, "fuzz.parquet", o);
    if (!f.ok()) {
      FUZZ_CHECK(f.status().message().rfind("fuzz.parquet: ", 0) == 0, "%s",
                 f.status().message().c_str());
      return 0;
    }
    CheckSchema(f->schema, f->meta.schema.size());
    const uint64_t data_end = bytes.size() - 8 - f->metadata_length;
    for (const auto& rg : f->chunk_ranges) {
      FUZZ_CHECK(rg.size() == f->schema.leaves.size());
      for (const ByteRange& r : rg) {
        FUZZ_CHECK(r.offset >= 4 && r.offset <= data_end && r.size <= data_end - r.offset);
      }
    }
    return 0;
  }
  size_t header_size = 0;
  sluice::Result<PageHeader> h = DecodePageHeader(bytes, &header_size);
  if (h.ok()) {
    FUZZ_CHECK(header_size <= bytes.size());
    FUZZ_CHECK(h->compressed_page_size >= 0 && h->uncompressed_page_size >= 0);
  }
  return 0;
}
