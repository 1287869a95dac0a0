// StatusFromException: the one translation of a C++ exception into a Status,
// for the edges an exception must not cross: the body of a thread Sluice
// starts (an escaping exception calls std::terminate and kills the host
// process) and a library's decode call whose buffers may fail to grow.
//
// Header-only; pure and thread-safe.
#pragma once

#include <exception>
#include <new>
#include <string>
#include <string_view>

#include "base/status.h"

namespace sluice {

// `e` (non-null) as a Status whose message starts with "<where>: ":
//   std::bad_alloc   kIoError   "<where>: out of memory (std::bad_alloc)"
//                               (the system refused memory: not a bug, not bad data)
//   std::exception   kInternal  "<where>: unexpected exception: <what()>"
//   anything else    kInternal  "<where>: unexpected exception of unknown type"
inline Status StatusFromException(std::exception_ptr e, std::string_view where) {
  const std::string prefix = std::string(where) + ": ";
  try {
    std::rethrow_exception(e);
  } catch (const std::bad_alloc&) {
    return IoError(prefix + "out of memory (std::bad_alloc)");
  } catch (const std::exception& x) {
    return InternalError(prefix + "unexpected exception: " + x.what());
  } catch (...) {
    return InternalError(prefix + "unexpected exception of unknown type");
  }
}

// Runs fn() and returns what it threw (null when nothing): the body of a
// thread whose owner joins it, then reports the exception with
// StatusFromException.
template <typename Fn>
std::exception_ptr CatchAll(Fn&& fn) noexcept {
  try {
    fn();
    return nullptr;
  } catch (...) {
    return std::current_exception();
  }
}

}  // namespace sluice
