// A TCP proxy process that logs HTTP request lines: tests put it between the
// processes of one simulated node and a real server (s3rver) to count, at the
// server side of the wire, which objects the node requested.
//
// Start() binds 127.0.0.1 on a free port in the calling process, then forks
// the proxy (so the port accepts connections as soon as Start returns). The
// proxy forwards every connection to 127.0.0.1:upstream_port unchanged and
// appends each request line it sees ("GET /bkt/key HTTP/1.1") to the log file
// with one write(2) per line. The destructor kills (SIGKILL) and reaps it.
// Call Start before the test creates threads (it forks).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tests/engine/dataset/proxy_process.h"

namespace sluice::testing {

class RequestLogProxy {
 public:
  static std::unique_ptr<RequestLogProxy> Start(int upstream_port, const std::string& log_path);
  RequestLogProxy(const RequestLogProxy&) = delete;
  RequestLogProxy& operator=(const RequestLogProxy&) = delete;

  int port() const { return process_.port(); }
  // The request lines logged so far, in arrival order.
  std::vector<std::string> Requests() const;
  // Each request line once its headers have come, with its Range header's
  // value ("GET /bkt/key HTTP/1.1 bytes=4-99"; "-" for none), in the order
  // their headers ended.
  std::vector<std::string> RequestsWithRanges() const;

 private:
  RequestLogProxy() = default;
  ProxyProcess process_;
  std::string log_path_;
};

}  // namespace sluice::testing
