// A read-ahead layer for the TLS stream's socket (internal to stores/http).
//
// Asio's TLS stream reads at most one TLS record (17 KiB) per call to its
// next layer. Straight on a socket that is one io_uring receive per 16 KiB
// of body; through this layer it is one receive per `capacity` bytes, and
// the records are copied out of the buffer, which costs less.
#pragma once

#include <cstddef>
#include <utility>

#include <boost/asio/buffer.hpp>
#include <boost/asio/compose.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/system/error_code.hpp>

namespace sluice {

// Wraps a beast::basic_stream (beast::tcp_stream): reads fill an internal
// buffer of up to `capacity` bytes from the next layer and are served from
// it; writes pass straight through. Same rules as the wrapped stream: at
// most one read and one write in flight, on its executor; not thread-safe
// otherwise. Must not move while a read is in flight.
template <class NextLayer>
class ReadAheadStream {
 public:
  using next_layer_type = NextLayer;
  // The socket: Asio's TLS stream takes its executor from here.
  using lowest_layer_type = typename NextLayer::socket_type;
  using executor_type = typename NextLayer::executor_type;

  ReadAheadStream(NextLayer&& next, size_t capacity)
      : next_(std::move(next)), capacity_(capacity) {
    buffer_.reserve(capacity);
  }

  executor_type get_executor() noexcept { return next_.get_executor(); }
  NextLayer& next_layer() noexcept { return next_; }
  lowest_layer_type& lowest_layer() noexcept { return next_.socket(); }
  const lowest_layer_type& lowest_layer() const noexcept { return next_.socket(); }

  // Bytes received and not yet handed to a reader.
  size_t buffered() const { return buffer_.size(); }

  // Completes with as many buffered bytes as fit in `buffers`, reading from
  // the next layer first if nothing is buffered (and `buffers` is not
  // empty). An error of that read is reported with whatever it delivered
  // (0 bytes for a socket).
  template <class MutableBuffers, class Token>
  auto async_read_some(const MutableBuffers& buffers, Token&& token) {
    return boost::asio::async_compose<Token, void(boost::system::error_code, size_t)>(
        ReadOp<MutableBuffers>{this, buffers}, token, next_);
  }

  template <class ConstBuffers, class Token>
  auto async_write_some(const ConstBuffers& buffers, Token&& token) {
    return next_.async_write_some(buffers, std::forward<Token>(token));
  }

 private:
  template <class MutableBuffers>
  struct ReadOp {
    ReadAheadStream* s;
    MutableBuffers buffers;
    bool started = false;

    template <class Self>
    void operator()(Self& self, boost::system::error_code ec = {}, size_t got = 0) {
      if (!started) {
        started = true;
        // An empty read completes at once, as a socket's does: Asio's TLS
        // stream issues one to defer a completion that needs no input, and
        // it must neither wait for nor take the next bytes.
        if (s->buffer_.size() == 0 && boost::asio::buffer_size(buffers) > 0) {
          s->next_.async_read_some(s->buffer_.prepare(s->capacity_), std::move(self));
        } else {
          // Served from the buffer, but never from inside the initiating
          // call: Asio's rule for completion handlers.
          boost::asio::post(std::move(self));
        }
        return;
      }
      s->buffer_.commit(got);
      size_t n = boost::asio::buffer_copy(buffers, s->buffer_.data());
      s->buffer_.consume(n);
      self.complete(ec, n);
    }
  };

  NextLayer next_;
  size_t capacity_;
  boost::beast::flat_buffer buffer_;
};

}  // namespace sluice
