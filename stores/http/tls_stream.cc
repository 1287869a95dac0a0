#include "stores/http/tls_stream.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <cstring>

#include <boost/asio/ssl/error.hpp>

namespace sluice {

namespace asio = boost::asio;
using boost::system::error_code;

namespace {

std::string OpenSslError() {
  unsigned long e = ERR_get_error();
  if (e == 0) return "unknown OpenSSL error";
  char text[256];
  ERR_error_string_n(e, text, sizeof text);
  return text;
}

long BioCtrl(BIO*, int cmd, long, void*) {
  // OpenSSL flushes after each handshake flight; the bytes are in out_.
  return cmd == BIO_CTRL_FLUSH ? 1 : 0;
}

int BioCreate(BIO* bio) {
  BIO_set_init(bio, 1);
  return 1;
}

}  // namespace

// The BIO between OpenSSL and a TlsStream: reads come from its receive
// buffer, writes go to its output string; neither touches the socket.
BIO_METHOD* TlsStream::BioMethod() {
  static BIO_METHOD* method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "sluice tls");
    if (m != nullptr) {
      BIO_meth_set_read(m, &TlsStream::BioRead);
      BIO_meth_set_write(m, &TlsStream::BioWrite);
      BIO_meth_set_ctrl(m, BioCtrl);
      BIO_meth_set_create(m, BioCreate);
    }
    return m;
  }();
  return method;
}

TlsStream::TlsStream(boost::beast::tcp_stream&& next, size_t receive_bytes)
    : next_(std::move(next)),
      in_(new char[receive_bytes]),
      in_capacity_(receive_bytes) {}

TlsStream::~TlsStream() {
  if (ssl_ != nullptr) SSL_free(ssl_);  // frees the BIO too
}

Result<std::unique_ptr<TlsStream>> TlsStream::Create(boost::beast::tcp_stream&& next,
                                                     SSL_CTX* ctx, size_t receive_bytes) {
  std::unique_ptr<TlsStream> s(new TlsStream(std::move(next), std::max<size_t>(receive_bytes, 1)));
  ERR_clear_error();
  s->ssl_ = SSL_new(ctx);
  if (s->ssl_ == nullptr) return InternalError("cannot create a TLS connection: " + OpenSslError());
  BIO_METHOD* method = BioMethod();
  BIO* bio = method == nullptr ? nullptr : BIO_new(method);
  if (bio == nullptr) return InternalError("cannot create a TLS BIO: " + OpenSslError());
  BIO_set_data(bio, s.get());
  SSL_set_bio(s->ssl_, bio, bio);  // one reference, owned by the SSL
  SSL_set_app_data(s->ssl_, s.get());
  SSL_set_connect_state(s->ssl_);
  return s;
}

void TlsStream::SetPeer(const std::string& host, bool is_ip_literal, bool verify) {
  host_ = host;
  // SNI: the server picks its certificate by host name (never an address).
  if (!is_ip_literal) SSL_set_tlsext_host_name(ssl_, host.c_str());
  if (!verify) {
    SSL_set_verify(ssl_, SSL_VERIFY_NONE, nullptr);
    return;
  }
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl_);
  X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
  if (is_ip_literal) {
    X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str());
  } else {
    X509_VERIFY_PARAM_set1_host(param, host.data(), host.size());
  }
  SSL_set_verify(ssl_, SSL_VERIFY_PEER, &TlsStream::VerifyCallback);
}

int TlsStream::VerifyCallback(int preverified, X509_STORE_CTX* ctx) {
  if (preverified) return 1;
  auto* ssl = static_cast<SSL*>(
      X509_STORE_CTX_get_ex_data(ctx, SSL_get_ex_data_X509_STORE_CTX_idx()));
  auto* s = ssl == nullptr ? nullptr : static_cast<TlsStream*>(SSL_get_app_data(ssl));
  if (s != nullptr && s->verify_error_.empty()) {
    int err = X509_STORE_CTX_get_error(ctx);
    if (err == X509_V_ERR_HOSTNAME_MISMATCH || err == X509_V_ERR_IP_ADDRESS_MISMATCH) {
      s->verify_error_ = "certificate does not match host name '" + s->host_ + "'";
    } else {
      s->verify_error_ = X509_verify_cert_error_string(err);
    }
  }
  return 0;
}

size_t TlsStream::buffered() const {
  int pending = SSL_pending(ssl_);
  return (in_end_ - in_begin_) + static_cast<size_t>(std::max(pending, 0));
}

int TlsStream::BioRead(BIO* bio, char* out, int size) {
  auto* s = static_cast<TlsStream*>(BIO_get_data(bio));
  BIO_clear_retry_flags(bio);
  size_t avail = s->in_end_ - s->in_begin_;
  if (avail == 0) {
    if (s->in_error_) return 0;  // the connection ended: no more bytes
    BIO_set_retry_read(bio);
    return -1;
  }
  size_t n = std::min(avail, static_cast<size_t>(std::max(size, 0)));
  std::memcpy(out, s->in_.get() + s->in_begin_, n);
  s->in_begin_ += n;
  if (s->in_begin_ == s->in_end_) s->in_begin_ = s->in_end_ = 0;
  return static_cast<int>(n);
}

int TlsStream::BioWrite(BIO* bio, const char* in, int size) {
  auto* s = static_cast<TlsStream*>(BIO_get_data(bio));
  BIO_clear_retry_flags(bio);
  if (size <= 0) return 0;
  s->out_.append(in, static_cast<size_t>(size));
  return size;
}

asio::mutable_buffer TlsStream::ReceiveSpace() {
  // OpenSSL asks for input only once it has taken every buffered byte, so
  // this is the whole buffer; move a remainder down all the same.
  if (in_begin_ > 0) {
    std::memmove(in_.get(), in_.get() + in_begin_, in_end_ - in_begin_);
    in_end_ -= in_begin_;
    in_begin_ = 0;
  }
  return asio::buffer(in_.get() + in_end_, in_capacity_ - in_end_);
}

void TlsStream::Received(const error_code& ec, size_t n) {
  in_end_ += n;
  if (ec) {
    in_error_ = ec;
  } else if (n == 0) {
    in_error_ = asio::error::eof;
  }
}

error_code TlsStream::MapError(int ret) {
  int err = SSL_get_error(ssl_, ret);
  unsigned long e = ERR_peek_error();
  // A socket failure (reset, timeout, closed by a cancellation) is the cause
  // of whatever OpenSSL reports after it.
  if (in_error_ && in_error_ != asio::error::eof) {
    ERR_clear_error();
    return in_error_;
  }
  if (err == SSL_ERROR_ZERO_RETURN) return asio::error::eof;
  bool eof_in_record = err == SSL_ERROR_SSL && ERR_GET_LIB(e) == ERR_LIB_SSL &&
                       ERR_GET_REASON(e) == SSL_R_UNEXPECTED_EOF_WHILE_READING;
  if (eof_in_record || (err == SSL_ERROR_SYSCALL && in_error_ == asio::error::eof)) {
    ERR_clear_error();
    return asio::ssl::error::stream_truncated;
  }
  if (e != 0) {
    error_code ec(static_cast<int>(ERR_get_error()), asio::error::get_ssl_category());
    ERR_clear_error();
    return ec;
  }
  return asio::ssl::error::unspecified_system_error;
}

TlsStream::Step TlsStream::HandshakeStep() {
  ERR_clear_error();
  int r = SSL_do_handshake(ssl_);
  if (r == 1) return {};
  if (SSL_get_error(ssl_, r) == SSL_ERROR_WANT_READ) return {Need::kInput, {}, 0};
  return {Need::kNothing, MapError(r), 0};
}

TlsStream::Step TlsStream::ReadStep(asio::mutable_buffer buffer) {
  char* out = static_cast<char*>(buffer.data());
  size_t size = buffer.size();
  size_t total = 0;
  while (total < size) {
    if (read_error_) {
      // Reported after the bytes that came before it.
      if (total > 0) break;
      return {Need::kNothing, read_error_, 0};
    }
    ERR_clear_error();
    size_t n = 0;
    int r = SSL_read_ex(ssl_, out + total, size - total, &n);
    if (r == 1) {
      total += n;
      continue;
    }
    if (SSL_get_error(ssl_, r) == SSL_ERROR_WANT_READ) {
      if (total > 0) break;
      return {Need::kInput, {}, 0};
    }
    read_error_ = MapError(r);
  }
  return {Need::kNothing, {}, total};
}

TlsStream::Step TlsStream::WriteStep() {
  if (plain_out_.empty()) return {};
  ERR_clear_error();
  size_t n = 0;
  // A retry after WANT_READ passes the same bytes again, as OpenSSL wants.
  int r = SSL_write_ex(ssl_, plain_out_.data(), plain_out_.size(), &n);
  if (r == 1) return {Need::kNothing, {}, n};
  if (SSL_get_error(ssl_, r) == SSL_ERROR_WANT_READ) return {Need::kInput, {}, 0};
  return {Need::kNothing, MapError(r), 0};
}

}  // namespace sluice
