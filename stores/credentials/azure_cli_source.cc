// The login-program sources: the token of the account `az login`
// (`Connect-AzAccount`, `azd auth login`) signed in, as azure-identity's
// AzureCliCredential (AzurePowerShellCredential, AzureDeveloperCliCredential)
// asks the program for it.
#include <string>
#include <vector>

#include "formats/json/py_json.h"
#include "stores/common/store_keys.h"
#include "stores/credentials/azure_identity_sources.h"
#include "stores/credentials/azure_token.h"
#include "stores/credentials/credential_program.h"
#include "stores/signing/digest.h"

namespace sluice {
namespace {

// azure-identity's default process_timeout (every program).
constexpr int64_t kAzureCliTimeoutMs = 10000;

class AzureCliSource final : public CredentialSource {
 public:
  std::string name() const override { return "Azure CLI"; }

  Result<Credential> Fetch(int64_t now) override {
    SLUICE_ASSIGN_OR_RETURN(const std::string program, FindLoginProgram("SLUICE_AZURE_CLI", "az"));
    const std::vector<std::string> argv = {program,  "account",    "get-access-token",
                                           "--output", "json",       "--resource",
                                           std::string(kAzureStorageResource)};
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

// What pwsh runs: Az.Accounts 2.2.0 or later, else the marker line (the
// source then does not apply); the storage token of the signed-in account as
// one line "azsdk%<token>%<unix expiry>" (the output azure-identity reads).
// Az.Accounts 2.17 to 4.x give the token as plain text unless asked for a
// SecureString; 5.0 and later always give one: either is turned to text.
// Ours, doing what azure-identity's script does; no tenant, as
// DefaultAzureCredential gives none.
constexpr std::string_view kNoAzAccountsMarker = "NO_AZ_ACCOUNT_MODULE";

std::string PowerShellTokenScript() {
  std::string script;
  script += "$ErrorActionPreference = 'Stop'\n";
  script += "$accounts = Import-Module -Name Az.Accounts -MinimumVersion '2.2.0' -PassThru "
            "-ErrorAction SilentlyContinue\n";
  script += "if (-not $accounts) { Write-Output '" + std::string(kNoAzAccountsMarker) +
            "'; exit 0 }\n";
  script += "$request = @{ ResourceUrl = '" + std::string(kAzureStorageResource) +
            "'; WarningAction = 'Ignore' }\n";
  script += "if ($accounts.Version -ge [version]'2.17.0' -and $accounts.Version -lt "
            "[version]'5.0.0') { $request.AsSecureString = $true }\n";
  script += "$token = Get-AzAccessToken @request\n";
  script += "$value = $token.Token\n";
  script += "if ($value -is [System.Security.SecureString]) { $value = "
            "[System.Net.NetworkCredential]::new('', $value).Password }\n";
  script += "Write-Output (\"`nazsdk%{0}%{1}`n\" -f $value, "
            "$token.ExpiresOn.ToUnixTimeSeconds())\n";
  return script;
}

// -EncodedCommand takes the script as base64 of its UTF-16LE bytes (the
// script is ASCII).
std::string EncodedPowerShellCommand(const std::string& script) {
  std::string utf16;
  utf16.reserve(script.size() * 2);
  for (char ch : script) {
    utf16.push_back(ch);
    utf16.push_back('\0');
  }
  return Base64Encode(utf16);
}

class AzurePowerShellSource final : public CredentialSource {
 public:
  std::string name() const override { return "Azure PowerShell"; }

  Result<Credential> Fetch(int64_t now) override {
    SLUICE_ASSIGN_OR_RETURN(const std::string program,
                            FindLoginProgram("SLUICE_AZURE_POWERSHELL", "pwsh"));
    const std::vector<std::string> argv = {program, "-NoProfile", "-NonInteractive",
                                           "-EncodedCommand",
                                           EncodedPowerShellCommand(PowerShellTokenScript())};
    const std::string what = "'" + program + " Get-AzAccessToken'";
    std::string errors;
    Result<std::string> out = RunCredentialProgram(argv, {}, kAzureCliTimeoutMs, &errors);
    // Inside DefaultAzureCredential every failure of this source is
    // "unavailable" (the chain goes on), so each is kNotFound here, saying why.
    if (!out.ok()) {
      if (errors.find("Run Connect-AzAccount to login") != std::string::npos) {
        return NotFoundError("not logged in: run 'Connect-AzAccount'");
      }
      if (errors.find("AuthorizationManager check failed") != std::string::npos) {
        return NotFoundError("PowerShell's execution policy prevented running Get-AzAccessToken");
      }
      const std::string line = FirstErrorLine(errors);
      return NotFoundError(what + ": " + out.status().message() +
                           (line.empty() ? "" : ": " + line));
    }
    if (out->find(kNoAzAccountsMarker) != std::string::npos) {
      return NotFoundError("the Az.Accounts module (2.2.0 or later) is not installed");
    }
    SLUICE_ASSIGN_OR_RETURN(Credential c, ParseAzurePowerShellToken(*out, now, what));
    c.source = "Azure PowerShell (" + program + " Get-AzAccessToken)";
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

std::unique_ptr<CredentialSource> MakeAzurePowerShellSource() {
  return std::make_unique<AzurePowerShellSource>();
}

std::unique_ptr<CredentialSource> MakeAzureDeveloperCliSource() {
  return std::make_unique<AzureDeveloperCliSource>();
}

}  // namespace sluice
