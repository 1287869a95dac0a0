#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "stores/credentials/aws_credential_documents.h"
#include "stores/credentials/aws_sources.h"

extern char** environ;

namespace sluice {

Result<std::vector<std::string>> SplitCommandLine(std::string_view line) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else if (c == '\'') {
      size_t end = line.find('\'', i + 1);
      if (end == std::string_view::npos) return InvalidArgumentError("unterminated ' quote");
      word.append(line.substr(i + 1, end - i - 1));
      in_word = true;
      i = end;
    } else if (c == '"') {
      size_t j = i + 1;
      for (; j < line.size() && line[j] != '"'; ++j) {
        // Inside double quotes a backslash escapes only $ ` " \ and newline.
        if (line[j] == '\\' && j + 1 < line.size() &&
            std::string_view("$`\"\\\n").find(line[j + 1]) != std::string_view::npos) {
          ++j;
        }
        word += line[j];
      }
      if (j >= line.size()) return InvalidArgumentError("unterminated \" quote");
      in_word = true;
      i = j;
    } else if (c == '\\') {
      if (i + 1 < line.size()) word += line[++i];
      in_word = true;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

namespace {

constexpr size_t kMaxProcessOutput = size_t{1} << 20;

// Runs argv, returns its stdout (up to kMaxProcessOutput) when it exits 0.
// stderr stays the caller's (the AWS CLI does the same: it may prompt).
Result<std::string> RunForOutput(const std::vector<std::string>& argv) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return IoError(std::string("pipe: ") + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int rc = ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    return PermissionDeniedError("cannot run '" + argv[0] + "': " + std::strerror(rc));
  }
  std::string out;
  bool too_long = false;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (out.size() + static_cast<size_t>(n) > kMaxProcessOutput) {
      too_long = true;  // keep draining so the child is not blocked on a full pipe
      continue;
    }
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
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

class AwsProcessSource final : public CredentialSource {
 public:
  explicit AwsProcessSource(AwsSettings settings) : settings_(std::move(settings)) {}

  std::string name() const override {
    return "credential_process (profile '" + settings_.profile() + "')";
  }

  Result<Credential> Fetch(int64_t /*now*/) override {
    const AwsProfileFiles& f = settings_.files;
    std::string command = f.ConfigValue(f.profile, "credential_process");
    if (command.empty()) {
      return NotFoundError("profile '" + f.profile + "' has no credential_process in " +
                           (f.config_path.empty() ? "(no config file)" : f.config_path));
    }
    auto argv = SplitCommandLine(command);
    if (!argv.ok() || argv->empty()) {
      return InvalidArgumentError(f.config_path + ": " +
                                  (argv.ok() ? "empty command" : argv.status().message()));
    }
    SLUICE_ASSIGN_OR_RETURN(std::string out, RunForOutput(*argv));
    SLUICE_ASSIGN_OR_RETURN(Credential credential,
                            ParseAwsCredentialJson(out, AwsCredentialJson::kProcess,
                                                   "the output of '" + (*argv)[0] + "'"));
    credential.source = name();
    return credential;
  }

 private:
  AwsSettings settings_;
};

}  // namespace

std::unique_ptr<CredentialSource> MakeAwsProcessSource(AwsSettings settings) {
  return std::make_unique<AwsProcessSource>(std::move(settings));
}

}  // namespace sluice
