// Download throughput on loopback (issue 4, Benchmark): Sluice's HttpClient
// against curl, same objects, same concurrency, same run, from one nginx on
// 127.0.0.1, over plain HTTP and HTTPS (a CA made here with the openssl CLI).
//
// Usage: http_bench [--dir=/tmp] [--big-mib=1024] [--objects=1000]
//                   [--object-mib=4] [--concurrency=8] [--runs=3]
//                   [--schemes=http,https] [--warmup=1] [--only=sluice|curl]
//                   [--settle=3]
//
// Workloads: one big object (Sluice: GetToFile with 8 MiB parts and
// `concurrency` ranged GETs in flight; curl: one stream, and `concurrency`
// parallel 8 MiB ranges into part files), and many objects (`concurrency`
// downloads in flight: Sluice coroutines on one EventLoop; curl --parallel
// --parallel-max N). Every download goes to a file in DIR's temp folder and
// is deleted after its run. CPU: getrusage(RUSAGE_SELF) deltas for Sluice
// (in-process: loop thread and io_uring workers), RUSAGE_CHILDREN deltas for
// curl. nginx is not counted for either. Figures are medians over runs,
// after `warmup` unmeasured rounds (the first writes into never-touched page
// cache pages, which on a VM costs whichever client runs first extra).
// Every job starts `settle` seconds after the previous one's files were
// deleted: a VM balloon with free page reporting hands freed memory back to
// the host within about 2 s, and writing into memory the host took back
// costs several times the copy. Without the pause, a job that follows a
// deletion within those 2 s gets cheaper memory than one that does not.
// The table at the end compares Sluice with curl at the same concurrency
// (N parallel ranges for the big object, --parallel for many objects) and,
// for the big object, with curl's single stream too.
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/status.h"
#include "engine/runtime/event_loop.h"
#include "stores/http/http_client.h"

extern char** environ;

namespace sluice {
namespace {

using Clock = std::chrono::steady_clock;
constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr uint64_t kPartSize = 8 * kMiB;

struct Config {
  std::string dir = "/tmp";
  uint64_t big_mib = 1024;
  int objects = 1000;
  uint64_t object_mib = 4;
  int concurrency = 8;
  int runs = 3;
  int warmup = 1;
  int settle_s = 3;  // pause before each job (see the header)
  std::string only;  // "sluice" or "curl": run only that client (profiling)
  std::vector<std::string> schemes = {"http", "https"};
};

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double CpuSeconds(int who) {
  rusage ru{};
  getrusage(who, &ru);
  auto tv = [](const timeval& t) { return t.tv_sec + t.tv_usec / 1e6; };
  return tv(ru.ru_utime) + tv(ru.ru_stime);
}

// Runs argv (argv[0] looked up in PATH) with stdout/stderr to `log`; returns
// its exit status, -1 if it could not run or was killed.
int RunProcess(const std::vector<std::string>& args, const std::string& log) {
  std::vector<std::string> copies = args;
  std::vector<char*> argv;
  for (std::string& a : copies) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid;
  int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

bool RemoveTree(const std::string& path) { return RunProcess({"rm", "-rf", path}, "/dev/null") == 0; }

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    if (fd >= 0) close(fd);
    return -1;
  }
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

bool PortOpen(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  bool up = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return up;
}

// Incompressible, distinct per seed (splitmix64).
bool WriteRandomFile(const std::string& path, uint64_t bytes, uint64_t seed) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return false;
  std::vector<uint64_t> buf(kMiB / 8);
  uint64_t state = seed * 0x9E3779B97F4A7C15ull;
  bool ok = true;
  for (uint64_t done = 0; ok && done < bytes;) {
    for (uint64_t& w : buf) {
      uint64_t z = (state += 0x9E3779B97F4A7C15ull);
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      w = z ^ (z >> 31);
    }
    size_t n = static_cast<size_t>(std::min<uint64_t>(kMiB, bytes - done));
    ok = write(fd, buf.data(), n) == static_cast<ssize_t>(n);
    done += n;
  }
  return close(fd) == 0 && ok;
}

// Total size of the regular files directly in `dir`.
uint64_t DirBytes(const std::string& dir) {
  uint64_t total = 0;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      struct stat st;
      std::string path = dir + "/" + e->d_name;
      if (stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) total += st.st_size;
    }
    closedir(d);
  }
  return total;
}

// Same bytes at the start, middle and end (a cheap check that downloads are
// the objects, not just of the right size).
bool SameSpotChecks(const std::string& a, const std::string& b, uint64_t size) {
  int fa = open(a.c_str(), O_RDONLY), fb = open(b.c_str(), O_RDONLY);
  bool same = fa >= 0 && fb >= 0;
  char x[4096], y[4096];
  for (uint64_t off : {uint64_t{0}, size / 2, size > 4096 ? size - 4096 : 0}) {
    if (!same) break;
    ssize_t n = pread(fa, x, sizeof(x), static_cast<off_t>(off));
    same = n > 0 && pread(fb, y, sizeof(y), static_cast<off_t>(off)) == n &&
           std::memcmp(x, y, static_cast<size_t>(n)) == 0;
  }
  if (fa >= 0) close(fa);
  if (fb >= 0) close(fb);
  return same;
}

class Nginx {
 public:
  // Starts /usr/sbin/nginx on 127.0.0.1 (HTTP and HTTPS), serving dir/www.
  bool Start(const std::string& dir, const std::string& cert, const std::string& key) {
    http_port_ = FreePort();
    https_port_ = FreePort();
    if (http_port_ < 0 || https_port_ < 0 || http_port_ == https_port_) return false;
    std::string conf = dir + "/nginx.conf";
    std::ofstream(conf)
        << "daemon off;\nmaster_process off;\nworker_processes 1;\n"
        << "pid " << dir << "/nginx.pid;\nerror_log " << dir << "/error.log warn;\n"
        << "events { worker_connections 4096; }\n"
        << "http {\n  access_log off;\n  sendfile on;\n  tcp_nopush on;\n"
        << "  keepalive_requests 1000000;\n  keepalive_timeout 60s;\n"
        << "  default_type application/octet-stream;\n"
        << "  client_body_temp_path " << dir << "/tmp;\n  proxy_temp_path " << dir << "/tmp;\n"
        << "  fastcgi_temp_path " << dir << "/tmp;\n  uwsgi_temp_path " << dir << "/tmp;\n"
        << "  scgi_temp_path " << dir << "/tmp;\n"
        << "  server {\n    listen 127.0.0.1:" << http_port_ << ";\n"
        << "    listen 127.0.0.1:" << https_port_ << " ssl;\n"
        << "    ssl_certificate " << cert << ";\n    ssl_certificate_key " << key << ";\n"
        << "    root " << dir << "/www;\n  }\n}\n";
    std::string err = dir + "/error.log";
    std::vector<std::string> args = {"/usr/sbin/nginx", "-p", dir, "-c", conf, "-e", err};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (posix_spawn(&pid_, argv[0], nullptr, nullptr, argv.data(), environ) != 0) {
      pid_ = -1;
      return false;
    }
    auto deadline = Clock::now() + std::chrono::seconds(10);
    while (Clock::now() < deadline) {
      if (PortOpen(http_port_) && PortOpen(https_port_)) return true;
      int status;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }
  ~Nginx() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      int status;
      waitpid(pid_, &status, 0);
    }
  }
  int port(const std::string& scheme) const { return scheme == "https" ? https_port_ : http_port_; }

 private:
  pid_t pid_ = -1;
  int http_port_ = -1, https_port_ = -1;
};

bool MakeCerts(const std::string& dir) {
  std::string log = dir + "/openssl.log";
  std::ofstream(dir + "/ext.cnf") << "subjectAltName=DNS:localhost,IP:127.0.0.1\n"
                                  << "basicConstraints=CA:FALSE\n";
  return RunProcess({"openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                     "-subj", "/CN=Sluice Bench CA", "-keyout", dir + "/ca.key", "-out",
                     dir + "/ca.pem"},
                    log) == 0 &&
         RunProcess({"openssl", "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1",
                     "-keyout", dir + "/server.key", "-out", dir + "/server.csr"},
                    log) == 0 &&
         RunProcess({"openssl", "x509", "-req", "-days", "2", "-in", dir + "/server.csr", "-CA",
                     dir + "/ca.pem", "-CAkey", dir + "/ca.key", "-CAcreateserial", "-extfile",
                     dir + "/ext.cnf", "-out", dir + "/server.pem"},
                    log) == 0;
}

struct Sample {
  double seconds = 0, cpu = 0;
};

struct Job {
  std::string workload, client;
  std::vector<Sample> runs;
  uint64_t bytes = 0;
};

// One line of the summary: Sluice against one curl job on the same data.
struct Row {
  std::string name;
  Job sluice, curl;
};

std::string ObjName(int i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "obj/%04d.bin", i);
  return buf;
}

class Bench {
 public:
  Bench(Config config, std::string tmp) : c_(std::move(config)), tmp_(std::move(tmp)) {}

  int Main() {
    std::printf("http_bench: temp %s; big object %llu MiB; %d objects of %llu MiB; "
                "concurrency %d; part size 8 MiB; %d warm-up + %d runs (median); %d s pause "
                "before each job\n",
                tmp_.c_str(), static_cast<unsigned long long>(c_.big_mib), c_.objects,
                static_cast<unsigned long long>(c_.object_mib), c_.concurrency, c_.warmup,
                c_.runs, c_.settle_s);
    std::fflush(stdout);
    out_ = tmp_ + "/out";
    if (RunProcess({"mkdir", "-p", tmp_ + "/www/obj", tmp_ + "/tmp", out_ + "/obj"}, "/dev/null") != 0) {
      return Fail("mkdir in " + tmp_);
    }
    auto t0 = Clock::now();
    if (!WriteRandomFile(tmp_ + "/www/big.bin", c_.big_mib * kMiB, 1)) return Fail("write big.bin");
    for (int i = 0; i < c_.objects; ++i) {
      if (!WriteRandomFile(tmp_ + "/www/" + ObjName(i), c_.object_mib * kMiB, 100 + i)) {
        return Fail("write " + ObjName(i));
      }
    }
    std::printf("objects written in %.1f s\n", Secs(t0));
    if (!MakeCerts(tmp_)) return Fail("openssl (see " + tmp_ + "/openssl.log)");
    if (!nginx_.Start(tmp_, tmp_ + "/server.pem", tmp_ + "/server.key")) {
      return Fail("nginx did not start (see " + tmp_ + "/error.log)");
    }

    HttpClientOptions options;
    options.ca_file = tmp_ + "/ca.pem";
    options.max_connections_per_host = std::max(32, c_.concurrency);
    options.download_timeout = std::chrono::milliseconds(600000);
    auto client_or = HttpClient::Create(loop_.executor(), options);
    if (!client_or.ok()) return Fail(client_or.status().ToString());
    client_ = std::move(*client_or);

    std::printf("\n%-6s %-12s %-24s %9s %9s %9s  runs MB/s\n", "scheme", "workload", "client",
                "MB/s", "CPU s/GB", "wall s");
    std::fflush(stdout);
    int rc = 0;
    std::vector<Row> rows;
    for (const std::string& scheme : c_.schemes) {
      base_ = scheme + "://127.0.0.1:" + std::to_string(nginx_.port(scheme)) + "/";
      std::vector<Job> jobs = {
          {"1 big", "sluice GetToFile", {}, 0},
          {"1 big", "curl 1 stream", {}, 0},
          {"1 big", "curl N ranges (parts)", {}, 0},
          {"many", "sluice GetToFile", {}, 0},
          {"many", "curl --parallel", {}, 0},
      };
      // Interleaved runs, so machine load hits both clients alike; odd
      // rounds go in reverse, so no client always follows the same job (and
      // its leftovers: dirty pages in writeback, freed page cache).
      for (int r = 0; r < c_.warmup + c_.runs && rc == 0; ++r) {
        for (int k = 0; k < static_cast<int>(jobs.size()) && rc == 0; ++k) {
          int j = r % 2 == 0 ? k : static_cast<int>(jobs.size()) - 1 - k;
          bool sluice_job = j == 0 || j == 3;
          if (!c_.only.empty() && sluice_job != (c_.only == "sluice")) continue;
          rc = RunOne(scheme, j, &jobs[j]);
          if (r < c_.warmup) jobs[j].runs.clear();
        }
      }
      if (rc != 0) break;
      for (const Job& job : jobs) Print(scheme, job);
      HttpClientStats stats = client_->stats();
      std::printf("sluice connections so far: %llu opened, %llu reuses\n",
                  static_cast<unsigned long long>(stats.connections_opened),
                  static_cast<unsigned long long>(stats.connections_reused));
      char big[32], many[48];
      std::snprintf(big, sizeof(big), "1 x %llu MiB", static_cast<unsigned long long>(c_.big_mib));
      std::snprintf(many, sizeof(many), "%d x %llu MiB", c_.objects,
                    static_cast<unsigned long long>(c_.object_mib));
      rows.push_back({scheme + " " + big + " vs curl " + std::to_string(c_.concurrency) +
                          " ranges", jobs[0], jobs[2]});
      rows.push_back({scheme + " " + big + " vs curl 1 stream", jobs[0], jobs[1]});
      rows.push_back({scheme + " " + many + " vs curl --parallel", jobs[3], jobs[4]});
    }
    if (rc == 0) PrintTable(rows);
    client_.reset();
    loop_.Shutdown();
    return rc;
  }

 private:
  double Secs(Clock::time_point t0) const {
    return std::chrono::duration<double>(Clock::now() - t0).count();
  }
  int Fail(const std::string& what) {
    std::fprintf(stderr, "http_bench: %s\n", what.c_str());
    return 1;
  }

  int RunOne(const std::string& scheme, int j, Job* job) {
    const uint64_t big = c_.big_mib * kMiB, obj = c_.object_mib * kMiB;
    const uint64_t expected = j < 3 ? big : obj * static_cast<uint64_t>(c_.objects);
    const bool self = j == 0 || j == 3;
    const int who = self ? RUSAGE_SELF : RUSAGE_CHILDREN;
    std::this_thread::sleep_for(std::chrono::seconds(c_.settle_s));
    double cpu0 = CpuSeconds(who);
    auto t0 = Clock::now();
    std::string err;
    switch (j) {
      case 0: err = SluiceBig(); break;
      case 1: err = CurlBig(scheme, false); break;
      case 2: err = CurlBig(scheme, true); break;
      case 3: err = SluiceMany(); break;
      case 4: err = CurlMany(scheme); break;
    }
    Sample s{Secs(t0), CpuSeconds(who) - cpu0};
    if (err.empty()) {
      uint64_t got = DirBytes(out_) + (j >= 3 ? DirBytes(out_ + "/obj") : 0);
      if (got != expected) {
        err = "downloaded " + std::to_string(got) + " bytes, expected " + std::to_string(expected);
      } else if (j < 2 && !SameSpotChecks(out_ + "/big.bin", tmp_ + "/www/big.bin", big)) {
        err = "big.bin differs from the served object";
      } else if (j >= 3 && !SameSpotChecks(out_ + "/" + ObjName(c_.objects - 1),
                                           tmp_ + "/www/" + ObjName(c_.objects - 1), obj)) {
        err = "last object differs from the served object";
      }
    }
    if (!err.empty()) return Fail(scheme + " " + job->workload + " " + job->client + ": " + err);
    job->runs.push_back(s);
    job->bytes = expected;
    if (!RemoveTree(out_) || RunProcess({"mkdir", "-p", out_ + "/obj"}, "/dev/null") != 0) {
      return Fail("cannot reset " + out_);
    }
    return 0;
  }

  std::string SluiceBig() {
    GetToFileOptions o;
    o.part_size = kPartSize;
    o.concurrency = c_.concurrency;
    o.write_pool = &loop_.cpu_pool();
    auto r = loop_.Run(client_->GetToFile(base_ + "big.bin", out_ + "/big.bin", o));
    return r.ok() ? "" : r.status().ToString();
  }

  boost::asio::awaitable<Status> ManyWorker(int* next) {
    GetToFileOptions o;
    o.part_size = kPartSize;
    o.concurrency = c_.concurrency;
    o.write_pool = &loop_.cpu_pool();
    // *next is only touched on the loop thread.
    while (*next < c_.objects) {
      std::string name = ObjName((*next)++);
      auto r = co_await client_->GetToFile(base_ + name, out_ + "/" + name, o);
      if (!r.ok()) co_return r.status();
    }
    co_return Status::Ok();
  }

  std::string SluiceMany() {
    std::mutex mu;
    std::condition_variable cv;
    int left = c_.concurrency;
    std::string err;
    int next = 0;
    for (int w = 0; w < c_.concurrency; ++w) {
      loop_.Spawn<Status>(ManyWorker(&next), [&](Status st) {
        std::lock_guard<std::mutex> lock(mu);
        if (!st.ok() && err.empty()) err = st.ToString();
        if (--left == 0) cv.notify_all();
      });
    }
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return left == 0; });
    return err;
  }

  std::vector<std::string> CurlBase(const std::string& scheme) const {
    std::vector<std::string> a = {"curl", "--silent", "--show-error", "--fail"};
    if (scheme == "https") {
      a.push_back("--cacert");
      a.push_back(tmp_ + "/ca.pem");
    }
    return a;
  }

  std::string RunCurl(std::vector<std::string> args) {
    int rc = RunProcess(args, tmp_ + "/curl.log");
    return rc == 0 ? "" : "curl exited with " + std::to_string(rc) + " (see " + tmp_ + "/curl.log)";
  }

  std::string CurlBig(const std::string& scheme, bool ranges) {
    std::vector<std::string> a = CurlBase(scheme);
    if (!ranges) {
      a.insert(a.end(), {"-o", out_ + "/big.bin", base_ + "big.bin"});
      return RunCurl(a);
    }
    // curl cannot write ranges into one file: parts go to separate files.
    std::string cfg = tmp_ + "/curl-ranges.cfg";
    {
      std::ofstream f(cfg);
      uint64_t size = c_.big_mib * kMiB;
      for (uint64_t off = 0, k = 0; off < size; off += kPartSize, ++k) {
        uint64_t last = std::min(size, off + kPartSize) - 1;
        f << "url = \"" << base_ << "big.bin\"\nrange = \"" << off << "-" << last
          << "\"\noutput = \"" << out_ << "/big.part" << k << "\"\n";
      }
    }
    a.insert(a.end(), {"--parallel", "--parallel-max", std::to_string(c_.concurrency),
                       "--config", cfg});
    return RunCurl(a);
  }

  std::string CurlMany(const std::string& scheme) {
    std::string cfg = tmp_ + "/curl-many.cfg";
    {
      std::ofstream f(cfg);
      for (int i = 0; i < c_.objects; ++i) {
        f << "url = \"" << base_ << ObjName(i) << "\"\noutput = \"" << out_ << "/" << ObjName(i)
          << "\"\n";
      }
    }
    std::vector<std::string> a = CurlBase(scheme);
    a.insert(a.end(), {"--parallel", "--parallel-max", std::to_string(c_.concurrency),
                       "--config", cfg});
    return RunCurl(a);
  }

  static double MedianMBps(const Job& job) {
    std::vector<double> v;
    for (const Sample& s : job.runs) v.push_back(job.bytes / 1e6 / s.seconds);
    return Median(v);
  }
  static double MedianCpuPerGB(const Job& job) {
    std::vector<double> v;
    for (const Sample& s : job.runs) v.push_back(s.cpu / (job.bytes / 1e9));
    return Median(v);
  }

  void PrintTable(const std::vector<Row>& rows) const {
    std::printf("\nSummary (medians of %d runs; ratio = Sluice MB/s / curl MB/s; CPU = user+sys "
                "of the client process(es) per GB)\n", c_.runs);
    std::printf("%-44s %11s %9s %6s %15s %13s\n", "case", "Sluice MB/s", "curl MB/s", "ratio",
                "Sluice CPU s/GB", "curl CPU s/GB");
    for (const Row& r : rows) {
      double a = MedianMBps(r.sluice), b = MedianMBps(r.curl);
      std::printf("%-44s %11.0f %9.0f %6.2f %15.3f %13.3f\n", r.name.c_str(), a, b, a / b,
                  MedianCpuPerGB(r.sluice), MedianCpuPerGB(r.curl));
    }
    std::fflush(stdout);
  }

  void Print(const std::string& scheme, const Job& job) const {
    std::vector<double> mbps, cpu_gb, wall;
    std::string runs;
    for (const Sample& s : job.runs) {
      mbps.push_back(job.bytes / 1e6 / s.seconds);
      cpu_gb.push_back(s.cpu / (job.bytes / 1e9));
      wall.push_back(s.seconds);
      char b[32];
      std::snprintf(b, sizeof(b), " %.0f", mbps.back());
      runs += b;
    }
    std::printf("%-6s %-12s %-24s %9.0f %9.3f %9.2f %s\n", scheme.c_str(), job.workload.c_str(),
                job.client.c_str(), Median(mbps), Median(cpu_gb), Median(wall), runs.c_str());
    std::fflush(stdout);
  }

  Config c_;
  std::string tmp_, out_, base_;
  Nginx nginx_;
  EventLoop loop_;
  std::unique_ptr<HttpClient> client_;
};

bool ParseArgs(int argc, char** argv, Config* c) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    size_t eq = a.find('=');
    if (a.rfind("--", 0) != 0 || eq == std::string::npos) return false;
    std::string key = a.substr(2, eq - 2), v = a.substr(eq + 1);
    long n = std::atol(v.c_str());
    if (key == "dir") {
      c->dir = v;
    } else if (key == "schemes") {
      c->schemes.clear();
      for (size_t p = 0; p <= v.size();) {
        size_t q = std::min(v.find(',', p), v.size());
        std::string s = v.substr(p, q - p);
        if (s != "http" && s != "https") return false;
        c->schemes.push_back(s);
        p = q + 1;
      }
    } else if (key == "only") {
      if (v != "sluice" && v != "curl") return false;
      c->only = v;
    } else if (key == "warmup") {
      c->warmup = static_cast<int>(std::clamp(n, 0L, 10L));
    } else if (key == "settle") {
      c->settle_s = static_cast<int>(std::clamp(n, 0L, 60L));
    } else if (n <= 0) {
      return false;
    } else if (key == "big-mib") {
      c->big_mib = static_cast<uint64_t>(n);
    } else if (key == "objects") {
      c->objects = static_cast<int>(std::min(n, 100000L));
    } else if (key == "object-mib") {
      c->object_mib = static_cast<uint64_t>(n);
    } else if (key == "concurrency") {
      c->concurrency = static_cast<int>(std::min(n, 256L));
    } else if (key == "runs") {
      c->runs = static_cast<int>(std::min(n, 100L));
    } else {
      return false;
    }
  }
  return true;
}

int Run(int argc, char** argv) {
  Config c;
  if (!ParseArgs(argc, argv, &c)) {
    std::fprintf(stderr,
                 "usage: http_bench [--dir=/tmp] [--big-mib=1024] [--objects=1000] "
                 "[--object-mib=4] [--concurrency=8] [--runs=3] [--schemes=http,https] "
                 "[--warmup=1] [--only=sluice|curl] [--settle=3]\n");
    return 2;
  }
  std::string tmpl = c.dir + "/sluice-bench-http-XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) {
    std::fprintf(stderr, "http_bench: mkdtemp %s: %s\n", tmpl.c_str(), std::strerror(errno));
    return 1;
  }
  int rc;
  {
    Bench bench(c, tmpl);
    rc = bench.Main();
  }  // nginx stopped, loop shut down
  RemoveTree(tmpl);
  return rc;
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) { return sluice::Run(argc, argv); }
