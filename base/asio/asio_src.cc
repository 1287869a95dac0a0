// The one translation unit that compiles Asio, Asio-SSL and Beast
// (BOOST_ASIO_SEPARATE_COMPILATION / BOOST_BEAST_SEPARATE_COMPILATION are set
// for every TU by the top-level meson.build), so that other TUs only pay for
// the headers.

#if defined(SLUICE_ASIO_IO_URING_SERVICE_FIXED)
// Boost 1.81's io_uring service, patched (see meson.build here). It keeps the
// original's include guard, so src.hpp below skips the original.
#define BOOST_ASIO_SOURCE
#include <boost/asio/detail/concurrency_hint.hpp>  // the .ipp uses it, src.hpp brings it first
#include "io_uring_service_fixed.ipp"
#endif

#include <boost/asio/impl/src.hpp>
#include <boost/asio/ssl/impl/src.hpp>
#include <boost/beast/src.hpp>
