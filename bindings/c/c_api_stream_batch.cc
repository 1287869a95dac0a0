// sluice_stream_batch_column: a batch's column copied into one caller buffer
// (a binding crosses the ABI once per batch and column, not per sample),
// a value in pieces straight from its pieces.
#include <cstring>
#include <string>

#include "bindings/c/c_api_internal.h"
#include "bindings/c/c_api_stream.h"

namespace {

using sluice::capi::Fail;
using sluice::capi::Guard;
using sluice::capi::NullArgument;

constexpr const char* kFn = "sluice_stream_batch_column";

}  // namespace

extern "C" {

sluice_status sluice_stream_batch_column(const sluice_stream* s, uint32_t column,
                                         uint64_t item_size, uint8_t* out, uint64_t capacity,
                                         uint64_t* offsets, uint64_t* needed) {
  return Guard(kFn, [&] {
    if (s == nullptr) return NullArgument(kFn, "s");
    if (needed == nullptr) return NullArgument(kFn, "needed");
    *needed = 0;
    const size_t columns = s->ds->column_names().size();
    if (column >= columns) {
      return Fail(sluice::OutOfRangeError(std::string(kFn) + ": column " + std::to_string(column) +
                                          " of " + std::to_string(columns)));
    }
    if (item_size == 0 && offsets == nullptr) return NullArgument(kFn, "offsets");
    const uint32_t count = s->batch_count;
    const std::string& name = s->ds->column_names()[column];
    uint64_t total = 0;
    for (uint32_t k = 0; k < count; ++k) {
      const sluice::SampleLocation& where = s->batch[k].where;
      const size_t stream = s->ds->stream_of_shard(where.shard);
      if (!s->ds->columns().StreamHas(stream, column)) {
        return Fail(sluice::InvalidArgumentError(
            std::string(kFn) + ": column '" + name + "' is not in stream " +
            std::to_string(stream) + ", whose sample " + std::to_string(where.index_in_shard) +
            " of shard " + std::to_string(where.shard) + " is at batch position " +
            std::to_string(k)));
      }
      const uint64_t size = s->batch[k].fields[column].size();
      if (item_size != 0 && size != item_size) {
        return Fail(sluice::InvalidArgumentError(
            std::string(kFn) + ": column '" + name + "' of sample " +
            std::to_string(s->batch[k].where.index_in_shard) + " of shard " +
            std::to_string(s->batch[k].where.shard) + " (batch position " + std::to_string(k) +
            ") has " + std::to_string(size) + " bytes, item_size is " +
            std::to_string(item_size)));
      }
      total += size;
    }
    *needed = total;
    if (capacity < total) {
      return Fail(sluice::OutOfRangeError(std::string(kFn) + ": column '" + name + "' of " +
                                          std::to_string(count) + " samples needs " +
                                          std::to_string(total) + " bytes, the buffer has " +
                                          std::to_string(capacity)));
    }
    if (total != 0 && out == nullptr) return NullArgument(kFn, "out");
    uint64_t pos = 0;
    if (offsets) offsets[0] = 0;
    for (uint32_t k = 0; k < count; ++k) {
      const sluice::SampleFields& sample = s->batch[k];
      std::string_view field = sample.fields[column];
      // A value in pieces (sluice_stream_read_pieces) is copied from them:
      // its view's bytes were never written.
      const sluice::parquet::PiecedField* pieced =
          sample.pieced.empty() ? nullptr : sluice::PiecedOf(sample, field);
      if (pieced != nullptr) {
        sluice::CopyPiecedValue(*pieced, reinterpret_cast<char*>(out + pos));
      } else if (!field.empty()) {
        std::memcpy(out + pos, field.data(), field.size());
      }
      pos += field.size();
      if (offsets) offsets[k + 1] = pos;
    }
    return SLUICE_OK;
  });
}

}  // extern "C"
