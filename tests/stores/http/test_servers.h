// Test fixtures for stores/http: a real nginx serving a folder on
// 127.0.0.1 (HTTP and optionally HTTPS), and a test CA made with the openssl
// CLI. Not thread-safe; one instance per test suite.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>

#include "tests/common/temp_dir.h"

namespace sluice::testing {

// Deterministic pseudo-random bytes (a seeded LCG), for exact comparisons.
std::string PatternBytes(size_t n, uint32_t seed = 1);

// A free TCP port on 127.0.0.1 (bound then released: another process may
// take it before the server meant for it binds it; see ListensOn).
int FreePort();

// Whether process `pid` holds a socket listening on TCP `port` (its inode,
// from /proc/net/tcp and tcp6, among the links in /proc/<pid>/fd). A server
// started on a FreePort checks this, not just that the port answers: when
// suites run side by side, a port can go to another suite's server, whose
// answers would otherwise be taken for this one's.
bool ListensOn(pid_t pid, int port);

// Runs a shell command; returns its exit status (0 on success).
int Shell(const std::string& command);

// A CA and a server certificate for `server_dns_name` signed by it, made
// with the openssl CLI in `dir`.
struct TestCerts {
  std::string ca_cert, server_cert, server_key;
};
bool MakeTestCerts(const std::string& dir, const std::string& name,
                   const std::string& server_dns_name, TestCerts* out);

class NginxServer {
 public:
  // Starts nginx with its config, logs and temp files under `dir`, serving
  // `dir`/www (created) at http://127.0.0.1:http_port(); with `certs`, also
  // https on https_port(). `server_config`: directives added to the server
  // block (e.g. a location that throttles one file). Returns null when
  // nginx does not come up.
  static std::unique_ptr<NginxServer> Start(const std::string& dir,
                                            const TestCerts* certs = nullptr,
                                            const std::string& server_config = "");
  ~NginxServer();

  int http_port() const { return http_port_; }
  int https_port() const { return https_port_; }
  const std::string& www() const { return www_; }
  // The access log: one line per request, "$connection $request_method
  // $request_uri $status $http_range".
  std::string AccessLog() const;
  // The access log once `holds(log)`, or as it is after 5 s: nginx logs a
  // request after answering it, so a client can finish before its last
  // request's line is written.
  std::string AccessLogOnce(const std::function<bool(const std::string& log)>& holds) const;

 private:
  NginxServer() = default;
  pid_t pid_ = -1;
  int http_port_ = 0;
  int https_port_ = 0;
  std::string dir_, www_;
};

}  // namespace sluice::testing
