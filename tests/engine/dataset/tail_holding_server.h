// A test HTTP/1.1 server on 127.0.0.1 serving the files of a folder with
// ranged reads (a single pass's shard in parts): a GET with "Range:
// bytes=a-b" is answered 206 with those bytes (cut at the file's end), one
// starting past the end 416, one without Range 200 with the whole file,
// a HEAD 200 with the file's size; every answer closes its connection.
// The file named `held` is held back from byte `hold_from` on: a GET whose
// range reaches that byte gets no answer until the test calls Release
// (then it is answered as any other) or Fail (then it is answered 404, as
// for an object deleted while it was read). Release and Fail also answer
// the held requests that come later. HeldRanges() tells which ranges are
// held, as they arrived; a safety Release after `safety` (so that a reader
// that never gets its samples fails the test instead of hanging it), which
// released() then reports as any Release. With `send_before_hold`, a held
// GET is first answered with its head (206) and its bytes before
// `hold_from`, and the rest waits: Release sends it, Fail cuts the
// connection there (a part cut short after some of its bytes came); a
// GET starting at or past `hold_from` is held as without it. One thread
// per connection (LoopbackListener); Stop() (and the destructor) joins
// them. A web server's answers state no ETag unless StateEtags was called
// (nginx's do: a file rewritten at the same size then shows).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "tests/stores/common/loopback_listener.h"

namespace sluice::testing {

class TailHoldingServer {
 public:
  TailHoldingServer(std::string root, std::string held, uint64_t hold_from,
                    std::chrono::seconds safety = std::chrono::seconds(60),
                    bool send_before_hold = false);
  ~TailHoldingServer() { Stop(); }
  TailHoldingServer(const TailHoldingServer&) = delete;
  TailHoldingServer& operator=(const TailHoldingServer&) = delete;

  void Release();
  void Fail();
  // From now on every answer to a HEAD, or to a GET not held, states the
  // ETag of the file's bytes as they are when it is answered (EtagOf), as
  // a web server's does; If-Match is not looked at (the web store sends
  // none).
  void StateEtags() { states_etags_ = true; }
  // The ETag StateEtags states for a file of `bytes`: "\"" 16 hex digits of
  // their FNV-1a 64 "\"".
  static std::string EtagOf(std::string_view bytes);
  bool released() const;
  // The held requests' ranges [first, last] (inclusive, as asked), in order.
  std::vector<std::pair<uint64_t, uint64_t>> HeldRanges() const;
  // A GET answered in full (200 or 206, not held): the path asked for,
  // the first byte and how many body bytes were sent.
  struct Answered {
    std::string target;
    uint64_t first = 0;
    uint64_t bytes = 0;
  };
  // Those answered so far, in the order their answers were made.
  std::vector<Answered> AnsweredGets() const;
  // Waits until at least `n` requests are held (or the safety release).
  void WaitHeld(size_t n);
  void Stop();
  std::string url() const { return listener_.url(); }

 private:
  enum class Hold { kHeld, kReleased, kFailed };
  void Serve(int c);
  void Log(const std::string& target, uint64_t first, uint64_t bytes);
  // Holds a GET of the held file that asked for bytes [first, last_asked]
  // until Release or Fail: true when it is then to be answered (from
  // `from`: past what was sent while it was held), false when it was
  // failed and answered so.
  bool HoldGet(int c, uint64_t first, uint64_t last_asked, const std::string& body, uint64_t* from);

  const std::string root_;
  const std::string held_;
  const uint64_t hold_from_;
  const bool send_before_hold_;
  std::atomic<bool> stop_{false};  // wakes held GETs before the listener joins them
  std::atomic<bool> states_etags_{false};
  mutable std::mutex mu_;
  std::condition_variable cv_;
  Hold hold_ = Hold::kHeld;
  std::vector<std::pair<uint64_t, uint64_t>> held_ranges_;
  std::vector<Answered> answered_;  // under mu_
  std::thread safety_;
  LoopbackListener listener_;  // last: its threads use the members above
};

}  // namespace sluice::testing
