// A value a binding hands the engine for one MDS field (SLUICE_VALUE_*),
// turned into the field by the engine's encoders: shared by
// sluice_mds_encode_value and sluice_writer_write_values.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "formats/mds/column_encoding.h"

namespace sluice::capi {

// The field of `value` (given as `kind`) in a column of `enc`. A kind the
// encoding cannot take, a value it refuses, or a carrier of the wrong size
// (an int64 or double is 8 bytes) -> kInvalidArgument naming the encoding.
Result<std::string> EncodeGivenValue(const ColumnEncoding& enc, uint32_t kind,
                                     std::string_view value);

}  // namespace sluice::capi
