#include "tests/stores/http/test_servers.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

namespace sluice::testing {

std::string PatternBytes(size_t n, uint32_t seed) {
  std::string s(n, '\0');
  uint64_t x = seed;
  for (size_t i = 0; i < n; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    s[i] = static_cast<char>(x >> 56);
  }
  return s;
}

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

bool ListensOn(pid_t pid, int port) {
  // Lines of /proc/net/tcp{,6}: "sl local rem st tx:rx tr:when retrnsmt uid
  // timeout inode ...", the local address as "<hex address>:<hex port>" and
  // st 0A for LISTEN.
  std::set<std::string> inodes;
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(table);
    std::string line;
    std::getline(in, line);  // the header
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string sl, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
      fields >> sl >> local >> remote >> state >> queues >> timer >> retransmits >> uid >> timeout >>
          inode;
      const size_t colon = local.rfind(':');
      if (state != "0A" || colon == std::string::npos) continue;
      if (std::strtol(local.c_str() + colon + 1, nullptr, 16) == port) inodes.insert(inode);
    }
  }
  if (inodes.empty()) return false;
  const std::string fds = "/proc/" + std::to_string(pid) + "/fd";
  DIR* dir = opendir(fds.c_str());
  if (dir == nullptr) return false;
  bool found = false;
  while (dirent* e = readdir(dir)) {
    char target[64];
    const ssize_t n = readlink((fds + "/" + e->d_name).c_str(), target, sizeof(target) - 1);
    if (n <= 0) continue;
    const std::string link(target, static_cast<size_t>(n));  // "socket:[<inode>]"
    if (link.rfind("socket:[", 0) == 0 && link.back() == ']' &&
        inodes.count(link.substr(8, link.size() - 9)) > 0) {
      found = true;
      break;
    }
  }
  closedir(dir);
  return found;
}

int Shell(const std::string& command) {
  int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

bool MakeTestCerts(const std::string& dir, const std::string& name,
                   const std::string& server_dns_name, TestCerts* out) {
  std::string p = dir + "/" + name;
  out->ca_cert = p + "-ca.pem";
  out->server_cert = p + "-server.pem";
  out->server_key = p + "-server.key";
  std::string q = " >/dev/null 2>&1";
  std::string ext = p + "-ext.cnf";
  std::ofstream(ext) << "subjectAltName=DNS:" << server_dns_name << "\n"
                     << "basicConstraints=CA:FALSE\n";
  return Shell("openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj '/CN=Sluice Test CA " +
               name + "' -keyout " + p + "-ca.key -out " + out->ca_cert + q) == 0 &&
         Shell("openssl req -newkey rsa:2048 -nodes -subj '/CN=" + server_dns_name +
               "' -keyout " + out->server_key + " -out " + p + "-server.csr" + q) == 0 &&
         Shell("openssl x509 -req -days 2 -in " + p + "-server.csr -CA " + out->ca_cert +
               " -CAkey " + p + "-ca.key -CAcreateserial -extfile " + ext + " -out " +
               out->server_cert + q) == 0;
}

std::unique_ptr<NginxServer> NginxServer::Start(const std::string& dir, const TestCerts* certs,
                                                const std::string& server_config) {
  Shell("mkdir -p '" + dir + "/www/dav' '" + dir + "/tmp'");
  // A port FreePort chose can be taken by another suite's server before
  // nginx binds it: nginx then exits, and is started again on other ports.
  for (int attempt = 0; attempt < 5; ++attempt) {
    std::unique_ptr<NginxServer> server(new NginxServer());
    server->dir_ = dir;
    server->www_ = dir + "/www";
    server->http_port_ = FreePort();
    if (certs != nullptr) server->https_port_ = FreePort();
    std::ostringstream conf;
    conf << "daemon off;\nmaster_process off;\nworker_processes 1;\n"
         << "pid " << dir << "/nginx.pid;\nerror_log " << dir << "/error.log info;\n"
         << "events { worker_connections 1024; }\n"
         << "http {\n"
         << "  log_format sluice '$connection $request_method $request_uri $status $http_range';\n"
         << "  access_log " << dir << "/access.log sluice;\n"
         << "  client_body_temp_path " << dir << "/tmp/body;\n"
         << "  proxy_temp_path " << dir << "/tmp/proxy;\n"
         << "  fastcgi_temp_path " << dir << "/tmp/fastcgi;\n"
         << "  uwsgi_temp_path " << dir << "/tmp/uwsgi;\n"
         << "  scgi_temp_path " << dir << "/tmp/scgi;\n"
         << "  default_type application/octet-stream;\n"
         << "  sendfile on;\n  keepalive_timeout 1s;\n  keepalive_requests 100000;\n"
         << "  server {\n"
         << "    listen 127.0.0.1:" << server->http_port_ << ";\n";
    if (certs != nullptr) {
      conf << "    listen 127.0.0.1:" << server->https_port_ << " ssl;\n"
           << "    ssl_certificate " << certs->server_cert << ";\n"
           << "    ssl_certificate_key " << certs->server_key << ";\n";
    }
    conf << "    root " << server->www_ << ";\n"
         << "    location /dav/ { dav_methods PUT DELETE; create_full_put_path on;"
         << " client_max_body_size 0; }\n"
         << "    location = /post { return 200 \"posted $request_method $content_length\"; }\n"
         << "    location = /redirect { return 302 /small.txt; }\n"
         << "    location = /redirect-loop { return 302 /redirect-loop; }\n"
         << server_config << "\n"
         << "  }\n}\n";
    std::string conf_path = dir + "/nginx.conf";
    std::ofstream(conf_path) << conf.str();

    std::ofstream(dir + "/error.log", std::ios::trunc);  // this attempt's only
    pid_t pid = fork();
    if (pid == 0) {
      execlp("nginx", "nginx", "-p", dir.c_str(), "-c", conf_path.c_str(), "-e",
             (dir + "/error.log").c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    if (pid < 0) return nullptr;
    server->pid_ = pid;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    bool exited = false;
    for (;;) {
      // nginx binds every listen socket before it serves, so both must be
      // its own: a taken HTTPS port would otherwise go unnoticed.
      if (ListensOn(pid, server->http_port_) &&
          (certs == nullptr || ListensOn(pid, server->https_port_))) {
        return server;
      }
      int status;
      if (waitpid(pid, &status, WNOHANG) == pid) {
        server->pid_ = -1;
        exited = true;
        break;
      }
      if (std::chrono::steady_clock::now() > deadline) return nullptr;  // the destructor stops it
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (exited && attempt + 1 < 5 &&
        Shell("grep -q 'Address already in use' '" + dir + "/error.log'") != 0) {
      return nullptr;  // not a port taken: nginx cannot start here
    }
  }
  return nullptr;
}

NginxServer::~NginxServer() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    int status;
    waitpid(pid_, &status, 0);
  }
}

std::string NginxServer::AccessLog() const {
  std::ifstream in(dir_ + "/access.log");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string NginxServer::AccessLogOnce(
    const std::function<bool(const std::string& log)>& holds) const {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  std::string log = AccessLog();
  while (!holds(log) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    log = AccessLog();
  }
  return log;
}

}  // namespace sluice::testing
