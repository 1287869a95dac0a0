// Fixtures for the stores suite: the npm servers of tests/servers (s3rver,
// azurite) started with node on 127.0.0.1 and a free port, stopped (SIGTERM,
// then SIGKILL) by the destructor; and the environments that reach them
// (set with ScopedEnv, tests/common/scoped_env.h).
// Not thread-safe; tests use them from the test thread only.
#pragma once

#include <sys/types.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tests/common/scoped_env.h"

namespace sluice::testing {

// Why the npm servers cannot run here ("" when they can): node or
// tests/servers/node_modules missing (run ./dev deps).
std::string NodeServersUnavailableReason();

class NodeServer {
 public:
  // Runs `argv` (argv[0] is looked up in PATH) with stdout and stderr going
  // to `log_path`, and waits up to 20 s until 127.0.0.1:`port` accepts
  // connections. Null when it does not come up (the log tells why).
  // `env` holds extra "NAME=value" settings for the child.
  static std::unique_ptr<NodeServer> Start(const std::vector<std::string>& argv, int port,
                                           const std::string& log_path,
                                           const std::vector<std::string>& env = {});
  ~NodeServer();
  int port() const { return port_; }
  std::string Log() const;

 private:
  NodeServer() = default;
  pid_t pid_ = -1;
  int port_ = 0;
  std::string log_path_;
};

// s3rver via tests/servers/s3rver_launch.js, verifying SigV4 against
// (key_id, secret), with `buckets` created, data under `dir`.
std::unique_ptr<NodeServer> StartS3rver(const std::string& dir, const std::string& key_id,
                                        const std::string& secret,
                                        const std::vector<std::string>& buckets);

// azurite's blob service with data under `dir` (devstoreaccount1);
// `extra_args` appended (e.g. --oauth basic --cert C --key K).
std::unique_ptr<NodeServer> StartAzurite(const std::string& dir,
                                         const std::vector<std::string>& extra_args = {});

// Every variable the stores read, unset: tests start from a clean slate.
std::map<std::string, std::optional<std::string>> CleanStoreEnv();

// CleanStoreEnv() plus the credentials and endpoint (S3_ENDPOINT_URL) that
// reach an s3rver on 127.0.0.1:`port`.
std::map<std::string, std::optional<std::string>> S3rverEnv(int port, const std::string& key_id,
                                                            const std::string& secret);

}  // namespace sluice::testing
