// The Databricks SDK's databricks-cli strategy (databricks-sdk 0.162.0):
// what a user on a laptop has after `databricks auth login`. As the SDK,
// Sluice does not read the CLI's token cache (~/.databricks/token-cache.json)
// itself: it runs the CLI, which reads that cache and refreshes the token
// with its refresh token at the host's OIDC endpoint when it has expired.
//   - The CLI: DATABRICKS_CLI_PATH (profile key databricks_cli_path; a bare
//     name is looked up on PATH), else `databricks` on PATH; a file under
//     1 MiB holding the legacy Python CLI's entry point
//     ("from databricks_cli.cli import ") is passed over.
//   - Its version from `databricks version --output json` (5 s; unknown
//     when that fails).
//   - `databricks auth token --profile P` when a profile was read and the
//     CLI is at least 0.207.1, else `--host H`; `--force-refresh` when it is
//     at least 0.296.0. It prints {"access_token", "token_type", "expiry"};
//     the token is the bearer until its expiry, and the CLI is run again
//     ahead of it by the shared refresher.
//   - With scopes configured (a profile's `scopes`), a token (a JWT) whose
//     "scope" claim names other scopes (offline_access aside) is not used.
// The strategy does not apply (kNotFound) without a host or a CLI, when the
// CLI says "databricks OAuth is not" configured, when its output cannot be
// read or its scopes differ; with DATABRICKS_AUTH_TYPE=databricks-cli those
// last two are errors. Another failure is kPermissionDenied quoting the
// first line of the CLI's stderr (never its stdout, which holds tokens).
//
// Thread safety: as a CredentialSource (one Fetch at a time).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "stores/credentials/credential_source.h"
#include "stores/credentials/databricks_config.h"

namespace sluice {

// An expiry as the CLI prints it and Python's datetime.fromisoformat reads
// it (the SDK's token cache): RFC 3339 ("2026-12-04T17:50:00.123456+01:00"),
// or "2026-12-04 17:50:00"; without a zone it is local time, as the SDK
// reads it. Unix seconds; nullopt when unreadable.
std::optional<int64_t> ParseDatabricksExpiry(const std::string& text);

std::unique_ptr<CredentialSource> MakeDatabricksCliSource(const DatabricksConfig& config);

}  // namespace sluice
