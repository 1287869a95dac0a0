// Version, errors and memory of the C ABI.
#include <cstdlib>
#include <cstring>

#include "bindings/c/c_api_internal.h"

namespace sluice::capi {

#define SLUICE_SAME_CODE(c, k) \
  static_assert(static_cast<int>(c) == static_cast<int>(StatusCode::k), #c)
SLUICE_SAME_CODE(SLUICE_OK, kOk);
SLUICE_SAME_CODE(SLUICE_EINVAL, kInvalidArgument);
SLUICE_SAME_CODE(SLUICE_ENOTFOUND, kNotFound);
SLUICE_SAME_CODE(SLUICE_ECORRUPT, kCorrupt);
SLUICE_SAME_CODE(SLUICE_EHASH, kHashMismatch);
SLUICE_SAME_CODE(SLUICE_EUNIMPLEMENTED, kUnimplemented);
SLUICE_SAME_CODE(SLUICE_EIO, kIoError);
SLUICE_SAME_CODE(SLUICE_ERANGE, kOutOfRange);
SLUICE_SAME_CODE(SLUICE_EPERM, kPermissionDenied);
SLUICE_SAME_CODE(SLUICE_EUNAVAILABLE, kUnavailable);
SLUICE_SAME_CODE(SLUICE_ETIMEDOUT, kDeadlineExceeded);
SLUICE_SAME_CODE(SLUICE_ECANCELLED, kCancelled);
SLUICE_SAME_CODE(SLUICE_EINTERNAL, kInternal);
#undef SLUICE_SAME_CODE

namespace {
thread_local std::string g_last_error;
}  // namespace

const char* LastError() { return g_last_error.c_str(); }

char* CopyOut(std::string_view bytes) {
  char* out = static_cast<char*>(std::malloc(bytes.size() + 1));
  if (out == nullptr) throw std::bad_alloc();
  if (!bytes.empty()) std::memcpy(out, bytes.data(), bytes.size());
  out[bytes.size()] = '\0';
  return out;
}

sluice_status Fail(const Status& status) {
  g_last_error = status.ToString();
  // The C codes mirror StatusCode one to one (see sluice.h and status.h).
  return static_cast<sluice_status>(static_cast<int>(status.code()));
}

}  // namespace sluice::capi

extern "C" {

uint32_t sluice_abi_version(void) { return SLUICE_ABI_VERSION; }

const char* sluice_version(void) { return SLUICE_VERSION_STRING; }

const char* sluice_last_error(void) { return sluice::capi::LastError(); }

void sluice_free(void* p) { std::free(p); }

}  // extern "C"
