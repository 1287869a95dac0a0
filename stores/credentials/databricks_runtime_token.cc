#include "stores/credentials/databricks_runtime_token.h"

#include <pthread.h>

#include <condition_variable>
#include <mutex>
#include <utility>

#include "stores/common/store_keys.h"
#include "stores/http/url.h"

namespace sluice {
namespace {

// The registered provider and the calls of it in flight. Held in a leaked
// object so that a call during exit never meets a destroyed mutex.
struct RuntimeTokenRegistry {
  std::mutex mu;
  std::condition_variable idle;
  std::shared_ptr<const DatabricksRuntimeTokenProvider> provider;
  int in_flight = 0;
  uint64_t generation = 0;
};

RuntimeTokenRegistry* const kRuntimeTokenRegistry = new RuntimeTokenRegistry();

// A child forked while another thread held the lock or was in a call has
// neither that thread nor its call: the lock is held across fork and the
// child starts with no call in flight.
[[maybe_unused]] const int kRuntimeTokenAtFork = pthread_atfork(
    [] { kRuntimeTokenRegistry->mu.lock(); }, [] { kRuntimeTokenRegistry->mu.unlock(); },
    [] {
      kRuntimeTokenRegistry->in_flight = 0;
      kRuntimeTokenRegistry->mu.unlock();
    });

RuntimeTokenRegistry& RuntimeTokenRegistryOfProcess() { return *kRuntimeTokenRegistry; }

bool InADatabricksRuntime() { return GetEnv("DATABRICKS_RUNTIME_VERSION").has_value(); }

// "scheme://authority" of an http(s) URL, "" for anything else.
std::string DatabricksHostKey(const std::string& url) {
  auto parsed = ParseUrl(url);
  if (!parsed.ok() || parsed->target != "/") return "";
  return parsed->scheme + "://" + parsed->Authority();
}

class DatabricksRuntimeSource final : public CredentialSource {
 public:
  DatabricksRuntimeSource(DatabricksConfig config, bool chosen)
      : config_(std::move(config)), chosen_(chosen) {}
  std::string name() const override { return "runtime"; }

  Result<Credential> Fetch(int64_t now) override {
    return AsChosenDatabricksStrategy("runtime", chosen_, FetchIn(now));
  }

 private:
  Result<Credential> FetchIn(int64_t now) {
    SLUICE_ASSIGN_OR_RETURN(DatabricksRuntimeToken token, FetchDatabricksRuntimeTokenFor(config_));
    Credential out;
    out.source = "the Databricks runtime's token for " + token.host;
    out.bearer = std::move(token.token);
    out.expires_at = token.expires_at ? *token.expires_at : now + kDatabricksRuntimeTokenRecheckS;
    return out;
  }

  DatabricksConfig config_;
  bool chosen_;
};

}  // namespace

void SetDatabricksRuntimeTokenProvider(DatabricksRuntimeTokenProvider provider) {
  RuntimeTokenRegistry& r = RuntimeTokenRegistryOfProcess();
  std::unique_lock<std::mutex> lock(r.mu);
  r.idle.wait(lock, [&] { return r.in_flight == 0; });
  r.provider = provider ? std::make_shared<const DatabricksRuntimeTokenProvider>(std::move(provider))
                        : nullptr;
  ++r.generation;
}

uint64_t DatabricksRuntimeTokenGeneration() {
  RuntimeTokenRegistry& r = RuntimeTokenRegistryOfProcess();
  std::lock_guard<std::mutex> lock(r.mu);
  return r.generation;
}

Result<DatabricksRuntimeToken> FetchDatabricksRuntimeToken() {
  RuntimeTokenRegistry& r = RuntimeTokenRegistryOfProcess();
  std::shared_ptr<const DatabricksRuntimeTokenProvider> provider;
  {
    std::unique_lock<std::mutex> lock(r.mu);
    // One call at a time: a binding's provider (Python's) need not be
    // reentrant.
    r.idle.wait(lock, [&] { return r.in_flight == 0; });
    provider = r.provider;
    if (!provider) {
      return NotFoundError(
          "no binding has handed Sluice the runtime's own token (it lives in the notebook's "
          "Python context, dbruntime, which the Python package reads; from C, "
          "sluice_set_databricks_runtime_token_provider); or set DATABRICKS_TOKEN or a service "
          "principal (DATABRICKS_CLIENT_ID and DATABRICKS_CLIENT_SECRET) in the cluster's "
          "environment");
    }
    ++r.in_flight;
  }
  Result<DatabricksRuntimeToken> out = InternalError("the provider did not answer");
  try {
    out = (*provider)();
  } catch (const std::exception& e) {
    out = InternalError(std::string("the provider threw: ") + e.what());
  }
  {
    std::lock_guard<std::mutex> lock(r.mu);
    --r.in_flight;
  }
  r.idle.notify_all();
  if (!out.ok()) return out.status().WithContext("the Databricks runtime's token provider");
  const std::string host = DatabricksHostKey(out->host);
  if (host.empty()) {
    return InvalidArgumentError("the Databricks runtime's token provider gave the host '" +
                                out->host + "', which is not an http(s) URL with no path");
  }
  if (out->token.empty()) {
    return InvalidArgumentError("the Databricks runtime's token provider gave an empty token for " +
                                host);
  }
  out->host = host;
  return out;
}

Result<DatabricksRuntimeToken> FetchDatabricksRuntimeTokenFor(const DatabricksConfig& config) {
  if (!InADatabricksRuntime()) {
    return NotFoundError("not in a Databricks runtime (DATABRICKS_RUNTIME_VERSION is not set)");
  }
  auto token = FetchDatabricksRuntimeToken();
  if (!token.ok()) {
    if (token.status().code() != StatusCode::kNotFound) return token.status();
    return NotFoundError("in a Databricks runtime, but " + token.status().message());
  }
  if (!config.host.empty() && DatabricksHostKey(config.host) != token->host) {
    return NotFoundError("the Databricks runtime's workspace " + token->host + " is not " +
                         config.host + " (from " + DatabricksSettingOrigin(config, "host") +
                         "), so its token is not sent there");
  }
  return token;
}

Result<Credential> AsChosenDatabricksStrategy(std::string_view name, bool chosen, Result<Credential> fetched) {
  if (fetched.ok() || !chosen || fetched.status().code() != StatusCode::kNotFound) return fetched;
  return PermissionDeniedError("the Databricks auth type " + std::string(name) + " was chosen, but " +
                               fetched.status().message());
}

std::unique_ptr<CredentialSource> MakeDatabricksRuntimeSource(DatabricksConfig config, bool chosen) {
  return std::make_unique<DatabricksRuntimeSource>(std::move(config), chosen);
}

Status FillDatabricksRuntimeHost(DatabricksConfig* config) {
  if (!config->host.empty() || !InADatabricksRuntime()) return Status::Ok();
  auto token = FetchDatabricksRuntimeToken();
  if (!token.ok()) return NotFoundError("in a Databricks runtime, but " + token.status().message());
  config->host = token->host;
  config->origin["host"] = "the Databricks runtime";
  return Status::Ok();
}

}  // namespace sluice
