#include "tests/engine/cache/cache_test_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <thread>

#include "base/file.h"

namespace sluice::cache_test {
namespace {

template <typename F>
void Walk(const std::string& root, const std::string& rel, const F& visit) {
  std::string dir = rel.empty() ? root : root + "/" + rel;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  std::vector<std::string> names;
  while (struct dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n == "." || n == "..") continue;
    names.push_back(n);
  }
  ::closedir(d);
  for (const std::string& n : names) {
    std::string r = rel.empty() ? n : rel + "/" + n;
    struct stat st;
    if (::lstat((root + "/" + r).c_str(), &st) != 0) continue;  // vanished meanwhile
    if (S_ISDIR(st.st_mode)) {
      Walk(root, r, visit);
    } else if (S_ISREG(st.st_mode)) {
      visit(r, st);
    }
  }
}

}  // namespace

std::string ShardBytes(size_t index, uint64_t bytes) {
  std::string out(bytes, '\0');
  for (uint64_t k = 0; k < bytes; ++k) {
    out[k] = static_cast<char>((index * 131 + k * 7 + (k >> 8)) & 0xff);
  }
  return out;
}

std::vector<ShardSpec> MakeSpecs(const std::vector<uint64_t>& sizes) {
  std::vector<ShardSpec> specs;
  for (size_t i = 0; i < sizes.size(); ++i) specs.push_back({"s" + std::to_string(i), sizes[i]});
  return specs;
}

std::string OpenError(const std::string& root, std::vector<ShardSpec> specs) {
  CacheOptions o;
  o.root = root;
  auto c = ShardCache::Open(o, std::move(specs));
  return c.ok() ? std::string("ok") : c.status().ToString();
}

std::string Slurp(const std::string& path) {
  auto data = ReadFile(path);
  return data.ok() ? std::move(data).value() : "<error: " + data.status().ToString() + ">";
}

void WriteWhole(const std::string& path, const std::string& data) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    std::perror(path.c_str());
    return;
  }
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
}

ShardCache::FetchFn LoggingFetch(size_t index, uint64_t bytes, std::string log_path,
                                 std::chrono::microseconds delay) {
  return [index, bytes, log_path, delay](const std::string& tmp) -> Status {
    int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return IoError("cannot open log " + log_path);
    std::string line = std::to_string(index) + "\n";
    ssize_t n = ::write(fd, line.data(), line.size());
    ::close(fd);
    if (n != static_cast<ssize_t>(line.size())) return IoError("cannot append to " + log_path);
    if (delay.count() > 0) std::this_thread::sleep_for(delay);
    WriteWhole(tmp, ShardBytes(index, bytes));
    return Status::Ok();
  };
}

std::vector<int> CountFetches(const std::string& log_path, size_t count) {
  std::vector<int> counts(count, 0);
  auto text = ReadFile(log_path);
  if (!text.ok()) return counts;
  size_t start = 0;
  while (start < text->size()) {
    size_t end = text->find('\n', start);
    if (end == std::string::npos) break;
    size_t i = std::stoul(text->substr(start, end - start));
    if (i < count) ++counts[i];
    start = end + 1;
  }
  return counts;
}

std::vector<std::string> ListFiles(const std::string& root) {
  std::vector<std::string> out;
  Walk(root, "", [&](const std::string& rel, const struct stat&) { out.push_back(rel); });
  std::sort(out.begin(), out.end());
  return out;
}

uint64_t FolderBytes(const std::string& root) {
  std::set<ino_t> seen;
  uint64_t total = 0;
  Walk(root, "", [&](const std::string&, const struct stat& st) {
    if (seen.insert(st.st_ino).second) total += static_cast<uint64_t>(st.st_size);
  });
  return total;
}

TempOwner GoneOwner() {
  TempOwner me = ThisProcessTempOwner();
  return {me.pid, me.start + 1};
}

pid_t Spawn(const std::function<int()>& body) {
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid == 0) {
    int code = body();
    std::fflush(nullptr);
    ::_exit(code);
  }
  return pid;
}

int WaitChild(pid_t pid, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int status = 0;
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) {
      if (WIFEXITED(status)) return WEXITSTATUS(status);
      if (WIFSIGNALED(status)) return -WTERMSIG(status);
      return -999;
    }
    if (r < 0) return -998;
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return -1000;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace sluice::cache_test
