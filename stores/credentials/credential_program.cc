#include "stores/credentials/credential_program.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "stores/common/store_keys.h"

extern char** environ;

namespace sluice {
namespace {

std::string_view VariableName(std::string_view entry) {
  return entry.substr(0, entry.find('='));
}

bool IsExecutableFile(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// One pipe the parent reads: into `text`, at most `limit` bytes kept.
struct Capture {
  int fd = -1;
  std::string* text = nullptr;
  size_t limit = 0;
  bool overflowed = false;
};

}  // namespace

std::optional<std::string> FindProgram(const std::string& name) {
  if (name.empty()) return std::nullopt;
  if (name.find('/') != std::string::npos) {
    if (IsExecutableFile(name)) return name;
    return std::nullopt;
  }
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "/bin:/usr/bin";
  for (;;) {
    const size_t colon = dirs.find(':');
    std::string dir(dirs.substr(0, colon));
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    if (IsExecutableFile(candidate)) return candidate;
    if (colon == std::string_view::npos) return std::nullopt;
    dirs.remove_prefix(colon + 1);
  }
}

Result<std::string> FindLoginProgram(const char* variable, const char* name) {
  const std::string program = GetEnv(variable).value_or(name);
  if (FindProgram(program)) return program;
  return NotFoundError(program.find('/') == std::string::npos
                           ? "'" + program + "' not found on PATH"
                           : "'" + program + "' (" + variable + ") not found");
}

std::string FirstErrorLine(const std::string& text) {
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(begin, end - begin);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (!line.empty()) return line.size() > 300 ? line.substr(0, 300) + "..." : line;
    begin = end + 1;
  }
  return "";
}

Result<std::string> RunCredentialProgram(const std::vector<std::string>& argv,
                                         const std::vector<std::string>& extra_env,
                                         std::optional<int64_t> timeout_ms,
                                         std::string* stderr_text) {
  if (argv.empty()) return InvalidArgumentError("no program to run");
  const std::optional<std::string> program = FindProgram(argv[0]);
  if (!program) return PermissionDeniedError("cannot run '" + argv[0] + "': " + std::strerror(ENOENT));
  std::vector<std::string> env_strings;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view entry(*e);
    bool replaced = false;
    for (const std::string& add : extra_env) replaced |= VariableName(add) == VariableName(entry);
    if (!replaced) env_strings.emplace_back(entry);
  }
  env_strings.insert(env_strings.end(), extra_env.begin(), extra_env.end());
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  int out_pipe[2], err_pipe[2] = {-1, -1};
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) return IoError(std::string("pipe: ") + std::strerror(errno));
  if (stderr_text != nullptr && ::pipe2(err_pipe, O_CLOEXEC) != 0) {
    const int err = errno;
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    return IoError(std::string("pipe: ") + std::strerror(err));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  if (stderr_text != nullptr) posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  pid_t pid = 0;
  int rc = ::posix_spawn(&pid, program->c_str(), &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(out_pipe[1]);
  if (stderr_text != nullptr) ::close(err_pipe[1]);
  std::string out;
  std::vector<Capture> captures = {{out_pipe[0], &out, kMaxCredentialProgramOutput}};
  if (stderr_text != nullptr) {
    stderr_text->clear();
    captures.push_back({err_pipe[0], stderr_text, kMaxCredentialProgramStderr});
  }
  auto close_all = [&] {
    for (Capture& c : captures) {
      if (c.fd >= 0) ::close(c.fd);
      c.fd = -1;
    }
  };
  if (rc != 0) {
    close_all();
    return PermissionDeniedError("cannot run '" + argv[0] + "': " + std::strerror(rc));
  }
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms.value_or(0));
  bool timed_out = false;
  char buf[4096];
  for (;;) {
    std::vector<pollfd> polls;
    for (const Capture& c : captures) {
      if (c.fd >= 0) polls.push_back({c.fd, POLLIN, 0});
    }
    if (polls.empty()) break;  // both ends closed: the program is done writing
    int wait_ms = -1;
    if (timeout_ms) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        timed_out = true;
        break;
      }
      wait_ms = static_cast<int>(left.count());
    }
    int ready = ::poll(polls.data(), polls.size(), wait_ms);
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;  // EINTR, or the deadline (checked above)
    for (const pollfd& p : polls) {
      if (p.revents == 0) continue;
      for (Capture& c : captures) {
        if (c.fd != p.fd) continue;
        ssize_t n = ::read(c.fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
          ::close(c.fd);
          c.fd = -1;
        } else if (c.text->size() + static_cast<size_t>(n) > c.limit) {
          c.overflowed = true;  // keep draining so the child is not blocked on a full pipe
        } else {
          c.text->append(buf, static_cast<size_t>(n));
        }
      }
    }
  }
  const bool too_long = captures[0].overflowed;
  close_all();
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    return DeadlineExceededError("'" + argv[0] + "' did not finish within " +
                                 std::to_string(*timeout_ms) + " ms");
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return PermissionDeniedError("'" + argv[0] + "' " +
                                 (WIFEXITED(status)
                                      ? "exited with status " + std::to_string(WEXITSTATUS(status))
                                      : std::string("was killed by a signal")));
  }
  if (too_long) return PermissionDeniedError("'" + argv[0] + "' wrote more than 1 MiB");
  return out;
}

}  // namespace sluice
