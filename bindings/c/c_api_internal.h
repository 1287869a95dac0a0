// Shared plumbing of the C ABI: Status -> sluice_status, the thread-local
// error text, and a guard that turns any escaping C++ exception (only
// std::bad_alloc is expected) into a status instead of crossing the ABI.
#pragma once

#include <exception>
#include <new>
#include <string>
#include <string_view>

#include "base/status.h"
#include "bindings/c/sluice.h"

namespace sluice::capi {

// Records `status` as this thread's last error and returns its C code.
sluice_status Fail(const Status& status);

// This thread's last error text ("" if none).
const char* LastError();

// A malloc'd NUL-terminated copy of `bytes` that the caller releases with
// sluice_free; std::bad_alloc (which Guard turns into a status) when out of
// memory.
char* CopyOut(std::string_view bytes);

// The bytes a sluice_bytes points at (valid as long as they are).
inline std::string_view View(sluice_bytes b) {
  return {reinterpret_cast<const char*>(b.data), static_cast<size_t>(b.size)};
}

inline sluice_status Check(const Status& status) {
  return status.ok() ? SLUICE_OK : Fail(status);
}

inline sluice_status NullArgument(const char* function, const char* argument) {
  return Fail(InvalidArgumentError(std::string(function) + ": argument '" + argument +
                                   "' must not be NULL"));
}

template <typename F>
sluice_status Guard(const char* function, F&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return Fail(InternalError(std::string(function) + ": out of memory"));
  } catch (const std::exception& e) {
    return Fail(InternalError(std::string(function) + ": " + e.what()));
  } catch (...) {
    return Fail(InternalError(std::string(function) + ": unknown exception"));
  }
}

}  // namespace sluice::capi
