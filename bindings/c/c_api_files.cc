// sluice_file_*: local files written the engine's way (base/file.h's
// TempFile: a temporary named by TempPathFor, renamed over the final path),
// so that bindings name no temporaries of their own.
#include <string>
#include <string_view>

#include "base/file.h"
#include "bindings/c/c_api_internal.h"

namespace capi = sluice::capi;

extern "C" {

sluice_status sluice_file_write(const char* path, const uint8_t* data, uint64_t size) {
  return capi::Guard("sluice_file_write", [&] {
    if (path == nullptr) return capi::NullArgument("sluice_file_write", "path");
    if (data == nullptr && size > 0) return capi::NullArgument("sluice_file_write", "data");
    std::string_view bytes(reinterpret_cast<const char*>(data), static_cast<size_t>(size));
    return capi::Check(sluice::WriteFileAtomic(path, bytes));
  });
}

sluice_status sluice_file_copy(const char* from, const char* to, uint64_t* size) {
  return capi::Guard("sluice_file_copy", [&] {
    if (from == nullptr) return capi::NullArgument("sluice_file_copy", "from");
    if (to == nullptr) return capi::NullArgument("sluice_file_copy", "to");
    if (size != nullptr) *size = 0;
    auto copied = sluice::CopyFileAtomic(from, to);
    if (!copied.ok()) return capi::Fail(copied.status());
    if (size != nullptr) *size = *copied;
    return SLUICE_OK;
  });
}

}  // extern "C"
