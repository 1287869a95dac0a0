// sluice_compress / sluice_decompress / sluice_hash*: the shard codecs and
// hashes of formats/codec, for bindings that offer Mosaic's compression and
// hashing helpers over the engine's one implementation.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "bindings/c/c_api_internal.h"
#include "formats/codec/compression.h"
#include "formats/codec/hashes.h"
#include "formats/mds/column_encoding.h"

namespace {

using sluice::capi::Fail;
using sluice::capi::Guard;
using sluice::capi::NullArgument;

// A malloc'd copy (NUL-terminated for convenience) the caller frees with sluice_free.
char* Copy(const std::string& s) {
  char* out = static_cast<char*>(std::malloc(s.size() + 1));
  if (out == nullptr) return nullptr;
  std::memcpy(out, s.data(), s.size());
  out[s.size()] = '\0';
  return out;
}

sluice_status Hand(const char* function, const std::string& bytes, char** out, uint64_t* size) {
  char* copy = Copy(bytes);
  if (copy == nullptr) return Fail(sluice::InternalError(std::string(function) + ": out of memory"));
  *out = copy;
  if (size) *size = bytes.size();
  return SLUICE_OK;
}

}  // namespace

extern "C" {

sluice_status sluice_compression_check(const char* name) {
  return Guard("sluice_compression_check", [&] {
    if (name == nullptr) return NullArgument("sluice_compression_check", "name");
    auto c = sluice::ParseCompression(name);
    return c.ok() ? SLUICE_OK : Fail(c.status());
  });
}

sluice_status sluice_compress(const char* name, const uint8_t* data, uint64_t size, char** out,
                              uint64_t* out_size) {
  return Guard("sluice_compress", [&] {
    if (name == nullptr) return NullArgument("sluice_compress", "name");
    if (data == nullptr && size > 0) return NullArgument("sluice_compress", "data");
    if (out == nullptr) return NullArgument("sluice_compress", "out");
    *out = nullptr;
    auto c = sluice::ParseCompression(name);
    if (!c.ok()) return Fail(c.status());
    auto packed = sluice::Compress(
        *c, std::string_view(reinterpret_cast<const char*>(data), static_cast<size_t>(size)));
    if (!packed.ok()) return Fail(packed.status());
    return Hand("sluice_compress", *packed, out, out_size);
  });
}

sluice_status sluice_decompress(const char* name, const uint8_t* data, uint64_t size,
                                uint64_t max_output, char** out, uint64_t* out_size) {
  return Guard("sluice_decompress", [&] {
    if (name == nullptr) return NullArgument("sluice_decompress", "name");
    if (data == nullptr && size > 0) return NullArgument("sluice_decompress", "data");
    if (out == nullptr) return NullArgument("sluice_decompress", "out");
    *out = nullptr;
    auto c = sluice::ParseCompression(name);
    if (!c.ok()) return Fail(c.status());
    auto raw = sluice::Decompress(
        *c, std::string_view(reinterpret_cast<const char*>(data), static_cast<size_t>(size)),
        max_output, "sluice_decompress");
    if (!raw.ok()) return Fail(raw.status());
    return Hand("sluice_decompress", *raw, out, out_size);
  });
}

sluice_status sluice_hash_names(char** names_json) {
  return Guard("sluice_hash_names", [&] {
    if (names_json == nullptr) return NullArgument("sluice_hash_names", "names_json");
    *names_json = nullptr;
    std::string json = "[";
    for (const std::string& name : sluice::SupportedHashes()) {
      if (json.size() > 1) json += ", ";
      json += "\"" + name + "\"";  // plain identifiers: nothing to escape
    }
    json += "]";
    return Hand("sluice_hash_names", json, names_json, nullptr);
  });
}

sluice_status sluice_mds_encoding_size(const char* encoding, int64_t* size) {
  return Guard("sluice_mds_encoding_size", [&] {
    if (encoding == nullptr) return NullArgument("sluice_mds_encoding_size", "encoding");
    if (size == nullptr) return NullArgument("sluice_mds_encoding_size", "size");
    auto fixed = sluice::ColumnEncodingSize(encoding);
    if (!fixed.ok()) return Fail(fixed.status());
    *size = fixed->has_value() ? static_cast<int64_t>(**fixed) : -1;
    return SLUICE_OK;
  });
}

sluice_status sluice_mds_ndarray_encoding(const char* encoding, sluice_ndarray* out) {
  return Guard("sluice_mds_ndarray_encoding", [&] {
    if (encoding == nullptr) return NullArgument("sluice_mds_ndarray_encoding", "encoding");
    if (out == nullptr) return NullArgument("sluice_mds_ndarray_encoding", "out");
    *out = sluice_ndarray{};
    auto parsed = sluice::ParseColumnEncoding(encoding, "");
    if (!parsed.ok()) return Fail(parsed.status());
    if (parsed->kind != sluice::EncodingKind::kNdarray) {
      return Fail(sluice::InvalidArgumentError(std::string("sluice_mds_ndarray_encoding: '") +
                                               encoding + "' is not an ndarray encoding"));
    }
    if (parsed->nd_dtype) out->dtype = sluice::NdDtypeName(*parsed->nd_dtype);
    if (parsed->nd_shape) {
      out->ndim = static_cast<uint32_t>(parsed->nd_shape->size());  // <= kMaxNdim
      std::copy(parsed->nd_shape->begin(), parsed->nd_shape->end(), out->shape);
    }
    return SLUICE_OK;
  });
}

int sluice_mds_encoding_is_unsafe(const char* encoding) {
  return encoding != nullptr && sluice::IsUnsafeEncoding(encoding) ? 1 : 0;
}

sluice_status sluice_mds_encoding_names(char** names_json) {
  return Guard("sluice_mds_encoding_names", [&] {
    if (names_json == nullptr) return NullArgument("sluice_mds_encoding_names", "names_json");
    *names_json = nullptr;
    std::string json = "[";
    for (std::string_view name : sluice::BuiltinEncodingNames()) {
      if (json.size() > 1) json += ", ";
      json += "\"" + std::string(name) + "\"";  // no quote or backslash in any: nothing to escape
    }
    json += "]";
    return Hand("sluice_mds_encoding_names", json, names_json, nullptr);
  });
}

sluice_status sluice_hash(const char* algo, const uint8_t* data, uint64_t size, char** hex) {
  return Guard("sluice_hash", [&] {
    if (algo == nullptr) return NullArgument("sluice_hash", "algo");
    if (data == nullptr && size > 0) return NullArgument("sluice_hash", "data");
    if (hex == nullptr) return NullArgument("sluice_hash", "hex");
    *hex = nullptr;
    auto digest = sluice::HashHex(
        algo, std::string_view(reinterpret_cast<const char*>(data), static_cast<size_t>(size)));
    if (!digest.ok()) return Fail(digest.status());
    return Hand("sluice_hash", *digest, hex, nullptr);
  });
}

}  // extern "C"
