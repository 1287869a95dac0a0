#include "stores/credentials/databricks_model_serving.h"

#include <string>
#include <utility>
#include <variant>

#include "base/file.h"
#include "formats/json/py_json.h"
#include "stores/common/store_keys.h"

namespace sluice {
namespace {

// The SDK keeps the file's token this long before reading it again.
constexpr int64_t kModelServingTokenRecheckS = 300;
// The file holds one token of a few KiB; this only caps a hostile file.
constexpr uint64_t kMaxModelServingTokenFile = uint64_t{1} << 20;

bool InModelServing() {
  // As the SDK: the first of the two variables that is set and not empty.
  std::string flag = GetEnv("IS_IN_DB_MODEL_SERVING_ENV").value_or("");
  if (flag.empty()) flag = GetEnv("IS_IN_DATABRICKS_MODEL_SERVING_ENV").value_or("");
  return flag == "true";
}

class DatabricksModelServingSource final : public CredentialSource {
 public:
  explicit DatabricksModelServingSource(DatabricksConfig config) : config_(std::move(config)) {}
  std::string name() const override { return "model-serving"; }

  Result<Credential> Fetch(int64_t now) override {
    if (!InModelServing()) {
      return NotFoundError("not in Databricks Model Serving (IS_IN_DB_MODEL_SERVING_ENV is not \"true\")");
    }
    const std::string path = DatabricksModelServingTokenPath();
    if (!FileExists(path)) return NotFoundError("in Model Serving, but there is no token file " + path);
    auto text = ReadFile(path, kMaxModelServingTokenFile);
    if (!text.ok()) return NotFoundError("cannot read Model Serving's token file: " + text.status().message());
    auto json = ParsePyJson(*text);
    const JsonValue* tokens = json.ok() ? JsonMember(*json, "OAUTH_TOKEN") : nullptr;
    const auto* array = tokens != nullptr ? std::get_if<JsonValue::Array>(&tokens->v) : nullptr;
    const JsonValue* first = array != nullptr && !array->empty() ? &array->front() : nullptr;
    std::string token = first != nullptr ? JsonStringMember(*first, "oauthTokenValue") : "";
    if (token.empty()) {
      return NotFoundError("Model Serving's token file " + path +
                           " holds no OAUTH_TOKEN[0].oauthTokenValue");
    }
    if (config_.host.empty()) return NotFoundError("in Model Serving, but no host (DATABRICKS_MODEL_SERVING_HOST_URL)");
    Credential out;
    out.source = "Databricks Model Serving's token (" + path + ")";
    out.bearer = std::move(token);
    out.expires_at = now + kModelServingTokenRecheckS;
    return out;
  }

 private:
  DatabricksConfig config_;
};

}  // namespace

std::string DatabricksModelServingTokenPath() {
  std::string dir = GetEnv("SERVING_CREDENTIALS_DIR").value_or("");
  const auto blank = [](char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; };
  while (!dir.empty() && blank(dir.back())) dir.pop_back();
  while (!dir.empty() && blank(dir.front())) dir.erase(0, 1);
  if (dir.empty()) return "/var/credentials-secret/model-dependencies-oauth-token";
  return dir + (dir.back() == '/' ? "" : "/") + "model-dependencies-oauth-token";
}

std::unique_ptr<CredentialSource> MakeDatabricksModelServingSource(const DatabricksConfig& config) {
  return std::make_unique<DatabricksModelServingSource>(config);
}

void FillDatabricksModelServingHost(DatabricksConfig* config) {
  if (!config->host.empty() || !InModelServing() || !FileExists(DatabricksModelServingTokenPath())) return;
  for (const char* name : {"DATABRICKS_MODEL_SERVING_HOST_URL", "DB_MODEL_SERVING_HOST_URL"}) {
    std::string host = GetEnv(name).value_or("");
    while (!host.empty() && host.back() == '/') host.pop_back();
    if (host.empty()) continue;
    config->host = host;
    config->origin["host"] = name;
    return;
  }
}

}  // namespace sluice
