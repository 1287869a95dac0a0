// Asio's io_uring backend as base/asio/ compiles it: a completion reaches the
// operation it belongs to and no other.

#include <sys/socket.h>

#include <array>
#include <memory>
#include <vector>

#include <boost/asio/io_context.hpp>
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
// reads on one other socket are started and cancelled over two laps of the
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

}  // namespace
