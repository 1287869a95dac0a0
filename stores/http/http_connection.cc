#include "stores/http/http_connection.h"

#include <sys/socket.h>

#include <cerrno>

#include <boost/asio/this_coro.hpp>

namespace sluice::http_detail {

namespace asio = boost::asio;

bool Connection::LooksAlive() {
  if (tls && tls->buffered() > 0) return false;
  char byte;
  ssize_t n = ::recv(lowest().socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

void Connection::Close() {
  boost::system::error_code ignored;
  lowest().socket().close(ignored);
}

ScopedCancel::ScopedCancel(asio::cancellation_state state, Connection& conn)
    : state_(state), slot_(state.slot()), conn_(&conn) {
  Arm();
}

ScopedCancel::~ScopedCancel() {
  if (slot_.is_connected()) slot_.clear();
}

void ScopedCancel::Arm() {
  if (state_.cancelled() != asio::cancellation_type::none) {
    conn_->Close();
  } else if (slot_.is_connected()) {
    slot_.assign([c = conn_](asio::cancellation_type) { c->Close(); });
  }
}

asio::awaitable<asio::cancellation_state> CurrentState() {
  co_return co_await asio::this_coro::cancellation_state;
}

Watchdog::Watchdog(asio::any_io_executor executor, Connection& conn,
                   std::chrono::milliseconds idle, Clock::time_point deadline)
    : state_(std::make_shared<State>(std::move(executor), conn, idle, deadline)) {
  state_->last = Clock::now();
  Arm(state_);
}

Watchdog::~Watchdog() {
  state_->done = true;
  state_->timer.cancel();
}

void Watchdog::Arm(std::shared_ptr<State> s) {
  s->timer.expires_at(s->Due());
  s->timer.async_wait([s](boost::system::error_code ec) {
    if (ec || s->done) return;
    if (Clock::now() < s->Due()) {
      Arm(s);
      return;
    }
    s->fired = true;
    s->conn->Close();
  });
}

}  // namespace sluice::http_detail
