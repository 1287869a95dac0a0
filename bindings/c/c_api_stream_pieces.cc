// sluice_stream_read_pieces, sluice_stream_num_pieced and
// sluice_stream_copy_pieced: the large Parquet values of a stream batch
// handed out as their pieces, for a caller that copies every field anyway.
#include <string>

#include "bindings/c/c_api_internal.h"
#include "bindings/c/c_api_stream.h"

extern "C" {

sluice_status sluice_stream_read_pieces(sluice_stream* s, int on) {
  constexpr const char* kFn = "sluice_stream_read_pieces";
  return sluice::capi::Guard(kFn, [&] {
    if (s == nullptr) return sluice::capi::NullArgument(kFn, "s");
    if (on != 0 && on != 1) {
      return sluice::capi::Fail(sluice::InvalidArgumentError(std::string(kFn) + ": on is " + std::to_string(on) +
                                               ", not 0 or 1"));
    }
    s->read_pieces = on == 1;
    return SLUICE_OK;
  });
}

uint32_t sluice_stream_num_pieced(const sluice_stream* s) {
  // The pieces end with the batch's views (batch_count is 0 then).
  return s == nullptr || s->batch_count == 0 ? 0 : static_cast<uint32_t>(s->pieced.size());
}

sluice_status sluice_stream_copy_pieced(const sluice_stream* s, uint32_t i, uint32_t* sample,
                                        uint32_t* column, void* dst, uint64_t capacity) {
  constexpr const char* kFn = "sluice_stream_copy_pieced";
  return sluice::capi::Guard(kFn, [&] {
    if (s == nullptr) return sluice::capi::NullArgument(kFn, "s");
    if (sample == nullptr) return sluice::capi::NullArgument(kFn, "sample");
    if (column == nullptr) return sluice::capi::NullArgument(kFn, "column");
    const uint32_t n = sluice_stream_num_pieced(s);
    if (i >= n) {
      return sluice::capi::Fail(sluice::OutOfRangeError(std::string(kFn) + ": " + std::to_string(i) +
                                          " is past the last batch's " + std::to_string(n) +
                                          " fields in pieces"));
    }
    const sluice_stream::Pieced& p = s->pieced[i];
    const uint64_t size = p.value->field.size();
    const bool where_only = dst == nullptr && capacity == 0;
    if (!where_only) {
      if (capacity < size) {
        return sluice::capi::Fail(sluice::InvalidArgumentError(
            std::string(kFn) + ": capacity " + std::to_string(capacity) +
            " is smaller than the value of column " + std::to_string(p.column) + " of batch sample " +
            std::to_string(p.sample) + " (" + std::to_string(size) + " bytes)"));
      }
      if (dst == nullptr) return sluice::capi::NullArgument(kFn, "dst");
      sluice::CopyPiecedValue(*p.value, static_cast<char*>(dst));
    }
    *sample = p.sample;
    *column = p.column;
    return SLUICE_OK;
  });
}

}  // extern "C"
