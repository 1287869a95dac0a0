// sluice_pack_*: token packing (engine/packing) over a sluice_stream.
#include <memory>
#include <string>

#include "bindings/c/c_api_internal.h"
#include "bindings/c/c_api_stream.h"
#include "engine/packing/packed_iteration.h"
#include "engine/packing/row_bounds.h"
#include "engine/packing/worker_rows.h"

struct sluice_pack {
  sluice_stream* stream;
  std::unique_ptr<sluice::PackedIteration> it;
};

namespace {

using sluice::capi::Check;
using sluice::capi::Fail;
using sluice::capi::Guard;
using sluice::capi::NullArgument;

}  // namespace

extern "C" {

sluice_status sluice_pack_open(sluice_stream* s, const char* spec_json, sluice_pack** out) {
  constexpr const char* kFn = "sluice_pack_open";
  return Guard(kFn, [&] {
    if (s == nullptr) return NullArgument(kFn, "s");
    if (spec_json == nullptr) return NullArgument(kFn, "spec_json");
    if (out == nullptr) return NullArgument(kFn, "out");
    *out = nullptr;
    auto spec = sluice::ParsePackSpec(spec_json);
    if (!spec.ok()) return Fail(spec.status());
    auto it = sluice::PackedIteration::Make(s->ds.get(), std::move(spec).value());
    if (!it.ok()) return Fail(it.status());
    *out = new sluice_pack{s, std::move(it).value()};
    return SLUICE_OK;
  });
}

void sluice_pack_close(sluice_pack* p) { delete p; }

uint64_t sluice_pack_seq_len(const sluice_pack* p) { return p ? p->it->spec().seq_len : 0; }

sluice_status sluice_pack_resume_point(uint64_t rank_rows, uint64_t batch_size, uint32_t worker,
                                       uint32_t num_workers, uint32_t* out_role,
                                       uint64_t* out_rows) {
  constexpr const char* kFn = "sluice_pack_resume_point";
  return Guard(kFn, [&] {
    if (out_role == nullptr) return NullArgument(kFn, "out_role");
    if (out_rows == nullptr) return NullArgument(kFn, "out_rows");
    if (batch_size == 0) {
      return Fail(sluice::InvalidArgumentError(std::string(kFn) + ": batch_size must be > 0"));
    }
    if (worker >= num_workers) {
      return Fail(sluice::InvalidArgumentError(std::string(kFn) + ": worker " +
                                               std::to_string(worker) + " of " +
                                               std::to_string(num_workers)));
    }
    const sluice::PackResumePoint at =
        sluice::ResumePoint(rank_rows, batch_size, worker, num_workers);
    *out_role = static_cast<uint32_t>(at.role);
    *out_rows = at.rows;
    return SLUICE_OK;
  });
}

sluice_status sluice_pack_resume_point_in(sluice_pack* p, uint64_t epoch, uint64_t rank_rows,
                                          uint64_t batch_size, uint32_t worker,
                                          uint32_t num_workers, uint32_t* out_role,
                                          uint64_t* out_rows) {
  constexpr const char* kFn = "sluice_pack_resume_point_in";
  return Guard(kFn, [&] {
    if (p == nullptr) return NullArgument(kFn, "p");
    if (out_role == nullptr) return NullArgument(kFn, "out_role");
    if (out_rows == nullptr) return NullArgument(kFn, "out_rows");
    p->stream->batch_count = 0;  // the stream's views end here
    auto at = p->it->ResumePointIn(static_cast<int64_t>(epoch), rank_rows, batch_size, worker,
                                   num_workers);
    if (!at.ok()) return Fail(at.status());
    *out_role = static_cast<uint32_t>(at->role);
    *out_rows = at->rows;
    return SLUICE_OK;
  });
}

sluice_status sluice_pack_begin(sluice_pack* p, uint64_t epoch, uint32_t worker,
                                uint32_t num_workers, uint64_t skip_rows) {
  constexpr const char* kFn = "sluice_pack_begin";
  return Guard(kFn, [&] {
    if (p == nullptr) return NullArgument(kFn, "p");
    p->stream->batch_count = 0;  // the stream's views end here
    return Check(p->it->Begin(static_cast<int64_t>(epoch), worker, num_workers, skip_rows));
  });
}

sluice_status sluice_pack_begin_segments(sluice_pack* p, uint64_t epoch,
                                         const char* segments_json, uint32_t role,
                                         uint64_t skip_rows) {
  constexpr const char* kFn = "sluice_pack_begin_segments";
  return Guard(kFn, [&] {
    if (p == nullptr) return NullArgument(kFn, "p");
    if (segments_json == nullptr) return NullArgument(kFn, "segments_json");
    auto segments = sluice::ParsePackSegments(segments_json);
    if (!segments.ok()) return Fail(segments.status());
    p->stream->batch_count = 0;  // the stream's views end here
    return Check(p->it->BeginSegments(static_cast<int64_t>(epoch), *segments, role, skip_rows));
  });
}

sluice_status sluice_pack_resume_point_segments(sluice_pack* p, uint64_t epoch,
                                                const char* segments_json, uint32_t rank,
                                                uint32_t worker, uint32_t* out_role,
                                                uint64_t* out_rows) {
  constexpr const char* kFn = "sluice_pack_resume_point_segments";
  return Guard(kFn, [&] {
    if (p == nullptr) return NullArgument(kFn, "p");
    if (segments_json == nullptr) return NullArgument(kFn, "segments_json");
    if (out_role == nullptr) return NullArgument(kFn, "out_role");
    if (out_rows == nullptr) return NullArgument(kFn, "out_rows");
    auto segments = sluice::ParsePackSegments(segments_json);
    if (!segments.ok()) return Fail(segments.status());
    p->stream->batch_count = 0;  // the stream's views end here
    auto at = p->it->SegmentsResumePoint(static_cast<int64_t>(epoch), *segments, rank, worker);
    if (!at.ok()) return Fail(at.status());
    *out_role = static_cast<uint32_t>(at->role);
    *out_rows = at->rows;
    return SLUICE_OK;
  });
}

sluice_status sluice_pack_next(sluice_pack* p, uint32_t max_rows, int64_t* tokens,
                               int32_t* segment_ids, int32_t* position_ids, uint32_t* count) {
  constexpr const char* kFn = "sluice_pack_next";
  return Guard(kFn, [&] {
    if (p == nullptr) return NullArgument(kFn, "p");
    if (count == nullptr) return NullArgument(kFn, "count");
    *count = 0;
    if (tokens == nullptr && max_rows > 0) return NullArgument(kFn, "tokens");
    p->stream->batch_count = 0;
    auto n = p->it->Next(max_rows, tokens, segment_ids, position_ids);
    if (!n.ok()) return Fail(n.status());
    *count = static_cast<uint32_t>(*n);
    return SLUICE_OK;
  });
}

sluice_status sluice_pack_bounds(const sluice_pack* p, uint32_t rows, const int32_t* segment_ids,
                                 int32_t* cu_seqlens, int32_t* num_documents) {
  constexpr const char* kFn = "sluice_pack_bounds";
  return Guard(kFn, [&] {
    if (p == nullptr) return NullArgument(kFn, "p");
    if (rows == 0) return SLUICE_OK;
    if (segment_ids == nullptr) return NullArgument(kFn, "segment_ids");
    if (cu_seqlens == nullptr) return NullArgument(kFn, "cu_seqlens");
    const size_t n = p->it->spec().seq_len;
    for (size_t r = 0; r < rows; ++r) {
      int32_t pieces = sluice::RowBounds({segment_ids + r * n, n}, {cu_seqlens + r * (n + 1), n + 1});
      if (num_documents != nullptr) num_documents[r] = pieces;
    }
    return SLUICE_OK;
  });
}

sluice_status sluice_pack_position(const sluice_pack* p, uint64_t* rows, uint64_t* document,
                                   uint64_t* offset, uint64_t* tokens_in, uint64_t* padding_out) {
  constexpr const char* kFn = "sluice_pack_position";
  return Guard(kFn, [&] {
    if (p == nullptr) return NullArgument(kFn, "p");
    if (rows) *rows = p->it->rows();
    if (document) *document = p->it->last_start().document;
    if (offset) *offset = p->it->last_start().offset;
    if (tokens_in) *tokens_in = p->it->tokens_in();
    if (padding_out) *padding_out = p->it->padding_out();
    return SLUICE_OK;
  });
}

}  // extern "C"
