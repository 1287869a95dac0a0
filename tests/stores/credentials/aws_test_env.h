// The environment AWS credential tests start from: every variable the AWS
// chain reads unset, the shared files pointed at `dir` (absent until a test
// writes them), EC2 metadata disabled, so that no source reaches beyond
// 127.0.0.1 unless a test points it at a loopback fake.
#pragma once

#include <map>
#include <optional>
#include <string>

namespace sluice::testing {

inline std::map<std::string, std::optional<std::string>> AwsCleanEnv(const std::string& dir) {
  std::map<std::string, std::optional<std::string>> env;
  for (const char* var : {"AWS_ACCESS_KEY_ID",
                          "AWS_SECRET_ACCESS_KEY",
                          "AWS_SESSION_TOKEN",
                          "AWS_CREDENTIAL_EXPIRATION",
                          "AWS_PROFILE",
                          "AWS_DEFAULT_PROFILE",
                          "AWS_REGION",
                          "AWS_DEFAULT_REGION",
                          "AWS_WEB_IDENTITY_TOKEN_FILE",
                          "AWS_ROLE_ARN",
                          "AWS_ROLE_SESSION_NAME",
                          "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
                          "AWS_CONTAINER_CREDENTIALS_FULL_URI",
                          "AWS_CONTAINER_AUTHORIZATION_TOKEN",
                          "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
                          "AWS_EC2_METADATA_SERVICE_ENDPOINT",
                          "AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE",
                          "AWS_ENDPOINT_URL_STS",
                          "AWS_STS_REGIONAL_ENDPOINTS",
                          "AWS_ENDPOINT_URL_SSO",
                          "AWS_ENDPOINT_URL_SSO_OIDC",
                          "AWS_ENDPOINT_URL",
                          "AWS_ENDPOINT_URL_S3",
                          "S3_ENDPOINT_URL",
                          "S3_UNSIGNED",
                          "AWS_NO_SIGN_REQUEST",
                          "S3_ADDRESSING_STYLE",
                          "MOSAICML_STREAMING_AWS_REQUESTER_PAYS"}) {
    env[var] = std::nullopt;
  }
  env["AWS_SHARED_CREDENTIALS_FILE"] = dir + "/credentials";
  env["AWS_CONFIG_FILE"] = dir + "/config";
  env["AWS_EC2_METADATA_DISABLED"] = "true";
  return env;
}

}  // namespace sluice::testing
