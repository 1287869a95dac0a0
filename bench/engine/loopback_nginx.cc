#include "bench/engine/loopback_nginx.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>
#include <vector>

extern char** environ;

namespace sluice::bench {
namespace {

// A port the kernel just handed out (bound then released): free unless
// another process grabs it in between, which Start detects.
int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  int port = -1;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    port = ntohs(a.sin_port);
  }
  close(fd);
  return port;
}

bool PortOpen(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
  close(fd);
  return ok;
}

}  // namespace

LoopbackNginx::~LoopbackNginx() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    int status;
    waitpid(pid_, &status, 0);
  }
}

std::string LoopbackNginx::Start(const std::string& root, const std::string& work_dir) {
  mkdir(work_dir.c_str(), 0755);
  mkdir((work_dir + "/tmp").c_str(), 0755);
  port_ = FreePort();
  if (port_ < 0) return "no free port on 127.0.0.1";
  const std::string conf = work_dir + "/nginx.conf", err = work_dir + "/error.log";
  const std::string tmp = work_dir + "/tmp";
  std::ofstream(conf) << "daemon off;\nmaster_process off;\nworker_processes 1;\n"
                      << "pid " << work_dir << "/nginx.pid;\nerror_log " << err << " warn;\n"
                      << "events { worker_connections 1024; }\n"
                      << "http {\n  access_log off;\n  sendfile on;\n  tcp_nopush on;\n"
                      << "  keepalive_requests 1000000;\n"
                      << "  default_type application/octet-stream;\n"
                      << "  client_body_temp_path " << tmp << ";\n  proxy_temp_path " << tmp
                      << ";\n  fastcgi_temp_path " << tmp << ";\n  uwsgi_temp_path " << tmp
                      << ";\n  scgi_temp_path " << tmp << ";\n"
                      << "  server {\n    listen 127.0.0.1:" << port_ << ";\n    root " << root
                      << ";\n  }\n}\n";
  std::vector<std::string> args = {"/usr/sbin/nginx", "-p", work_dir, "-c", conf, "-e", err};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  if (posix_spawn(&pid_, argv[0], nullptr, nullptr, argv.data(), environ) != 0) {
    pid_ = -1;
    return "cannot run /usr/sbin/nginx";
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (PortOpen(port_)) return "";
    int status;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return "nginx exited at start (see " + err + ")";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return "nginx did not listen on port " + std::to_string(port_) + " within 10 s";
}

}  // namespace sluice::bench
