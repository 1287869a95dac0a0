// sluice_is_store_url / sluice_url_scheme / sluice_local_path: the stores'
// one reading of URLs (stores/store.h, stores/file/file_store.h), so that
// no binding parses a scheme or strips "file://" itself.
#include <string>

#include "bindings/c/c_api_internal.h"
#include "stores/file/file_store.h"
#include "stores/store.h"

namespace {

using sluice::capi::CopyOut;
using sluice::capi::Fail;
using sluice::capi::Guard;
using sluice::capi::NullArgument;

}  // namespace

extern "C" {

int sluice_is_store_url(const char* url) {
  return url != nullptr && sluice::IsStoreUrl(url) ? 1 : 0;
}

sluice_status sluice_url_scheme(const char* url, char** scheme) {
  return Guard("sluice_url_scheme", [&] {
    if (url == nullptr) return NullArgument("sluice_url_scheme", "url");
    if (scheme == nullptr) return NullArgument("sluice_url_scheme", "scheme");
    *scheme = CopyOut(sluice::StoreUrlScheme(url));
    return SLUICE_OK;
  });
}

sluice_status sluice_local_path(const char* url, char** path) {
  return Guard("sluice_local_path", [&] {
    if (url == nullptr) return NullArgument("sluice_local_path", "url");
    if (path == nullptr) return NullArgument("sluice_local_path", "path");
    *path = nullptr;
    auto local = sluice::FileUrlToPath(url);
    if (!local.ok()) return Fail(local.status());
    *path = CopyOut(*local);
    return SLUICE_OK;
  });
}

}  // extern "C"
