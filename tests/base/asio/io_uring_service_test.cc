// Asio's io_uring backend as base/asio/ compiles it (Boost 1.81's, patched):
// a completion reaches the operation it belongs to and no other.

#include <array>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/asio/local/connect_pair.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <gtest/gtest.h>

namespace {

namespace asio = boost::asio;
using Socket = asio::local::stream_protocol::socket;

// Boost 1.81 submits cancellations without setting the SQE's user_data, and
// liburing 2.3 hands out SQE slots as the last submission left them. Once the
// ring (16,384 entries) wraps, a cancel's completion carried the user_data of
// the submission that used its slot before and was applied to that one's
// operation: a read still waiting on another socket ended with 0 bytes (end of
// file) or ENOENT. Sixty-four reads wait on sockets nothing writes to while
// reads on one other socket are started and cancelled over four laps of the
// ring; every waiting read must end only when its own socket closes.
TEST(AsioIoUring, CancellingOneSocketsReadsNeverEndsAnotherSocketsRead) {
  asio::io_context ctx;
  constexpr int kWaiting = 64;
  std::vector<std::unique_ptr<Socket>> waiting, peers;
  std::array<char, 16> sink{};
  int ended_early = 0;
  int waiting_ended = 0;
  bool closing = false;
  for (int i = 0; i < kWaiting; ++i) {
    waiting.push_back(std::make_unique<Socket>(ctx));
    peers.push_back(std::make_unique<Socket>(ctx));
    asio::local::connect_pair(*waiting.back(), *peers.back());
    waiting.back()->async_read_some(asio::buffer(sink), [&](boost::system::error_code ec, size_t) {
      ++waiting_ended;
      if (!closing || ec != asio::error::operation_aborted) ++ended_early;
    });
  }
  Socket cancelled(ctx), cancelled_peer(ctx);
  asio::local::connect_pair(cancelled, cancelled_peer);
  int not_aborted = 0;
  for (int i = 0; i < 2 * 16384; ++i) {  // a read and a cancel each: four laps' SQEs
    cancelled.async_read_some(asio::buffer(sink), [&](boost::system::error_code ec, size_t) {
      if (ec != asio::error::operation_aborted) ++not_aborted;
    });
    cancelled.cancel();
    ctx.poll();
  }
  EXPECT_EQ(ended_early, 0) << "reads ended by another socket's cancellation";
  EXPECT_EQ(not_aborted, 0);
  closing = true;
  for (auto& s : waiting) s->close();
  ctx.poll();
  ctx.restart();
  ctx.poll();
  EXPECT_EQ(waiting_ended, kWaiting);
  EXPECT_EQ(ended_early, 0);
}

// Closing a socket whose read is still in the kernel gave its I/O object back
// at once; the next socket took it over while the old read's completion was
// still to come, and that completion ended nothing or the wrong read: the
// closed socket's read ended with success and 0 bytes, and the new socket's
// read was queued behind it and never began (an HTTP connection opened after
// a timeout closed another would hang). Now the old read ends aborted and the
// new socket reads its byte.
TEST(AsioIoUring, ASocketClosedWithAReadInFlightLeavesTheNextSocketWorking) {
  asio::io_context ctx;
  std::array<char, 16> closed_buf{}, next_buf{};
  Socket closed(ctx), closed_peer(ctx);
  asio::local::connect_pair(closed, closed_peer);
  int closed_ended = 0, next_ended = 0;
  boost::system::error_code closed_ec, next_ec;
  size_t next_got = 0;
  closed.async_read_some(asio::buffer(closed_buf), [&](boost::system::error_code ec, size_t) {
    ++closed_ended;
    closed_ec = ec;
  });
  ctx.poll();  // the read is in the kernel
  closed.close();
  Socket next(ctx), next_peer(ctx);  // created before the read's completion is seen
  asio::local::connect_pair(next, next_peer);
  next.async_read_some(asio::buffer(next_buf), [&](boost::system::error_code ec, size_t n) {
    ++next_ended;
    next_ec = ec;
    next_got = n;
  });
  asio::write(next_peer, asio::buffer("x", 1));
  auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while ((closed_ended == 0 || next_ended == 0) && std::chrono::steady_clock::now() < give_up) {
    ctx.restart();
    ctx.poll();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(closed_ended, 1);
  EXPECT_EQ(closed_ec, asio::error::operation_aborted) << closed_ec.message();
  ASSERT_EQ(next_ended, 1) << "the next socket's read never began";
  EXPECT_FALSE(next_ec) << next_ec.message();
  EXPECT_EQ(next_got, 1u);
  EXPECT_EQ(next_buf[0], 'x');
}

// Destroying a context waits for the completions of what it cancels (so that
// no operation it abandons is still writing into its buffer), and what it
// cancels includes its timer: Boost 1.81 marked no completion seen, counting
// the first one over and over, and cancelled its timer with a flag that
// cancels nothing here, so that waiting would have lasted until the timer.
TEST(AsioIoUring, DestroyingAContextWithReadsAndATimerInFlightIsPrompt) {
  auto start = std::chrono::steady_clock::now();
  int ended = 0;
  {
    asio::io_context ctx;
    std::array<char, 16> sink{};
    std::vector<std::unique_ptr<Socket>> sockets;
    for (int i = 0; i < 8; ++i) {
      sockets.push_back(std::make_unique<Socket>(ctx));
      sockets.push_back(std::make_unique<Socket>(ctx));
      asio::local::connect_pair(*sockets[sockets.size() - 2], *sockets.back());
      sockets[sockets.size() - 2]->async_read_some(asio::buffer(sink),
                                                   [&](boost::system::error_code, size_t) { ++ended; });
    }
    asio::steady_timer timer(ctx, std::chrono::hours(1));
    timer.async_wait([&](boost::system::error_code) { ++ended; });
    ctx.poll();  // the reads and the timer are in the kernel
  }  // the timer and sockets close, their operations still in the kernel; then the context
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(ended, 0);  // abandoned, never called
}

}  // namespace
