#include "stores/credentials/credential_program.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string_view>

extern char** environ;

namespace sluice {
namespace {

std::string_view VariableName(std::string_view entry) {
  return entry.substr(0, entry.find('='));
}

}  // namespace

Result<std::string> RunCredentialProgram(const std::vector<std::string>& argv,
                                         const std::vector<std::string>& extra_env,
                                         std::optional<int64_t> timeout_ms) {
  if (argv.empty()) return InvalidArgumentError("no program to run");
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

  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return IoError(std::string("pipe: ") + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  pid_t pid = 0;
  int rc = ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    return PermissionDeniedError("cannot run '" + argv[0] + "': " + std::strerror(rc));
  }
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms.value_or(0));
  std::string out;
  bool too_long = false, timed_out = false;
  char buf[4096];
  for (;;) {
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
    pollfd p{fds[0], POLLIN, 0};
    int ready = ::poll(&p, 1, wait_ms);
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;  // EINTR, or the deadline (checked above)
    ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (out.size() + static_cast<size_t>(n) > kMaxCredentialProgramOutput) {
      too_long = true;  // keep draining so the child is not blocked on a full pipe
      continue;
    }
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
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
