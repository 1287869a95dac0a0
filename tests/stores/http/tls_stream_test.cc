#include "stores/http/tls_stream.h"

#include <openssl/ssl.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <gtest/gtest.h>

#include "tests/stores/http/test_servers.h"

namespace sluice {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace ssl = boost::asio::ssl;
using asio::ip::tcp;
using testing::PatternBytes;
using testing::TempDir;
using testing::TestCerts;
constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);
constexpr size_t kReceiveBytes = 64 * 1024;

// The client under test against an Asio TLS server on 127.0.0.1 with a
// certificate for "localhost" from a test CA.
class TlsStreamTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    certs_ = new TestCerts;
    ASSERT_TRUE(testing::MakeTestCerts(dir_->path(), "tls", "localhost", certs_));
  }
  static void TearDownTestSuite() {
    delete certs_;
    delete dir_;
  }

  void SetUp() override {
    server_ctx_.use_certificate_chain_file(certs_->server_cert);
    server_ctx_.use_private_key_file(certs_->server_key, ssl::context::pem);
    client_ctx_.load_verify_file(certs_->ca_cert);
  }

  // A TCP connection: the client under test and the server's end (TLS not
  // started yet).
  void Connect() {
    beast::tcp_stream client(io_);
    client.connect(acceptor_.local_endpoint());
    server_ = std::make_unique<ssl::stream<tcp::socket>>(acceptor_.accept(), server_ctx_);
    Result<std::unique_ptr<TlsStream>> s =
        TlsStream::Create(std::move(client), client_ctx_.native_handle(), kReceiveBytes);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    client_ = std::move(*s);
  }

  // Runs the coroutines together on the test's io_context; fails unless
  // all finish within 10 s.
  void Run(std::vector<std::function<asio::awaitable<void>()>> bodies) {
    size_t done = 0;
    io_.restart();
    for (auto& body : bodies) {
      asio::co_spawn(
          io_,
          [&done, body]() -> asio::awaitable<void> {
            co_await body();
            ++done;
          },
          asio::detached);
    }
    io_.run_for(std::chrono::seconds(10));
    ASSERT_EQ(done, bodies.size()) << "a coroutine did not finish";
  }

  // Connects and completes both handshakes as "localhost", verified.
  void Handshake() {
    Connect();
    client_->SetPeer("localhost", /*is_ip_literal=*/false, /*verify=*/true);
    Run({[&]() -> asio::awaitable<void> {
           auto [ec] = co_await client_->async_handshake(kTuple);
           EXPECT_FALSE(ec) << ec.message() << " " << client_->verify_error();
         },
         [&]() -> asio::awaitable<void> {
           auto [ec] = co_await server_->async_handshake(ssl::stream_base::server, kTuple);
           EXPECT_FALSE(ec) << ec.message();
         }});
  }

  // Reads `n` bytes in reads of at most `piece` bytes.
  asio::awaitable<std::string> ReadExactly(size_t n, size_t piece) {
    std::string got;
    std::string buf(piece, '\0');
    while (got.size() < n) {
      auto [ec, k] = co_await client_->async_read_some(
          asio::buffer(buf.data(), std::min(piece, n - got.size())), kTuple);
      EXPECT_FALSE(ec) << ec.message();
      if (ec) break;
      got.append(buf.data(), k);
    }
    co_return got;
  }

  static TempDir* dir_;
  static TestCerts* certs_;
  asio::io_context io_;
  tcp::acceptor acceptor_{io_, tcp::endpoint(asio::ip::address_v4::loopback(), 0)};
  ssl::context server_ctx_{ssl::context::tls_server};
  ssl::context client_ctx_{ssl::context::tls_client};
  std::unique_ptr<ssl::stream<tcp::socket>> server_;
  std::unique_ptr<TlsStream> client_;
};

TempDir* TlsStreamTest::dir_ = nullptr;
TestCerts* TlsStreamTest::certs_ = nullptr;

TEST_F(TlsStreamTest, ReadsTheExactBytesInReadsOfAnySize) {
  Handshake();
  const std::string data = PatternBytes(3 << 20, 3);
  for (size_t piece : {size_t{1} << 21, size_t{17 * 1024}, size_t{1000}, size_t{1}}) {
    // A 1-byte read per byte of 3 MiB is slow: a shorter message for it.
    const std::string message = piece == 1 ? data.substr(0, 40000) : data;
    std::string got;
    Run({[&]() -> asio::awaitable<void> {
           auto [ec, n] = co_await asio::async_write(*server_, asio::buffer(message), kTuple);
           EXPECT_FALSE(ec) << ec.message();
         },
         [&]() -> asio::awaitable<void> { got = co_await ReadExactly(message.size(), piece); }});
    EXPECT_EQ(got.size(), message.size()) << "reads of " << piece;
    EXPECT_TRUE(got == message) << "reads of " << piece;
    EXPECT_EQ(client_->buffered(), 0u);
  }
}

TEST_F(TlsStreamTest, WritesReachThePeerIntact) {
  Handshake();
  const std::string data = PatternBytes(600 * 1024, 5);  // more than one SSL_write
  std::string got(data.size(), '\0');
  Run({[&]() -> asio::awaitable<void> {
         auto [ec, n] = co_await asio::async_write(*client_, asio::buffer(data), kTuple);
         EXPECT_FALSE(ec) << ec.message();
         EXPECT_EQ(n, data.size());
       },
       [&]() -> asio::awaitable<void> {
         auto [ec, n] = co_await asio::async_read(*server_, asio::buffer(got), kTuple);
         EXPECT_FALSE(ec) << ec.message();
       }});
  EXPECT_TRUE(got == data);
}

TEST_F(TlsStreamTest, ReadTakesWhatHasArrivedAndBufferedCountsTheRest) {
  Handshake();
  const std::string message = PatternBytes(100, 9);
  asio::write(*server_, asio::buffer(message));
  Run({[&]() -> asio::awaitable<void> {
    // Asks for 1 MiB, gets the 100 bytes sent, without waiting for more.
    std::string buf(1 << 20, '\0');
    auto [ec, n] = co_await client_->async_read_some(asio::buffer(buf), kTuple);
    EXPECT_FALSE(ec) << ec.message();
    EXPECT_EQ(buf.substr(0, n), message);
    EXPECT_EQ(client_->buffered(), 0u);
  }});
  asio::write(*server_, asio::buffer(message));
  Run({[&]() -> asio::awaitable<void> {
    std::string first = co_await ReadExactly(40, 40);
    EXPECT_EQ(first, message.substr(0, 40));
    EXPECT_EQ(client_->buffered(), 60u);  // decrypted, held by OpenSSL
    EXPECT_EQ(co_await ReadExactly(60, 1000), message.substr(40));
    EXPECT_EQ(client_->buffered(), 0u);
  }});
}

TEST_F(TlsStreamTest, EmptyReadCompletesAtOnce) {
  Handshake();
  Run({[&]() -> asio::awaitable<void> {
    auto [ec, n] = co_await client_->async_read_some(asio::mutable_buffer(), kTuple);
    EXPECT_FALSE(ec) << ec.message();
    EXPECT_EQ(n, 0u);
  }});
}

TEST_F(TlsStreamTest, CloseNotifyReadsAsEofAfterTheData) {
  Handshake();
  Run({[&]() -> asio::awaitable<void> {
         co_await asio::async_write(*server_, asio::buffer(std::string("last words")), kTuple);
         co_await server_->async_shutdown(kTuple);  // sends close_notify, waits for ours
       },
       [&]() -> asio::awaitable<void> {
         EXPECT_EQ(co_await ReadExactly(10, 100), "last words");
         char byte;
         auto [ec, n] = co_await client_->async_read_some(asio::buffer(&byte, 1), kTuple);
         EXPECT_EQ(ec, asio::error::eof) << ec.message();
         EXPECT_EQ(n, 0u);
         client_->next_layer().close();  // the server's shutdown waits for us
       }});
}

TEST_F(TlsStreamTest, AConnectionEndingWithoutCloseNotifyIsTruncated) {
  Handshake();
  Run({[&]() -> asio::awaitable<void> {
         co_await asio::async_write(*server_, asio::buffer(std::string("partial")), kTuple);
         server_->next_layer().close();
       },
       [&]() -> asio::awaitable<void> {
         EXPECT_EQ(co_await ReadExactly(7, 100), "partial");
         char byte;
         auto [ec, n] = co_await client_->async_read_some(asio::buffer(&byte, 1), kTuple);
         EXPECT_EQ(ec, ssl::error::stream_truncated) << ec.message();
       }});
}

TEST_F(TlsStreamTest, SendsTheHostNameAsSniButNeverAnAddress) {
  std::string seen;
  SSL_CTX_set_tlsext_servername_arg(server_ctx_.native_handle(), &seen);
  SSL_CTX_set_tlsext_servername_callback(
      server_ctx_.native_handle(), +[](SSL* ssl, int*, void* arg) -> int {
        const char* name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
        *static_cast<std::string*>(arg) = name != nullptr ? name : "(none)";
        return SSL_TLSEXT_ERR_OK;
      });
  Handshake();
  EXPECT_EQ(seen, "localhost");

  seen.clear();
  Connect();
  client_->SetPeer("127.0.0.1", /*is_ip_literal=*/true, /*verify=*/false);
  Run({[&]() -> asio::awaitable<void> {
         auto [ec] = co_await client_->async_handshake(kTuple);
         EXPECT_FALSE(ec) << ec.message();
       },
       [&]() -> asio::awaitable<void> {
         auto [ec] = co_await server_->async_handshake(ssl::stream_base::server, kTuple);
         EXPECT_FALSE(ec) << ec.message();
       }});
  EXPECT_EQ(seen, "(none)");
}

TEST_F(TlsStreamTest, VerificationFailureNamesTheReason) {
  struct Case {
    std::string host;
    bool ip;
    bool trust_ca;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"127.0.0.1", true, true, "certificate does not match host name '127.0.0.1'"},
      {"example.com", false, true, "certificate does not match host name 'example.com'"},
      {"localhost", false, false, "unable to get local issuer certificate"},
  };
  for (const Case& c : cases) {
    if (!c.trust_ca) client_ctx_ = ssl::context(ssl::context::tls_client);
    Connect();
    client_->SetPeer(c.host, c.ip, /*verify=*/true);
    Run({[&]() -> asio::awaitable<void> {
           auto [ec] = co_await client_->async_handshake(kTuple);
           EXPECT_TRUE(ec) << c.host;
           EXPECT_EQ(client_->verify_error(), c.error);
           client_->next_layer().close();
         },
         [&]() -> asio::awaitable<void> {
           auto [ec] = co_await server_->async_handshake(ssl::stream_base::server, kTuple);
           EXPECT_TRUE(ec) << "the server's handshake succeeded for " << c.host;
         }});
  }
}

TEST_F(TlsStreamTest, ASilentServerTripsTheHandshakeTimeout) {
  Connect();  // the server accepts but never answers
  client_->SetPeer("localhost", false, true);
  client_->next_layer().expires_after(std::chrono::milliseconds(200));
  auto start = std::chrono::steady_clock::now();
  Run({[&]() -> asio::awaitable<void> {
    auto [ec] = co_await client_->async_handshake(kTuple);
    EXPECT_EQ(ec, beast::error::timeout) << ec.message();
  }});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

}  // namespace
}  // namespace sluice
