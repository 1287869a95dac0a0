// The Azure CLI and Azure Developer CLI sources: the token of the account
// `az login` (`azd auth login`) signed in, as azure-identity's
// AzureCliCredential (AzureDeveloperCliCredential) asks the program for it.
#include <string>
#include <vector>

#include "formats/json/py_json.h"
#include "stores/common/store_keys.h"
#include "stores/credentials/azure_identity_sources.h"
#include "stores/credentials/azure_token.h"
#include "stores/credentials/credential_program.h"

namespace sluice {
namespace {

// azure-identity's default process_timeout (both programs).
constexpr int64_t kAzureCliTimeoutMs = 10000;

// The CLI takes a resource, not a scope: the scope without "/.default".
std::string StorageResource() {
  constexpr std::string_view kDefault = "/.default";
  std::string_view scope = kAzureStorageScope;
  if (scope.ends_with(kDefault)) scope.remove_suffix(kDefault.size());
  return std::string(scope);
}

class AzureCliSource final : public CredentialSource {
 public:
  std::string name() const override { return "Azure CLI"; }

  Result<Credential> Fetch(int64_t now) override {
    SLUICE_ASSIGN_OR_RETURN(const std::string program, FindLoginProgram("SLUICE_AZURE_CLI", "az"));
    const std::vector<std::string> argv = {program, "account", "get-access-token", "--output",
                                           "json", "--resource", StorageResource()};
    std::string errors;
    Result<std::string> out =
        RunCredentialProgram(argv, {"AZURE_CORE_NO_COLOR=true"}, kAzureCliTimeoutMs, &errors);
    if (!out.ok()) {
      // Signed out, or no subscription chosen: the CLI does not apply (as
      // DefaultAzureCredential moves on).
      if (errors.find("az login") != std::string::npos ||
          errors.find("az account set") != std::string::npos) {
        return NotFoundError("not logged in: run 'az login'");
      }
      const std::string line = FirstErrorLine(errors);
      return Status(out.status().code(),
                    "'" + program + " account get-access-token': " + out.status().message() +
                        (line.empty() ? "" : ": " + line));
    }
    SLUICE_ASSIGN_OR_RETURN(
        Credential c, ParseAzureCliToken(*out, now, "'" + program + " account get-access-token'"));
    c.source = "Azure CLI (" + program + " account get-access-token)";
    return c;
  }
};

// azd's error: the "error" (azd 1.23.7 and later) or else the console
// message's text of the JSON lines it writes to stderr; else the first line.
std::string AzdError(const std::string& errors) {
  std::string console;
  size_t begin = 0;
  while (begin < errors.size()) {
    size_t end = errors.find('\n', begin);
    if (end == std::string::npos) end = errors.size();
    auto line = ParsePyJson(std::string_view(errors).substr(begin, end - begin));
    begin = end + 1;
    if (!line.ok() || !std::holds_alternative<JsonValue::Object>(line->v)) continue;
    std::string error = JsonStringMember(*line, "error");
    if (!error.empty()) return FirstErrorLine(error);
    const JsonValue* data = JsonMember(*line, "data");
    if (console.empty() && data != nullptr) console = FirstErrorLine(JsonStringMember(*data, "message"));
  }
  return console.empty() ? FirstErrorLine(errors) : console;
}

class AzureDeveloperCliSource final : public CredentialSource {
 public:
  std::string name() const override { return "Azure Developer CLI"; }

  Result<Credential> Fetch(int64_t now) override {
    SLUICE_ASSIGN_OR_RETURN(const std::string program,
                            FindLoginProgram("SLUICE_AZURE_DEVELOPER_CLI", "azd"));
    const std::vector<std::string> argv = {program,  "auth",       "token", "--output", "json",
                                           "--no-prompt", "--scope", std::string(kAzureStorageScope)};
    const std::string what = "'" + program + " auth token'";
    std::string errors;
    Result<std::string> out =
        RunCredentialProgram(argv, {"NO_COLOR=true"}, kAzureCliTimeoutMs, &errors);
    if (!out.ok()) {
      // azure-identity: unavailable when signed out, unless Entra refused.
      if (errors.find("not logged in, run `azd auth login` to login") != std::string::npos &&
          errors.find("AADSTS") == std::string::npos) {
        return NotFoundError("not logged in: run 'azd auth login'");
      }
      const std::string line = AzdError(errors);
      return Status(out.status().code(),
                    what + ": " + out.status().message() + (line.empty() ? "" : ": " + line));
    }
    SLUICE_ASSIGN_OR_RETURN(Credential c, ParseAzureDeveloperCliToken(*out, now, what));
    c.source = "Azure Developer CLI (" + program + " auth token)";
    return c;
  }
};

}  // namespace

std::unique_ptr<CredentialSource> MakeAzureCliSource() {
  return std::make_unique<AzureCliSource>();
}

std::unique_ptr<CredentialSource> MakeAzureDeveloperCliSource() {
  return std::make_unique<AzureDeveloperCliSource>();
}

}  // namespace sluice
