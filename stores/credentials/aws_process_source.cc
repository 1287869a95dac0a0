#include "stores/credentials/aws_credential_documents.h"
#include "stores/credentials/aws_sources.h"
#include "stores/credentials/credential_program.h"

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
    SLUICE_ASSIGN_OR_RETURN(std::string out, RunCredentialProgram(*argv));
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
