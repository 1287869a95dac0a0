// A TCP proxy process for the chaos soak: it sits between the processes of a
// job and a real HTTP server (nginx) and misbehaves at random, as a bad
// network and an overloaded store do.
//
// Each accepted connection carries one request (the proxy makes it
// "Connection: close") and draws one fault from a generator seeded with
// (seed, connection number), so a run's faults depend only on the seed and
// the order requests arrive in:
//   pass      forward both ways until either side closes
//   reset     forward some response bytes (0..256 KiB), then RST
//   truncate  forward some response bytes, then FIN
//   stall     read the request, answer nothing for 0.1..1.5 s, close
//   hang      forward some response bytes (0..256 KiB), then nothing for
//             2.5 s (past the soak's read_timeout: the client gives up and
//             retries), then close
//   503, 429  answer "503 Service Unavailable" / "429 Too Many Requests"
//             (Retry-After: 0) and close
//   bitflip   forward, but flip one bit of the first response's body within
//             its first 64 KiB: only for shard files (never index.json,
//             which carries no hash, as a TLS link would never let through)
//
// Start() binds a free port on 127.0.0.1 in the calling process and forks
// the proxy, which appends one line per connection (the fault's name) to
// the log file; call it before the test starts threads. The destructor
// kills (SIGKILL) and reaps it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "tests/engine/dataset/proxy_process.h"

namespace sluice::testing {

class ChaosProxy {
 public:
  // `faulty_percent` of connections (0..100) get a fault other than pass.
  static std::unique_ptr<ChaosProxy> Start(int upstream_port, const std::string& log_path,
                                           uint64_t seed, int faulty_percent);
  ChaosProxy(const ChaosProxy&) = delete;
  ChaosProxy& operator=(const ChaosProxy&) = delete;

  int port() const { return process_.port(); }
  // How many connections got each fault so far (read from the log).
  std::map<std::string, int> FaultCounts() const;

 private:
  ChaosProxy() = default;
  ProxyProcess process_;
  std::string log_path_;
};

}  // namespace sluice::testing
