// RunOnCpuPool: a coroutine's blocking or CPU-heavy step on a thread pool.
#pragma once

#include <exception>
#include <optional>
#include <type_traits>
#include <utility>

#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace sluice {

// Runs `fn()` on `pool` and resumes the calling coroutine on its
// own executor with the result. `fn` must not throw (an exception terminates
// the pool thread's task and is rethrown in the coroutine). `fn` must return
// a value (not void). Not cancellable: the coroutine waits for `fn` to
// finish. `fn` may reference the coroutine's locals if the pool is joined
// before suspended coroutines are destroyed (EventLoop::Shutdown() joins its
// CPU pool first).
template <typename Fn>
auto RunOnCpuPool(boost::asio::thread_pool& pool, Fn fn)
    -> boost::asio::awaitable<std::invoke_result_t<Fn>>;

// ---------------------------------------------------------------------------
// Implementation.

template <typename Fn>
auto RunOnCpuPool(boost::asio::thread_pool& pool, Fn fn)
    -> boost::asio::awaitable<std::invoke_result_t<Fn>> {
  using R = std::invoke_result_t<Fn>;
  static_assert(!std::is_void_v<R>, "RunOnCpuPool needs a function returning a value");
  auto executor = co_await boost::asio::this_coro::executor;
  std::optional<R> result;
  std::exception_ptr error;
  co_await boost::asio::async_initiate<decltype(boost::asio::use_awaitable),
                                       void()>(
      [&](auto handler) {
        boost::asio::post(pool, [&, handler = std::move(handler),
                                 executor]() mutable {
          try {
            result.emplace(fn());
          } catch (...) {
            error = std::current_exception();
          }
          boost::asio::post(executor, std::move(handler));
        });
      },
      boost::asio::use_awaitable);
  if (error) std::rethrow_exception(error);
  co_return std::move(*result);
}

}  // namespace sluice
