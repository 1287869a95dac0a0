// The AWS credential chain in boto3's order (each source: aws_sources.h):
//   1. environment            AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN
//   2. assume role            profile role_arn + source_profile / credential_source (STS)
//   3. web identity           AWS_WEB_IDENTITY_TOKEN_FILE + AWS_ROLE_ARN, or the profile's
//                             web_identity_token_file + role_arn (STS; EKS IRSA)
//   4. SSO                    the profile's sso_session / sso_* with the cached login token
//   5. shared credentials file  the profile's keys in ~/.aws/credentials
//   6. credential_process     the profile's credential_process in ~/.aws/config
//   7. config file            the profile's keys in ~/.aws/config
//   8. container endpoint     AWS_CONTAINER_CREDENTIALS_RELATIVE_URI / _FULL_URI (ECS, EKS Pod
//   Identity)
//   9. EC2 instance metadata  IMDSv2 (only on EC2, or with AWS_EC2_METADATA_SERVICE_ENDPOINT)
#pragma once

#include <memory>
#include <string>

#include "stores/credentials/aws_settings.h"
#include "stores/credentials/aws_sources.h"
#include "stores/credentials/credential_chain.h"
#include "stores/credentials/shared_credential.h"

namespace sluice {

// A new chain over `settings` (copied into the sources).
std::unique_ptr<CredentialChain> MakeAwsCredentialChain(const AwsSettings& settings,
                                                        const AwsEndpointOptions& endpoints = {});

// The process-wide shared credential for `settings` and the current AWS_*
// environment: every store opened with the same environment and files gets
// the same object (one fetch, one refresher per process). Thread-safe.
std::shared_ptr<SharedCredential> AwsSharedCredential(const AwsSettings& settings,
                                                      const AwsEndpointOptions& endpoints = {});

}  // namespace sluice
