// sluice_set_databricks_runtime_token_provider and its sink: a binding's
// callback as the engine's provider of a Databricks runtime's token
// (stores/credentials/databricks_runtime_token.h).
#include <optional>
#include <string>

#include "bindings/c/c_api_internal.h"
#include "stores/credentials/databricks_runtime_token.h"

// The answer of one call of a provider; lives on the engine's stack for it.
struct sluice_databricks_token_sink {
  std::optional<sluice::DatabricksRuntimeToken> token;
  std::optional<std::string> failure;
};

namespace {

using sluice::capi::Guard;
using sluice::capi::NullArgument;

}  // namespace

extern "C" {

sluice_status sluice_set_databricks_runtime_token_provider(sluice_databricks_token_fn fn,
                                                           void* user_data) {
  return Guard("sluice_set_databricks_runtime_token_provider", [&] {
    if (fn == nullptr) {
      sluice::SetDatabricksRuntimeTokenProvider(nullptr);
      return SLUICE_OK;
    }
    sluice::SetDatabricksRuntimeTokenProvider(
        [fn, user_data]() -> sluice::Result<sluice::DatabricksRuntimeToken> {
          sluice_databricks_token_sink sink;
          const int rc = fn(user_data, &sink);
          if (sink.failure) return sluice::NotFoundError(*sink.failure);
          if (rc != 0 || !sink.token) {
            return sluice::NotFoundError("it returned " + std::to_string(rc) + " without a token");
          }
          return std::move(*sink.token);
        });
    return SLUICE_OK;
  });
}

sluice_status sluice_databricks_token_sink_put(sluice_databricks_token_sink* sink,
                                               const char* host, const char* token,
                                               int64_t expires_at) {
  return Guard("sluice_databricks_token_sink_put", [&] {
    if (sink == nullptr) return NullArgument("sluice_databricks_token_sink_put", "sink");
    if (host == nullptr) return NullArgument("sluice_databricks_token_sink_put", "host");
    if (token == nullptr) return NullArgument("sluice_databricks_token_sink_put", "token");
    sluice::DatabricksRuntimeToken out;
    out.host = host;
    out.token = token;
    if (expires_at > 0) out.expires_at = expires_at;
    sink->token = std::move(out);
    return SLUICE_OK;
  });
}

sluice_status sluice_databricks_token_sink_fail(sluice_databricks_token_sink* sink,
                                                const char* message) {
  return Guard("sluice_databricks_token_sink_fail", [&] {
    if (sink == nullptr) return NullArgument("sluice_databricks_token_sink_fail", "sink");
    if (message == nullptr) return NullArgument("sluice_databricks_token_sink_fail", "message");
    sink->failure = message;
    return SLUICE_OK;
  });
}

}  // extern "C"
