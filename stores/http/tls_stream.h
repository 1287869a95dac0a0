// A TLS client stream on OpenSSL over a beast::tcp_stream (internal to
// stores/http).
//
// Why not Asio's ssl::stream: it moves ciphertext through a BIO pair in
// steps of one 17 KiB record (socket -> its input buffer -> the BIO pair ->
// OpenSSL's record buffer), one composed operation per record. Here a
// custom BIO lets OpenSSL take its records straight out of one large
// receive buffer, and one read decrypts every record already received: two
// copies of each byte in user space instead of four, and one socket read
// per `receive_bytes` of ciphertext.
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <string>
#include <utility>

#include <boost/asio/buffer.hpp>
#include <boost/asio/compose.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/system/error_code.hpp>

#include "base/status.h"

struct bio_method_st;
struct bio_st;
struct ssl_st;
struct ssl_ctx_st;
struct x509_store_ctx_st;

namespace sluice {

// One TLS client connection. Satisfies Asio's AsyncReadStream and
// AsyncWriteStream. Every operation runs on the wrapped stream's executor;
// at most one operation (handshake, read or write) may be in flight at a
// time, and the object is not thread-safe otherwise. Timeouts are the
// wrapped beast::tcp_stream's (`next_layer().expires_at`): a socket read or
// write that passes its expiry fails the operation with
// beast::error::timeout. Closing the socket ends any pending operation.
// Must not move while an operation is in flight (held by unique_ptr).
//
// Errors: a peer's close_notify reads as asio::error::eof; the connection
// ending without one as asio::ssl::error::stream_truncated; TLS failures
// carry asio's SSL error category; socket errors pass through.
class TlsStream {
 public:
  using executor_type = boost::beast::tcp_stream::executor_type;
  static constexpr size_t kMaxWriteBytes = 256 * 1024;

  // Takes the connected `next`. `ctx` (verify paths, options) must outlive
  // the stream. `receive_bytes`: the ciphertext receive buffer.
  static Result<std::unique_ptr<TlsStream>> Create(boost::beast::tcp_stream&& next,
                                                   ssl_ctx_st* ctx, size_t receive_bytes);
  ~TlsStream();
  TlsStream(const TlsStream&) = delete;
  TlsStream& operator=(const TlsStream&) = delete;

  executor_type get_executor() noexcept { return next_.get_executor(); }
  boost::beast::tcp_stream& next_layer() noexcept { return next_; }
  ssl_st* native_handle() noexcept { return ssl_; }

  // Before the handshake. Sends `host` as SNI unless it is an IP literal.
  // With `verify`, the handshake fails unless the peer's chain leads to a
  // trusted CA and its certificate names `host` (DNS name or IP address);
  // verify_error() then says why, for messages.
  void SetPeer(const std::string& host, bool is_ip_literal, bool verify);
  const std::string& verify_error() const { return verify_error_; }

  // Received bytes not yet handed to a reader: ciphertext still in the
  // receive buffer plus plaintext decrypted and held by OpenSSL.
  size_t buffered() const;

  // Completion: void(error_code).
  template <class Token>
  auto async_handshake(Token&& token) {
    return boost::asio::async_compose<Token, void(boost::system::error_code)>(
        Op<HandshakeAction, true>{this, HandshakeAction{}}, token, next_);
  }

  // Reads what has arrived, up to the first buffer's size (waits only when
  // nothing has). Completion: void(error_code, size_t).
  template <class MutableBuffers, class Token>
  auto async_read_some(const MutableBuffers& buffers, Token&& token) {
    boost::asio::mutable_buffer first = FirstBuffer(buffers);
    return boost::asio::async_compose<Token, void(boost::system::error_code, size_t)>(
        Op<ReadAction, false>{this, ReadAction{first}}, token, next_);
  }

  // Encrypts and sends up to 256 KiB of `buffers` (gathered: an HTTP
  // header comes in many small pieces, and each SSL_write is one record or
  // more); completes once the ciphertext is on the socket.
  // Completion: void(error_code, size_t).
  template <class ConstBuffers, class Token>
  auto async_write_some(const ConstBuffers& buffers, Token&& token) {
    plain_out_.clear();
    for (auto it = boost::asio::buffer_sequence_begin(buffers);
         it != boost::asio::buffer_sequence_end(buffers) && plain_out_.size() < kMaxWriteBytes;
         ++it) {
      boost::asio::const_buffer b = *it;
      size_t n = std::min(b.size(), kMaxWriteBytes - plain_out_.size());
      plain_out_.append(static_cast<const char*>(b.data()), n);
    }
    return boost::asio::async_compose<Token, void(boost::system::error_code, size_t)>(
        Op<WriteAction, false>{this, WriteAction{}}, token, next_);
  }

 private:
  // What an OpenSSL call needs before it can go on.
  enum class Need { kNothing, kInput };
  struct Step {
    Need need = Need::kNothing;
    boost::system::error_code ec;
    size_t bytes = 0;
  };

  TlsStream(boost::beast::tcp_stream&& next, size_t receive_bytes);

  // The non-blocking halves, on OpenSSL (tls_stream.cc).
  Step HandshakeStep();
  Step ReadStep(boost::asio::mutable_buffer buffer);
  Step WriteStep();  // of plain_out_
  boost::asio::mutable_buffer ReceiveSpace();
  void Received(const boost::system::error_code& ec, size_t n);
  static bio_method_st* BioMethod();  // created once, never freed
  static int BioRead(bio_st* bio, char* out, int size);
  static int BioWrite(bio_st* bio, const char* in, int size);
  static int VerifyCallback(int preverified, x509_store_ctx_st* ctx);
  boost::system::error_code MapError(int ret);

  struct HandshakeAction {
    Step operator()(TlsStream& s) { return s.HandshakeStep(); }
  };
  struct ReadAction {
    boost::asio::mutable_buffer buffer;
    Step operator()(TlsStream& s) { return s.ReadStep(buffer); }
  };
  struct WriteAction {
    Step operator()(TlsStream& s) { return s.WriteStep(); }
  };

  template <class Buffers>
  static boost::asio::mutable_buffer FirstBuffer(const Buffers& buffers) {
    for (auto it = boost::asio::buffer_sequence_begin(buffers);
         it != boost::asio::buffer_sequence_end(buffers); ++it) {
      boost::asio::mutable_buffer b = *it;
      if (b.size() > 0) return b;
    }
    return {};
  }

  // Runs `action` until it needs nothing, receiving input and flushing
  // output for it in between. Never completes inside the initiating call.
  template <class Action, bool kNoBytes>
  struct Op {
    enum State { kStart, kAfterInput, kAfterFlush, kDone };
    Op(TlsStream* stream, Action a) : s(stream), action(a) {}
    TlsStream* s;
    Action action;
    State state = kStart;
    Step result;  // of the step that asked for a flush / finished

    template <class Self>
    void operator()(Self& self, boost::system::error_code ec = {}, size_t n = 0) {
      switch (state) {
        case kStart:
          break;
        case kAfterInput:
          s->Received(ec, n);
          break;
        case kAfterFlush:
          s->out_.clear();
          if (ec) {
            // A failing step's own error (an alert just sent) says more.
            bool failed = result.need == Need::kNothing && result.ec;
            return Complete(self, failed ? result.ec : ec, 0);
          }
          // A step that both produced bytes and output (a write, a read
          // that answered a key update) is done once the output is out.
          if (result.need == Need::kNothing) return Complete(self, result.ec, result.bytes);
          break;
        case kDone:
          return Complete(self, result.ec, result.bytes);
      }
      Step step = action(*s);
      if (!s->out_.empty()) {
        // Output first, whatever else the step wants: OpenSSL may wait for
        // a reply to it. Remember whether the step itself was done.
        result = step;
        state = kAfterFlush;
        boost::asio::async_write(s->next_, boost::asio::buffer(s->out_), std::move(self));
        return;
      }
      if (step.need == Need::kInput) {
        state = kAfterInput;
        s->next_.async_read_some(s->ReceiveSpace(), std::move(self));
        return;
      }
      if (state == kStart) {
        result = step;
        state = kDone;
        boost::asio::post(s->next_.get_executor(), std::move(self));
        return;
      }
      Complete(self, step.ec, step.bytes);
    }

    template <class Self>
    static void Complete(Self& self, boost::system::error_code ec, size_t bytes) {
      if constexpr (kNoBytes) {
        (void)bytes;
        self.complete(ec);
      } else {
        self.complete(ec, bytes);
      }
    }
  };

  boost::beast::tcp_stream next_;
  ssl_st* ssl_ = nullptr;
  std::unique_ptr<char[]> in_;  // ciphertext received, [in_begin_, in_end_)
  size_t in_capacity_;
  size_t in_begin_ = 0;
  size_t in_end_ = 0;
  boost::system::error_code in_error_;    // how the last receive ended (eof, reset, timeout)
  boost::system::error_code read_error_;  // a read's failure, held back behind its bytes
  std::string plain_out_;               // what the current write encrypts
  std::string out_;                     // ciphertext to send
  std::string host_;
  std::string verify_error_;
};

}  // namespace sluice
