// The one translation unit that compiles Asio, Asio-SSL and Beast
// (BOOST_ASIO_SEPARATE_COMPILATION / BOOST_BEAST_SEPARATE_COMPILATION are set
// for every TU by the top-level meson.build), so that other TUs only pay for
// the headers.

#include <liburing.h>

// Boost 1.81's io_uring service submits cancellations and timeout removals
// without setting the SQE's user_data, and liburing 2.3 hands out an SQE slot
// as its last submission left it. Once the ring wraps, such a completion
// carries the user_data of an older submission and is applied to that one's
// operation: a file read or a socket read ends with ENOENT or 0 bytes while
// its own request is still in flight. Asio 1.27 (Boost 1.82) clears user_data
// in get_sqe; this does the same here, where Asio's implementation is
// compiled (it is the only caller of io_uring_get_sqe). The completion of an
// SQE with user_data 0 is ignored by Asio.
static inline io_uring_sqe* SluiceGetClearedSqe(io_uring* ring) {
  io_uring_sqe* sqe = io_uring_get_sqe(ring);
  if (sqe != nullptr) io_uring_sqe_set_data(sqe, nullptr);
  return sqe;
}
#define io_uring_get_sqe SluiceGetClearedSqe

#include <boost/asio/impl/src.hpp>
#include <boost/asio/ssl/impl/src.hpp>
#include <boost/beast/src.hpp>

#undef io_uring_get_sqe
