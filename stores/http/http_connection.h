// One HTTP connection (TCP, or TLS over TCP) and the two guards that bound
// the socket work on it: ScopedCancel (a coroutine's cancellation closes
// the socket) and Watchdog (the idle and overall timeouts of a body).
//
// Internal to stores/http. Everything here runs on the client's executor,
// one thread at a time; nothing is locked.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_state.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>

#include "stores/http/http_text.h"
#include "stores/http/tls_stream.h"

namespace sluice::http_detail {

// TLS receives ciphertext in reads of up to this many bytes (see
// tls_stream.h).
inline constexpr size_t kTlsReceiveBytes = 256 * 1024;

struct Connection {
  std::string key;        // the pool key (Url::PoolKey)
  std::string host_port;  // "host:port" for messages
  std::unique_ptr<boost::beast::tcp_stream> tcp;  // set unless TLS
  std::unique_ptr<TlsStream> tls;                 // set for https
  boost::beast::flat_buffer buffer;  // bytes read past a response head
  Clock::time_point idle_since;

  boost::beast::tcp_stream& lowest() { return tls ? tls->next_layer() : *tcp; }

  // A pooled connection is reusable only if the server has neither closed
  // it nor sent anything unsolicited: recv(MSG_PEEK) must find no data, and
  // neither may the TLS stream hold any received bytes.
  bool LooksAlive();
  // Closes the socket: every pending and later operation on it ends.
  void Close();
};

// Cancellation of socket work. Asio hands a cancellation to whichever
// operation last installed its handler in the coroutine's slot; inside a
// composed operation (Beast's reads, TLS records) the handler of an
// operation that already completed may still sit there, and the signal is
// lost. So socket operations here run with NoCancel() (they install
// nothing) and a ScopedCancel's handler stays in the slot for its whole
// scope: it closes the socket, which ends any pending or later operation
// on it. A cancellation that arrived while something else held the slot (a
// sink's file write) is seen by Arm(), which checks the state first. A
// closed connection is never returned to the pool.
inline auto NoCancel() {
  return boost::asio::as_tuple(boost::asio::bind_cancellation_slot(
      boost::asio::cancellation_slot(), boost::asio::use_awaitable));
}

class ScopedCancel {
 public:
  ScopedCancel(boost::asio::cancellation_state state, Connection& conn);
  ~ScopedCancel();
  ScopedCancel(const ScopedCancel&) = delete;
  ScopedCancel& operator=(const ScopedCancel&) = delete;
  // (Re)installs the handler, or closes at once if cancelled meanwhile.
  void Arm();

 private:
  boost::asio::cancellation_state state_;
  boost::asio::cancellation_slot slot_;
  Connection* conn_;
};

// The calling coroutine's cancellation state.
boost::asio::awaitable<boost::asio::cancellation_state> CurrentState();

// The idle and overall timeouts while a body streams in: one timer for the
// whole body instead of one per read (Beast's expires_at arms and cancels a
// timer around every read_some). Reads call Progress(); when no byte came
// for `idle`, or `deadline` passed, the socket is closed and fired() is set.
// `conn` must outlive the Watchdog.
class Watchdog {
 public:
  Watchdog(boost::asio::any_io_executor executor, Connection& conn,
           std::chrono::milliseconds idle, Clock::time_point deadline);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;
  void Progress() { state_->last = Clock::now(); }
  bool fired() const { return state_->fired; }

 private:
  struct State {
    State(boost::asio::any_io_executor executor, Connection& c, std::chrono::milliseconds i,
          Clock::time_point d)
        : timer(std::move(executor)), conn(&c), idle(i), deadline(d) {}
    boost::asio::steady_timer timer;
    Connection* conn;
    std::chrono::milliseconds idle;
    Clock::time_point deadline;
    Clock::time_point last;
    bool done = false;
    bool fired = false;
    Clock::time_point Due() const { return std::min(last + idle, deadline); }
  };
  static void Arm(std::shared_ptr<State> s);
  std::shared_ptr<State> state_;
};

}  // namespace sluice::http_detail
