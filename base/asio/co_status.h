// Status propagation inside C++20 coroutines: the co_return twins of
// SLUICE_RETURN_IF_ERROR and SLUICE_ASSIGN_OR_RETURN (base/status.h), whose
// plain `return` is not allowed in a coroutine.
#pragma once

#include <utility>

#include "base/status.h"

// co_returns the Status of `expr` when it is not OK.
#define SLUICE_CO_RETURN_IF_ERROR(expr)                  \
  do {                                                   \
    ::sluice::Status sluice_status_ = (expr);            \
    if (!sluice_status_.ok()) co_return sluice_status_;  \
  } while (0)

// `lhs` = the value of Result `expr`, or co_return its Status. `expr` may
// contain co_await.
#define SLUICE_CO_ASSIGN_OR_RETURN(lhs, expr) \
  SLUICE_CO_ASSIGN_OR_RETURN_IMPL_(SLUICE_CONCAT_(sluice_co_result_, __LINE__), lhs, expr)
#define SLUICE_CO_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                     \
  if (!tmp.ok()) co_return tmp.status();                 \
  lhs = std::move(tmp).value()
