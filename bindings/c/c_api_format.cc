// sluice_format_info: what a shard format's descriptor says about its
// fields and files, for bindings that must not compare format names.
#include <string>

#include "bindings/c/c_api_internal.h"
#include "formats/dataset/format_descriptor.h"

namespace {

int FieldFormCode(sluice::FieldForm form) {
  switch (form) {
    case sluice::FieldForm::kStoredBytes: return SLUICE_FIELD_STORED_BYTES;
    case sluice::FieldForm::kJsonText: return SLUICE_FIELD_JSON_TEXT;
    case sluice::FieldForm::kPlainText: return SLUICE_FIELD_PLAIN_TEXT;
    case sluice::FieldForm::kParquetValue: return SLUICE_FIELD_PARQUET_VALUE;
  }
  return -1;
}

}  // namespace

extern "C" {

sluice_status sluice_format_info(const char* format, int* field_form, int* has_meta) {
  return sluice::capi::Guard("sluice_format_info", [&] {
    if (format == nullptr) return sluice::capi::NullArgument("sluice_format_info", "format");
    const sluice::ShardFormatDescriptor* f = sluice::FindShardFormat(format);
    if (f == nullptr) {
      return sluice::capi::Fail(sluice::UnimplementedError(
          "sluice_format_info: unknown shard format '" + std::string(format) + "'"));
    }
    const int form = FieldFormCode(f->fields);
    if (form < 0) {
      return sluice::capi::Fail(sluice::InternalError("sluice_format_info: format '" +
                                                      std::string(format) +
                                                      "' has a field form the C ABI does not name"));
    }
    if (field_form) *field_form = form;
    if (has_meta) *has_meta = f->has_meta() ? 1 : 0;
    return SLUICE_OK;
  });
}

}  // extern "C"
