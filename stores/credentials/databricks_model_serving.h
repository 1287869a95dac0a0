// The Databricks SDK's model-serving strategy: inside a Databricks Model
// Serving endpoint (IS_IN_DB_MODEL_SERVING_ENV, else
// IS_IN_DATABRICKS_MODEL_SERVING_ENV, is "true") the platform mounts an
// OAuth token for the model's dependencies as a JSON file,
// {"OAUTH_TOKEN": [{"oauthTokenValue": "<token>"}]}, at
// $SERVING_CREDENTIALS_DIR/model-dependencies-oauth-token (the serverless
// platform), else /var/credentials-secret/model-dependencies-oauth-token.
// The token is re-read every 300 s (the SDK's cache time: the platform
// rotates the file). The workspace: DATABRICKS_HOST, else
// DATABRICKS_MODEL_SERVING_HOST_URL, else DB_MODEL_SERVING_HOST_URL.
// (The SDK's other model-serving mode, ModelServingUserCredentials, reads
// the invoker's token from a Python thread's variables; Sluice does not.)
// The token is a secret: never in errors or a Credential's source. Reads
// the environment; thread-safe as long as nobody changes it meanwhile.
#pragma once

#include <memory>

#include "base/status.h"
#include "stores/credentials/credential_chain.h"
#include "stores/credentials/databricks_config.h"

namespace sluice {

// The token file's path as above (whether or not it exists).
std::string DatabricksModelServingTokenPath();

// The source "model-serving": kNotFound saying why when not in Model
// Serving or its file is missing, unreadable or holds no token (as the SDK,
// which then passes the strategy over).
std::unique_ptr<CredentialSource> MakeDatabricksModelServingSource(const DatabricksConfig& config);

// As the SDK's strategy sets the host: a config with no host, in Model
// Serving with its token file, takes DATABRICKS_MODEL_SERVING_HOST_URL (else
// DB_MODEL_SERVING_HOST_URL; origin that variable). Otherwise nothing
// changes.
void FillDatabricksModelServingHost(DatabricksConfig* config);

}  // namespace sluice
