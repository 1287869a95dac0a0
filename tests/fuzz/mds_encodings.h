// The MDS column encodings the fuzzers pick from: every name Mosaic's
// MDSWriter accepts, with and without ndarray dtype/shape suffixes.
#pragma once

#include <cstddef>

namespace sluice::fuzz {

inline constexpr const char* kMdsEncodings[] = {
    "bytes", "int", "str", "int16", "int32", "int64", "int8", "uint16", "uint32", "uint64",
    "uint8", "float16", "float32", "float64", "str_decimal", "str_float", "str_int", "json",
    "pkl", "jpeg", "pil", "png", "jpeg_array", "jpegarray", "list[jpeg]", "list[pil]",
    "list[png]", "ndarray", "ndarray:float32:2,3", "ndarray:int16", "ndarray:uint64:1,2,2",
    "ndarray:uint8:5", "ndarray:float16", "ndarray:int8:3,1", "ndarray:float64",
};
inline constexpr size_t kNumMdsEncodings = sizeof(kMdsEncodings) / sizeof(kMdsEncodings[0]);

}  // namespace sluice::fuzz
