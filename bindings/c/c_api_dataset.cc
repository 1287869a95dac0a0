// sluice_dataset_*: reading a local dataset folder, and field decoders.
#include <algorithm>
#include <cstring>
#include <memory>

#include "bindings/c/c_api_internal.h"
#include "engine/planner/mosaic_error.h"
#include "formats/dataset/dataset_reader.h"
#include "formats/mds/column_decoder.h"
#include "formats/mds/column_encoding.h"

struct sluice_dataset {
  std::unique_ptr<sluice::DatasetReader> reader;
};

namespace {
// The sample of sluice_dataset_get / _get_masked on this thread (its views
// and masks).
thread_local sluice::SampleFields tls_dataset_sample;
// The handle whose sample tls_dataset_sample.pieced came from.
thread_local const sluice_dataset* tls_pieced_of = nullptr;
}  // namespace

namespace {

using sluice::capi::Check;
using sluice::capi::Fail;
using sluice::capi::Guard;
using sluice::capi::NullArgument;

sluice_bytes Bytes(std::string_view v) {
  return sluice_bytes{reinterpret_cast<const uint8_t*>(v.data()), v.size()};
}

using sluice::capi::View;

// Field decoders are called for bytes that did not necessarily come from a
// dataset, so the encoding string is parsed (and checked) on every call.
sluice::Result<sluice::ColumnEncoding> Encoding(const char* encoding) {
  if (encoding == nullptr) return sluice::InvalidArgumentError("encoding must not be NULL");
  return sluice::ParseColumnEncoding(encoding, "(field)");
}

// sluice_dataset_open and sluice_dataset_open_with_encodings; `fn` names
// the one called in errors.
sluice_status OpenDataset(const char* fn, const char* path, uint32_t flags,
                          const char* const* custom_encodings, uint32_t num_custom_encodings,
                          sluice_dataset** out) {
  return Guard(fn, [&] {
    if (path == nullptr) return NullArgument(fn, "path");
    if (out == nullptr) return NullArgument(fn, "out");
    *out = nullptr;
    if (flags & ~(SLUICE_OPEN_VERIFY_HASHES | SLUICE_OPEN_ANY_CUSTOM_ENCODING |
                  SLUICE_OPEN_REFUSE_UNSAFE_TYPES)) {
      return Fail(sluice::InvalidArgumentError(std::string(fn) + ": unknown flags " +
                                               std::to_string(flags)));
    }
    if (num_custom_encodings > 0 && custom_encodings == nullptr) {
      return NullArgument(fn, "custom_encodings");
    }
    sluice::DatasetReaderOptions options;
    options.verify_hashes = (flags & SLUICE_OPEN_VERIFY_HASHES) != 0;
    options.custom_encodings.any = (flags & SLUICE_OPEN_ANY_CUSTOM_ENCODING) != 0;
    for (uint32_t i = 0; i < num_custom_encodings; ++i) {
      if (custom_encodings[i] == nullptr) {
        return Fail(sluice::InvalidArgumentError(std::string(fn) + ": custom encoding " +
                                                 std::to_string(i) + " is NULL"));
      }
      options.custom_encodings.names.insert(custom_encodings[i]);
    }
    auto reader = sluice::DatasetReader::Open(path, options);
    if (!reader.ok()) return Fail(reader.status());
    if (flags & SLUICE_OPEN_REFUSE_UNSAFE_TYPES) {
      const auto& names = (*reader)->column_names();
      const auto& encodings = (*reader)->column_encodings();
      for (size_t c = 0; c < encodings.size(); ++c) {
        if (sluice::IsUnsafeEncoding(encodings[c])) {
          return Fail(sluice::planner::MosaicValueError(
              sluice::UnsafeEncodingMessage(names[c], encodings[c])));
        }
      }
    }
    *out = new sluice_dataset{std::move(*reader)};
    return SLUICE_OK;
  });
}

}  // namespace

extern "C" {

sluice_status sluice_dataset_open_with_encodings(const char* path, uint32_t flags,
                                                 const char* const* custom_encodings,
                                                 uint32_t num_custom_encodings,
                                                 sluice_dataset** out) {
  return OpenDataset("sluice_dataset_open_with_encodings", path, flags, custom_encodings,
                     num_custom_encodings, out);
}

sluice_status sluice_dataset_open(const char* path, uint32_t flags, sluice_dataset** out) {
  return OpenDataset("sluice_dataset_open", path, flags, nullptr, 0, out);
}

void sluice_dataset_close(sluice_dataset* ds) { delete ds; }

uint64_t sluice_dataset_num_samples(const sluice_dataset* ds) {
  return ds ? ds->reader->num_samples() : 0;
}

uint32_t sluice_dataset_num_shards(const sluice_dataset* ds) {
  return ds ? static_cast<uint32_t>(ds->reader->num_shards()) : 0;
}

sluice_status sluice_dataset_shard_samples(const sluice_dataset* ds, uint32_t shard,
                                           uint64_t* samples) {
  return Guard("sluice_dataset_shard_samples", [&] {
    if (ds == nullptr) return NullArgument("sluice_dataset_shard_samples", "ds");
    if (samples == nullptr) return NullArgument("sluice_dataset_shard_samples", "samples");
    const auto& shards = ds->reader->index().shards;
    if (shard >= shards.size()) {
      return Fail(sluice::OutOfRangeError("sluice_dataset_shard_samples: shard " +
                                          std::to_string(shard) + " of " +
                                          std::to_string(shards.size())));
    }
    *samples = shards[shard].samples;
    return SLUICE_OK;
  });
}

uint32_t sluice_dataset_num_columns(const sluice_dataset* ds) {
  return ds ? static_cast<uint32_t>(ds->reader->column_names().size()) : 0;
}

const char* sluice_dataset_column_name(const sluice_dataset* ds, uint32_t column) {
  if (!ds || column >= ds->reader->column_names().size()) return nullptr;
  return ds->reader->column_names()[column].c_str();
}

const char* sluice_dataset_column_encoding(const sluice_dataset* ds, uint32_t column) {
  if (!ds || column >= ds->reader->column_encodings().size()) return nullptr;
  return ds->reader->column_encodings()[column].c_str();
}

const char* sluice_dataset_format(const sluice_dataset* ds) {
  return ds ? ds->reader->index().shards[0].format.c_str() : nullptr;
}

namespace {

sluice_status GetFields(const char* fn, sluice_dataset* ds, uint64_t sample, sluice_bytes* fields,
                        uint32_t num_fields, bool masks, bool pieces = false) {
  if (ds == nullptr) return NullArgument(fn, "ds");
  if (fields == nullptr && num_fields > 0) return NullArgument(fn, "fields");
  size_t columns = ds->reader->column_names().size();
  if (num_fields != columns) {
    return Fail(sluice::InvalidArgumentError(std::string(fn) + ": num_fields is " +
                                             std::to_string(num_fields) + " but the dataset has " +
                                             std::to_string(columns) + " columns"));
  }
  sluice::SampleFields& f = tls_dataset_sample;
  f.wants_masks = masks;
  f.wants_pieces = pieces;
  f.pieced.clear();  // every format's read ends the last sample's pieces
  tls_pieced_of = ds;
  sluice::Status s = ds->reader->Read(sample, &f);
  if (!s.ok()) {
    f.masked.clear();
    f.pieced.clear();
    return Fail(s);
  }
  for (size_t c = 0; c < columns; ++c) fields[c] = Bytes(f.fields[c]);
  return SLUICE_OK;
}

}  // namespace

sluice_status sluice_dataset_get(sluice_dataset* ds, uint64_t sample, sluice_bytes* fields,
                                 uint32_t num_fields) {
  return Guard("sluice_dataset_get", [&] {
    return GetFields("sluice_dataset_get", ds, sample, fields, num_fields, false);
  });
}

sluice_status sluice_dataset_get_masked(sluice_dataset* ds, uint64_t sample, sluice_bytes* fields,
                                        uint32_t num_fields, uint32_t* num_masked) {
  return Guard("sluice_dataset_get_masked", [&] {
    if (num_masked == nullptr) return NullArgument("sluice_dataset_get_masked", "num_masked");
    *num_masked = 0;
    const sluice_status st =
        GetFields("sluice_dataset_get_masked", ds, sample, fields, num_fields, true);
    if (st == SLUICE_OK) *num_masked = static_cast<uint32_t>(tls_dataset_sample.masked.size());
    return st;
  });
}

sluice_status sluice_dataset_get_pieces(sluice_dataset* ds, uint64_t sample, sluice_bytes* fields,
                                        uint32_t num_fields, uint32_t* num_masked,
                                        uint32_t* num_pieced, uint32_t* pieced_columns) {
  return Guard("sluice_dataset_get_pieces", [&] {
    if (num_pieced == nullptr) return NullArgument("sluice_dataset_get_pieces", "num_pieced");
    *num_pieced = 0;
    if (num_masked != nullptr) *num_masked = 0;
    const sluice_status st = GetFields("sluice_dataset_get_pieces", ds, sample, fields, num_fields,
                                       num_masked != nullptr, true);
    if (st != SLUICE_OK) return st;
    if (num_masked != nullptr) *num_masked = static_cast<uint32_t>(tls_dataset_sample.masked.size());
    const sluice::SampleFields& f = tls_dataset_sample;
    *num_pieced = static_cast<uint32_t>(f.pieced.size());
    if (pieced_columns == nullptr) return st;
    // A field's column: the field with its data pointer (fields are few).
    for (size_t i = 0; i < f.pieced.size(); ++i) {
      const size_t c = sluice::ColumnOfField(f, f.pieced[i].field);
      if (c == f.fields.size()) {
        return Fail(sluice::InternalError("sluice_dataset_get_pieces: a field in pieces matches no field"));
      }
      pieced_columns[i] = static_cast<uint32_t>(c);
    }
    return st;
  });
}

sluice_status sluice_dataset_copy_pieced(const sluice_dataset* ds, uint32_t i, uint32_t* column,
                                         void* dst, uint64_t capacity) {
  constexpr const char* kFn = "sluice_dataset_copy_pieced";
  return Guard(kFn, [&] {
    if (ds == nullptr) return NullArgument(kFn, "ds");
    if (column == nullptr) return NullArgument(kFn, "column");
    const sluice::SampleFields& f = tls_dataset_sample;
    if (ds != tls_pieced_of) {
      return Fail(sluice::InvalidArgumentError(
          std::string(kFn) + ": ds is not the handle this thread's last sluice_dataset_get* read"));
    }
    if (i >= f.pieced.size()) {
      return Fail(sluice::OutOfRangeError(std::string(kFn) + ": " + std::to_string(i) +
                                          " is past the last sample's " +
                                          std::to_string(f.pieced.size()) + " fields in pieces"));
    }
    const sluice::parquet::PiecedField& p = f.pieced[i];
    const bool column_only = dst == nullptr && capacity == 0;
    if (capacity < p.field.size() && !column_only) {
      return Fail(sluice::InvalidArgumentError(
          std::string(kFn) + ": capacity " + std::to_string(capacity) + " is smaller than the value (" +
          std::to_string(p.field.size()) + " bytes)"));
    }
    if (dst == nullptr && !column_only) return NullArgument(kFn, "dst");
    for (size_t c = 0; c < f.fields.size(); ++c) {
      if (f.fields[c].data() != p.field.data()) continue;
      *column = static_cast<uint32_t>(c);
      if (column_only) return SLUICE_OK;
      sluice::CopyPiecedValue(p, static_cast<char*>(dst));
      return SLUICE_OK;
    }
    return Fail(sluice::InternalError(std::string(kFn) + ": a field in pieces matches no field"));
  });
}

sluice_status sluice_dataset_masked(const sluice_dataset* ds, uint32_t i, uint32_t* column,
                                    sluice_bytes* validity) {
  return Guard("sluice_dataset_masked", [&] {
    if (ds == nullptr) return NullArgument("sluice_dataset_masked", "ds");
    if (column == nullptr) return NullArgument("sluice_dataset_masked", "column");
    if (validity == nullptr) return NullArgument("sluice_dataset_masked", "validity");
    const sluice::SampleFields& f = tls_dataset_sample;
    if (i >= f.masked.size()) {
      return Fail(sluice::OutOfRangeError("sluice_dataset_masked: " + std::to_string(i) +
                                          " is past the last sample's " +
                                          std::to_string(f.masked.size()) + " masked fields"));
    }
    const sluice::parquet::MaskedField& m = f.masked[i];
    for (size_t c = 0; c < f.fields.size(); ++c) {
      if (f.fields[c].data() == m.field.data()) {
        *column = static_cast<uint32_t>(c);
        *validity = Bytes(m.validity);
        return SLUICE_OK;
      }
    }
    return Fail(sluice::InternalError("sluice_dataset_masked: a mask matches no field"));
  });
}

sluice_status sluice_dataset_get_raw(sluice_dataset* ds, uint64_t sample, sluice_bytes* out) {
  return Guard("sluice_dataset_get_raw", [&] {
    if (ds == nullptr) return NullArgument("sluice_dataset_get_raw", "ds");
    if (out == nullptr) return NullArgument("sluice_dataset_get_raw", "out");
    thread_local sluice::SampleFields f;
    sluice::Status s = ds->reader->Read(sample, &f);
    if (!s.ok()) return Fail(s);
    *out = Bytes(f.raw);
    return SLUICE_OK;
  });
}

sluice_status sluice_decode_int64(const char* encoding, sluice_bytes field, int64_t* out) {
  return Guard("sluice_decode_int64", [&] {
    if (out == nullptr) return NullArgument("sluice_decode_int64", "out");
    auto enc = Encoding(encoding);
    if (!enc.ok()) return Fail(enc.status());
    if (enc->kind == sluice::EncodingKind::kStrInt) {
      auto text = sluice::DecodeText(*enc, View(field));
      if (!text.ok()) return Fail(text.status());
      char* end = nullptr;
      std::string t(*text);
      errno = 0;
      long long v = std::strtoll(t.c_str(), &end, 10);
      if (t.empty() || *end != '\0' || errno == ERANGE) {
        return Fail(sluice::InvalidArgumentError("str_int value '" + t +
                                                 "' is not an integer within int64"));
      }
      *out = v;
      return SLUICE_OK;
    }
    auto v = sluice::DecodeInt64(*enc, View(field));
    if (!v.ok()) return Fail(v.status());
    *out = *v;
    return SLUICE_OK;
  });
}

sluice_status sluice_decode_uint64(const char* encoding, sluice_bytes field, uint64_t* out) {
  return Guard("sluice_decode_uint64", [&] {
    if (out == nullptr) return NullArgument("sluice_decode_uint64", "out");
    auto enc = Encoding(encoding);
    if (!enc.ok()) return Fail(enc.status());
    auto v = sluice::DecodeUInt64(*enc, View(field));
    if (!v.ok()) return Fail(v.status());
    *out = *v;
    return SLUICE_OK;
  });
}

sluice_status sluice_decode_double(const char* encoding, sluice_bytes field, double* out) {
  return Guard("sluice_decode_double", [&] {
    if (out == nullptr) return NullArgument("sluice_decode_double", "out");
    auto enc = Encoding(encoding);
    if (!enc.ok()) return Fail(enc.status());
    auto v = sluice::DecodeDouble(*enc, View(field));
    if (!v.ok()) return Fail(v.status());
    *out = *v;
    return SLUICE_OK;
  });
}

}  // extern "C"
