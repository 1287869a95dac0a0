#include "stores/http/read_ahead_stream.h"

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <gtest/gtest.h>

namespace sluice {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
using asio::ip::tcp;
constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);
constexpr size_t kCapacity = 64 * 1024;

std::string Pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 131 + i / 251) & 0xff);
  return s;
}

// A connected pair on 127.0.0.1: `peer_` (a plain socket) and the stream
// under test over the other end.
class ReadAheadStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tcp::acceptor acceptor(io_, tcp::endpoint(asio::ip::address_v4::loopback(), 0));
    beast::tcp_stream client(io_);
    client.connect(acceptor.local_endpoint());
    peer_ = std::make_unique<tcp::socket>(acceptor.accept());
    stream_ = std::make_unique<ReadAheadStream<beast::tcp_stream>>(std::move(client), kCapacity);
  }

  // Runs `body` on the test's io_context; fails if it has not finished
  // within 10 s (a read that waits for bytes that never come).
  void Run(std::function<asio::awaitable<void>()> body) {
    bool done = false;
    io_.restart();
    asio::co_spawn(
        io_,
        [&]() -> asio::awaitable<void> {
          co_await body();
          done = true;
        },
        asio::detached);
    io_.run_for(std::chrono::seconds(10));
    ASSERT_TRUE(done) << "the coroutine did not finish";
  }

  // Reads until `n` bytes came, in reads of at most `piece` bytes.
  asio::awaitable<std::string> ReadExactly(size_t n, size_t piece) {
    std::string got;
    std::string buf(piece, '\0');
    while (got.size() < n) {
      auto [ec, k] = co_await stream_->async_read_some(
          asio::buffer(buf.data(), std::min(piece, n - got.size())), kTuple);
      EXPECT_FALSE(ec) << ec.message();
      if (ec) break;
      got.append(buf.data(), k);
    }
    co_return got;
  }

  asio::io_context io_;
  std::unique_ptr<tcp::socket> peer_;
  std::unique_ptr<ReadAheadStream<beast::tcp_stream>> stream_;
};

TEST_F(ReadAheadStreamTest, RecordSizedReadsGetTheExactBytesFromFewerSocketReads) {
  const std::string data = Pattern(1 << 20);
  // Sent while it is read: more than the socket buffers may hold.
  asio::async_write(*peer_, asio::buffer(data), [](boost::system::error_code ec, size_t) {
    EXPECT_FALSE(ec) << ec.message();
  });
  Run([&]() -> asio::awaitable<void> {
    // The first 17 KiB read fills the buffer with what the socket holds,
    // up to the capacity; the rest is served from it.
    std::string first = co_await ReadExactly(17 * 1024, 17 * 1024);
    EXPECT_GT(stream_->buffered(), 0u) << "no read-ahead";
    EXPECT_LE(stream_->buffered(), kCapacity - 17 * 1024);
    std::string rest = co_await ReadExactly(data.size() - first.size(), 17 * 1024);
    EXPECT_TRUE(first + rest == data);
    EXPECT_EQ(stream_->buffered(), 0u);
  });
}

TEST_F(ReadAheadStreamTest, EmptyReadCompletesAtOnceAndTakesNothing) {
  Run([&]() -> asio::awaitable<void> {
    // Nothing was sent: an empty read must not wait for bytes.
    auto [ec, n] = co_await stream_->async_read_some(asio::mutable_buffer(), kTuple);
    EXPECT_FALSE(ec);
    EXPECT_EQ(n, 0u);
    EXPECT_EQ(stream_->buffered(), 0u);
    co_return;
  });
  // With bytes buffered, an empty read leaves them for the next real read.
  asio::write(*peer_, asio::buffer(std::string("abcdef")));
  Run([&]() -> asio::awaitable<void> {
    std::string two = co_await ReadExactly(2, 2);
    EXPECT_EQ(two, "ab");
    EXPECT_EQ(stream_->buffered(), 4u);
    auto [ec, n] = co_await stream_->async_read_some(asio::mutable_buffer(), kTuple);
    EXPECT_FALSE(ec);
    EXPECT_EQ(n, 0u);
    EXPECT_EQ(co_await ReadExactly(4, 100), "cdef");
  });
}

TEST_F(ReadAheadStreamTest, EndOfStreamComesAfterTheBufferedBytes) {
  asio::write(*peer_, asio::buffer(std::string(1000, 'x')));
  peer_->close();
  Run([&]() -> asio::awaitable<void> {
    EXPECT_EQ(co_await ReadExactly(1000, 300), std::string(1000, 'x'));
    char byte;
    auto [ec, n] = co_await stream_->async_read_some(asio::buffer(&byte, 1), kTuple);
    EXPECT_EQ(ec, asio::error::eof);
    EXPECT_EQ(n, 0u);
  });
}

TEST_F(ReadAheadStreamTest, WritesPassStraightThrough) {
  const std::string data = Pattern(100000);
  Run([&]() -> asio::awaitable<void> {
    auto [ec, n] = co_await asio::async_write(*stream_, asio::buffer(data), kTuple);
    EXPECT_FALSE(ec);
    EXPECT_EQ(n, data.size());
  });
  std::string got(data.size(), '\0');
  asio::read(*peer_, asio::buffer(got));
  EXPECT_TRUE(got == data);
}

}  // namespace
}  // namespace sluice
