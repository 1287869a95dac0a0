// A test HTTP/1.1 server on 127.0.0.1 serving the files of a folder: every
// GET is answered 200 with the whole file and Connection: close. The file
// named `stall` gets its headers and the first half of its body, then the
// connection hangs until Stop(): a download that is mid-body when its
// process is killed, or a shard that is not there yet. Requests() tells
// which paths were asked for, as they arrived. One thread per
// connection (LoopbackListener); Stop() (and the destructor) joins them.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "tests/stores/common/loopback_listener.h"

namespace sluice::testing {

class StallingFileServer {
 public:
  StallingFileServer(std::string root, std::string stall);
  ~StallingFileServer() { Stop(); }
  StallingFileServer(const StallingFileServer&) = delete;
  StallingFileServer& operator=(const StallingFileServer&) = delete;

  void Stop() { listener_.Stop(); }
  // The request targets ("/shard.00000.mds") received so far, in order.
  std::vector<std::string> Requests() const;
  std::string url() const { return listener_.url(); }

 private:
  void Serve(int c);

  const std::string root_;
  const std::string stall_;
  mutable std::mutex requests_mu_;
  std::vector<std::string> requests_;
  LoopbackListener listener_;  // last: its threads use the members above
};

}  // namespace sluice::testing
