// A small HTTP/1.1 server for endpoints no real server can stand in for
// here (a GCS OAuth token endpoint, the Databricks Files API): tests name
// what they build on it as fakes. Serves 127.0.0.1 on a free port, one
// thread per connection (LoopbackListener), keep-alive; the handler runs
// on those threads (guard shared state). Stop() (also the destructor)
// joins every thread.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "tests/stores/common/loopback_listener.h"

namespace sluice::testing {

struct FakeRequest {
  std::string method;
  std::string target;  // path and query as sent
  std::map<std::string, std::string> headers;  // names lower case
  std::string body;
  std::string Header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? "" : it->second;
  }
};

// `s` with each %XX replaced by its byte, as a server decodes a request's
// path (a '+' stays '+').
std::string PercentDecoded(const std::string& s);

struct FakeResponse {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

class FakeHttpServer {
 public:
  using Handler = std::function<FakeResponse(const FakeRequest&)>;
  explicit FakeHttpServer(Handler handler);
  ~FakeHttpServer();
  void Stop() { listener_.Stop(); }
  int port() const { return listener_.port(); }
  std::string url() const { return listener_.url(); }

 private:
  void Serve(int fd);
  Handler handler_;
  LoopbackListener listener_;  // last: its threads use handler_
};

}  // namespace sluice::testing
