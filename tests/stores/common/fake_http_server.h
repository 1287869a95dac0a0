// A small HTTP/1.1 server for endpoints no real server can stand in for
// here (a GCS OAuth token endpoint, the Databricks Files API): tests name
// what they build on it as fakes. Serves 127.0.0.1 on a free port, one
// thread per connection, keep-alive; the handler runs on those threads
// (guard shared state). Stop() (also the destructor) joins every thread.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

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
  void Stop();
  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  void AcceptLoop();
  void Serve(int fd);
  Handler handler_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread acceptor_;
  std::mutex mu_;
  std::vector<std::thread> workers_;
};

}  // namespace sluice::testing
