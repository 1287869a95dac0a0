// The Databricks SDK's runtime strategy: inside a Databricks runtime
// (DATABRICKS_RUNTIME_VERSION set) the workspace's host and a token for it
// live in the notebook's Python objects (dbruntime's REPL context, or
// dbutils' notebook context), which no environment variable or file
// carries. A binding that can read them (the Python package) registers a
// provider; the engine calls it whenever it needs the token: at the first
// use and again before the token it had expires (one the provider gives no
// expiry is asked for again every kDatabricksRuntimeTokenRecheckS seconds,
// since the runtime rotates it unannounced and the SDK reads it again for
// every request).
//
// Thread safety: every function may be called from any thread. The
// provider is called on the engine's threads, one call at a time; clearing
// or replacing it waits for a call in flight. A provider must not call
// SetDatabricksRuntimeTokenProvider itself. Fork: a child starts with the
// parent's provider and no call in flight.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "stores/credentials/credential_source.h"
#include "stores/credentials/databricks_config.h"

namespace sluice {

inline constexpr int64_t kDatabricksRuntimeTokenRecheckS = 600;

struct DatabricksRuntimeToken {
  std::string host;    // "https://adb-1.2.azuredatabricks.net"; no trailing '/'
  std::string token;   // the bearer (secret)
  std::optional<int64_t> expires_at;  // unix seconds; nullopt: not known
};

// The provider's answer, or an error whose message says why it has none
// (never a secret).
using DatabricksRuntimeTokenProvider = std::function<Result<DatabricksRuntimeToken>()>;

// Registers `provider` for the process (an empty one clears it). Each call
// changes DatabricksRuntimeTokenGeneration().
void SetDatabricksRuntimeTokenProvider(DatabricksRuntimeTokenProvider provider);

// A number that changes whenever the provider is set or cleared (keys the
// process-wide shared credential, so that a provider registered after a
// failed open is asked at the next).
uint64_t DatabricksRuntimeTokenGeneration();

// The provider's answer: kNotFound when no provider is registered
// ("no binding has handed Sluice the runtime's token ..."); the provider's
// error with the context "the Databricks runtime's token provider"; a host
// that is no http(s) URL or an empty token is kInvalidArgument.
Result<DatabricksRuntimeToken> FetchDatabricksRuntimeToken();

// The runtime's token for `config`, as the runtime strategies (runtime,
// runtime-oauth) may use it: kNotFound saying why there is none (not in a
// runtime, DATABRICKS_RUNTIME_VERSION unset; no provider, or the
// provider's kNotFound, "in a Databricks runtime, but ..."; a runtime whose
// host is not config.host, naming both: its token is never sent to another
// workspace); the provider's other errors as FetchDatabricksRuntimeToken's.
Result<DatabricksRuntimeToken> FetchDatabricksRuntimeTokenFor(const DatabricksConfig& config);

// What a runtime strategy `name` answers: `fetched`, except that when it was
// chosen (DATABRICKS_AUTH_TYPE) and does not apply (kNotFound) it is
// kPermissionDenied, "the Databricks auth type <name> was chosen, but ...".
Result<Credential> AsChosenDatabricksStrategy(std::string_view name, bool chosen, Result<Credential> fetched);

// The SDK's strategy "runtime" as a source of `config`: the runtime's token
// as the bearer (FetchDatabricksRuntimeTokenFor's errors). `chosen`
// (DATABRICKS_AUTH_TYPE=runtime) turns kNotFound into kFailedPrecondition.
std::unique_ptr<CredentialSource> MakeDatabricksRuntimeSource(DatabricksConfig config, bool chosen);

// As the SDK's runtime strategy sets the host: a config with no host, inside
// a runtime, takes the provider's (origin "the Databricks runtime"). Not in
// a runtime, or with a host already: Ok, nothing changed. In a runtime
// whose provider has none: the config unchanged and the reason
// (kNotFound, "in a Databricks runtime, but ...") for the caller's error.
Status FillDatabricksRuntimeHost(DatabricksConfig* config);

}  // namespace sluice
