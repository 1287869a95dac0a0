// sluice_index_*: index.json read and merged by formats/index, for bindings
// that describe shards (Mosaic's `shards`) or offer merge_index.
#include <string>
#include <string_view>
#include <vector>

#include "bindings/c/c_api_internal.h"
#include "formats/index/index.h"

namespace {

using sluice::capi::CopyOut;
using sluice::capi::Fail;
using sluice::capi::Guard;
using sluice::capi::NullArgument;

std::string_view Text(const uint8_t* data, uint64_t size) {
  return {reinterpret_cast<const char*>(data), static_cast<size_t>(size)};
}

sluice_status Hand(const std::string& bytes, char** out, uint64_t* size) {
  *out = CopyOut(bytes);
  if (size) *size = bytes.size();
  return SLUICE_OK;
}

}  // namespace

extern "C" {

sluice_status sluice_index_shards(const uint8_t* text, uint64_t size, const char* source,
                                  char** shards_json, uint64_t* json_size) {
  return Guard("sluice_index_shards", [&] {
    if (shards_json == nullptr) return NullArgument("sluice_index_shards", "shards_json");
    *shards_json = nullptr;
    if (text == nullptr && size) return NullArgument("sluice_index_shards", "text");
    auto index = sluice::ParseIndex(Text(text, size), source ? source : "index.json");
    if (!index.ok()) return Fail(index.status());
    auto json = sluice::SerializeShardEntries(*index);
    if (!json.ok()) return Fail(json.status());
    return Hand(*json, shards_json, json_size);
  });
}

sluice_status sluice_index_merge(const uint8_t* const* texts, const uint64_t* sizes,
                                 const char* const* sources, const char* const* prefixes,
                                 uint32_t num_parts, char** out, uint64_t* out_size) {
  return Guard("sluice_index_merge", [&] {
    if (out == nullptr) return NullArgument("sluice_index_merge", "out");
    *out = nullptr;
    if (num_parts && (texts == nullptr || sizes == nullptr || prefixes == nullptr)) {
      return NullArgument("sluice_index_merge", texts == nullptr ? "texts"
                                                : sizes == nullptr ? "sizes" : "prefixes");
    }
    std::vector<sluice::IndexPart> parts;
    parts.reserve(num_parts);
    for (uint32_t i = 0; i < num_parts; ++i) {
      if ((texts[i] == nullptr && sizes[i]) || prefixes[i] == nullptr) {
        return NullArgument("sluice_index_merge", texts[i] == nullptr ? "texts[i]" : "prefixes[i]");
      }
      const char* source = sources && sources[i] ? sources[i] : "index.json";
      parts.push_back({Text(texts[i], sizes[i]), source, prefixes[i]});
    }
    auto merged = sluice::MergeIndexes(parts);
    if (!merged.ok()) return Fail(merged.status());
    return Hand(*merged, out, out_size);
  });
}

}  // extern "C"
