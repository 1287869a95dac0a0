// A test HTTP/1.1 server on 127.0.0.1 serving the files of a folder: every
// GET is answered 200 with the whole file and Connection: close. The file
// named `stall` gets its headers and the first half of its body, then the
// connection hangs until Stop(): a download that is mid-body when its
// process is killed, or a shard that is not there yet. Requests() tells
// which paths were asked for, as they arrived. One thread per
// connection; Stop() (and the destructor) joins them. Aborts when it cannot
// listen.
#pragma once

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace sluice::testing {

class StallingFileServer {
 public:
  StallingFileServer(std::string root, std::string stall);
  ~StallingFileServer() { Stop(); }
  StallingFileServer(const StallingFileServer&) = delete;
  StallingFileServer& operator=(const StallingFileServer&) = delete;

  void Stop();
  // The request targets ("/shard.00000.mds") received so far, in order.
  std::vector<std::string> Requests() const;
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  // Waits up to 20 ms at a time for `events` on `fd`; false when stopping.
  bool Ready(int fd, short events) const;
  void Accept();
  void Serve(int c);

  const std::string root_;
  const std::string stall_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread acceptor_;
  std::mutex mu_;
  std::vector<std::thread> workers_;
  mutable std::mutex requests_mu_;
  std::vector<std::string> requests_;
};

}  // namespace sluice::testing
