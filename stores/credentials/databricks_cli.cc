#include "stores/credentials/databricks_cli.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "base/file.h"
#include "base/iso8601.h"
#include "formats/json/py_json.h"
#include "stores/credentials/credential_program.h"
#include "stores/signing/jwt_rs256.h"

namespace sluice {
namespace {

// The SDK's bounds: its version probe's timeout; the size under which a
// file may be the legacy Python CLI's script, and that script's marker.
constexpr int64_t kDatabricksCliVersionTimeoutMs = 5000;
constexpr uint64_t kDatabricksCliLegacyMaxSize = uint64_t{1} << 20;
constexpr char kDatabricksCliLegacyMarker[] = "from databricks_cli.cli import ";
// The SDK waits for `auth token` for ever; a refresh is one HTTP request.
constexpr int64_t kDatabricksCliTokenTimeoutMs = 60000;
// Caps a hostile expiry; the CLI's tokens live an hour.
constexpr int64_t kDatabricksCliMaxLifetimeS = int64_t{366} * 24 * 3600;

using CliVersion = std::tuple<int64_t, int64_t, int64_t>;
constexpr CliVersion kCliVersionUnknown{-1, -1, -1};
constexpr CliVersion kCliVersionForProfile{0, 207, 1};
constexpr CliVersion kCliVersionForForceRefresh{0, 296, 0};

bool IsLegacyDatabricksCli(const std::string& path) {
  std::error_code ec;
  const uint64_t size = std::filesystem::file_size(path, ec);
  if (ec || size >= kDatabricksCliLegacyMaxSize) return false;
  auto text = ReadFile(path, kDatabricksCliLegacyMaxSize);
  return text.ok() && text->find(kDatabricksCliLegacyMarker) != std::string::npos;
}

// The CLI to run, as the SDK's _find_executable looks for it: `name` itself
// when it holds a '/', else the first file of that name on PATH that is not
// the legacy CLI. kNotFound saying why.
Result<std::string> FindDatabricksCli(const std::string& name, const std::string& origin) {
  bool legacy = false;
  auto usable = [&legacy](const std::string& candidate) {
    if (!FindProgram(candidate)) return false;
    if (IsLegacyDatabricksCli(candidate)) {
      legacy = true;
      return false;
    }
    return true;
  };
  if (name.find('/') != std::string::npos) {
    if (usable(name)) return name;
  } else {
    const char* path = std::getenv("PATH");
    std::string_view dirs = path != nullptr ? path : "";
    while (!dirs.empty()) {
      const size_t colon = dirs.find(':');
      const std::string dir(dirs.substr(0, colon));
      const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
      if (usable(candidate)) return candidate;
      if (colon == std::string_view::npos) break;
      dirs.remove_prefix(colon + 1);
    }
  }
  const std::string where = name.find('/') == std::string::npos ? " on PATH" : "";
  if (legacy) return NotFoundError("Databricks CLI version <0.100.0 detected ('" + name + "'" + where + origin + ")");
  return NotFoundError("'" + name + "' not found" + where + origin + " (the Databricks CLI is not installed)");
}

// `databricks version --output json`'s Major, Minor and Patch; unknown when
// the CLI fails or prints something else (every feature then off).
CliVersion ProbeDatabricksCliVersion(const std::string& cli) {
  std::string errors;  // kept from the user's terminal
  auto out = RunCredentialProgram({cli, "version", "--output", "json"}, {}, kDatabricksCliVersionTimeoutMs, &errors);
  if (!out.ok()) return kCliVersionUnknown;
  auto json = ParsePyJson(*out);
  if (!json.ok()) return kCliVersionUnknown;
  int64_t parts[3];
  const char* names[3] = {"Major", "Minor", "Patch"};
  for (int i = 0; i < 3; ++i) {
    const JsonValue* m = JsonMember(*json, names[i]);
    const auto* n = m != nullptr ? std::get_if<int64_t>(&m->v) : nullptr;
    if (n == nullptr) return kCliVersionUnknown;
    parts[i] = *n;
  }
  return {parts[0], parts[1], parts[2]};
}

// The "scope" claim of a JWT as a set (a string of space-separated scopes
// or a list), offline_access left out; nullopt when there is none to check.
std::optional<std::set<std::string>> DatabricksCliTokenScopes(const std::string& token) {
  const std::optional<std::string> text = JwtClaimsText(token);
  if (!text) return std::nullopt;
  auto claims = ParsePyJson(*text);
  const JsonValue* scope = claims.ok() ? JsonMember(*claims, "scope") : nullptr;
  if (scope == nullptr) return std::nullopt;
  std::set<std::string> out;
  if (const auto* s = std::get_if<std::string>(&scope->v)) {
    out = SplitDatabricksScopes(*s);
  } else if (const auto* list = std::get_if<JsonValue::Array>(&scope->v)) {
    for (const JsonValue& v : *list) {
      if (const auto* one = std::get_if<std::string>(&v.v)) out.insert(*one);
    }
  } else {
    return std::nullopt;
  }
  out.erase("offline_access");
  return out;
}

std::string JoinDatabricksCliScopes(const std::set<std::string>& scopes) {
  std::string out;
  for (const std::string& s : scopes) out += (out.empty() ? "" : ", ") + s;
  return "[" + out + "]";
}

class DatabricksCliSource final : public CredentialSource {
 public:
  explicit DatabricksCliSource(DatabricksConfig config) : config_(std::move(config)) {}
  std::string name() const override { return "databricks-cli"; }

  Result<Credential> Fetch(int64_t now) override {
    const bool chosen = config_.auth_type == "databricks-cli";
    if (config_.host.empty()) return NotFoundError("no host (DATABRICKS_HOST)");
    if (argv_.empty()) {
      const std::string& configured = config_.databricks_cli_path;
      const std::string origin =
          configured.empty() ? "" : " (from " + DatabricksSettingOrigin(config_, "databricks_cli_path") + ")";
      SLUICE_ASSIGN_OR_RETURN(const std::string cli,
                              FindDatabricksCli(configured.empty() ? "databricks" : configured, origin));
      const CliVersion version = ProbeDatabricksCliVersion(cli);
      argv_ = {cli, "auth", "token"};
      if (!config_.profile.empty() && version >= kCliVersionForProfile) {
        argv_.insert(argv_.end(), {"--profile", config_.profile});
      } else {
        argv_.insert(argv_.end(), {"--host", config_.host});
      }
      if (version >= kCliVersionForForceRefresh) argv_.push_back("--force-refresh");
    }
    std::string command;
    for (const std::string& a : argv_) command += (command.empty() ? "" : " ") + a;
    const std::string what = "'" + command + "'";
    std::string errors;
    auto out = RunCredentialProgram(argv_, {}, kDatabricksCliTokenTimeoutMs, &errors);
    if (!out.ok()) {
      const std::string line = FirstErrorLine(errors);
      const std::string why = what + ": " + out.status().message() + (line.empty() ? "" : ": " + line);
      // As the SDK: a host where the CLI has no OAuth login is passed over.
      if (errors.find("databricks OAuth is not") != std::string::npos) return NotFoundError(why);
      return PermissionDeniedError("cannot get access token: " + why);
    }
    // As the SDK, output it cannot read passes the strategy over unless
    // DATABRICKS_AUTH_TYPE chose it; the output is never quoted.
    const auto unreadable = [&](const std::string& why) -> Status {
      const std::string text = "cannot unmarshal CLI result of " + what + ": " + why;
      return chosen ? PermissionDeniedError(text) : NotFoundError(text);
    };
    auto json = ParsePyJson(*out);
    if (!json.ok() || !std::holds_alternative<JsonValue::Object>(json->v)) return unreadable("no JSON object");
    Credential cred;
    cred.bearer = JsonStringMember(*json, "access_token");
    if (cred.bearer.empty()) return PermissionDeniedError(what + " printed no access_token");
    const std::string type = JsonStringMember(*json, "token_type");
    if (type != "Bearer" && type != "bearer") {
      return PermissionDeniedError(what + " printed a token of type '" + type + "'; Sluice sends Bearer tokens only");
    }
    const std::optional<int64_t> expiry = ParseDatabricksExpiry(JsonStringMember(*json, "expiry"));
    if (!expiry) return unreadable("no readable expiry");
    if (!config_.scopes.empty()) {
      if (auto got = DatabricksCliTokenScopes(cred.bearer)) {
        std::set<std::string> want = SplitDatabricksScopes(config_.scopes);
        // offline_access grants no API permission: the SDK ignores it.
        want.erase("offline_access");
        if (*got != want) {
          const std::string text = "Token issued by Databricks CLI has scopes " + JoinDatabricksCliScopes(*got) +
                                   " which do not match the configured scopes " + JoinDatabricksCliScopes(want) +
                                   "; run `databricks auth login` with the --scopes flag";
          return chosen ? PermissionDeniedError(text) : NotFoundError(text);
        }
      }
    }
    cred.expires_at = std::clamp<int64_t>(*expiry, now, now + kDatabricksCliMaxLifetimeS);
    cred.source = "Databricks CLI login (" + command + ")";
    return cred;
  }

 private:
  DatabricksConfig config_;
  std::vector<std::string> argv_;  // found and probed at the first fetch
};

}  // namespace

std::optional<int64_t> ParseDatabricksExpiry(const std::string& text) {
  auto t = ParseIso8601(text, {.offsets = true, .local_when_bare = true});
  if (!t.ok()) return std::nullopt;
  return *t;
}

std::unique_ptr<CredentialSource> MakeDatabricksCliSource(const DatabricksConfig& config) {
  return std::make_unique<DatabricksCliSource>(config);
}

}  // namespace sluice
