// A throwaway nginx (Debian's /usr/sbin/nginx) serving one folder over plain
// HTTP on a free 127.0.0.1 port, for cold-cache runs against a real server.
// Not thread-safe; one instance per folder. The process is stopped (SIGTERM,
// then reaped) by the destructor.
#pragma once

#include <sys/types.h>

#include <string>

namespace sluice::bench {

class LoopbackNginx {
 public:
  LoopbackNginx() = default;
  ~LoopbackNginx();
  LoopbackNginx(const LoopbackNginx&) = delete;
  LoopbackNginx& operator=(const LoopbackNginx&) = delete;

  // Serves `root` (files as-is, sendfile) with its config, pid file and logs
  // in `work_dir` (created). Returns an empty string on success, else what
  // failed (look at work_dir/error.log).
  std::string Start(const std::string& root, const std::string& work_dir);
  int port() const { return port_; }

 private:
  pid_t pid_ = -1;
  int port_ = -1;
};

}  // namespace sluice::bench
