// The AWS credential sources, one per place boto3 looks (see
// aws_credential_chain.h for their order). Each reads the environment and
// files when Fetch() runs, not when made, so a rotated token file is read
// again on refresh. Not thread-safe (a chain calls them from one thread at a
// time). Errors and names never hold a secret.
#pragma once

#include <memory>
#include <string>

#include "stores/credentials/aws_settings.h"
#include "stores/credentials/credential_source.h"

namespace sluice {

// AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY (+ AWS_SESSION_TOKEN,
// + AWS_CREDENTIAL_EXPIRATION). kPermissionDenied when only one of the
// pair is set.
std::unique_ptr<CredentialSource> MakeAwsEnvSource();

// The profile's role_arn with source_profile (whose static keys sign) or
// credential_source (Environment, Ec2InstanceMetadata, EcsContainer):
// STS AssumeRole (role_session_name, external_id, duration_seconds). A
// source_profile without static keys signs with its SSO login or
// credential_process, or, when it is itself a role profile, is assumed
// first, and so on down the chain (boto3's role chaining); a chain
// that comes back to one of its profiles is kInvalidArgument naming them
// in order (a profile may name itself only for its own static keys).
// `base_options` are passed to the sources credential_source names.
struct AwsEndpointOptions {
  std::string dmi_dir = "/sys/class/dmi/id";            // where EC2 is recognized
  std::string container_host = "http://169.254.170.2";  // base of the _RELATIVE_URI
};
std::unique_ptr<CredentialSource> MakeAwsAssumeRoleSource(AwsSettings settings,
                                                          AwsEndpointOptions endpoints);

// AWS_WEB_IDENTITY_TOKEN_FILE + AWS_ROLE_ARN (+ AWS_ROLE_SESSION_NAME), or
// the profile's web_identity_token_file + role_arn: STS
// AssumeRoleWithWebIdentity (EKS IRSA).
std::unique_ptr<CredentialSource> MakeAwsWebIdentitySource(AwsSettings settings);

// The profile's SSO settings (sso_session, or legacy sso_start_url and
// sso_region; sso_account_id, sso_role_name) with the token `aws sso login`
// cached in $HOME/.aws/sso/cache (refreshed through SSO-OIDC for
// sso_session profiles, see aws_sso_token.h): the SSO portal's
// GetRoleCredentials (https://portal.sso.<sso_region>.amazonaws.com, or
// AWS_ENDPOINT_URL_SSO).
std::unique_ptr<CredentialSource> MakeAwsSsoSource(AwsSettings settings);

// Static keys of the profile in the shared credentials file.
std::unique_ptr<CredentialSource> MakeAwsCredentialsFileSource(AwsSettings settings);

// The profile's credential_process in the config file: runs it (no shell;
// the command line split as a POSIX shell would, quotes and backslashes)
// and reads its JSON (Version 1) from stdout, up to 1 MiB.
std::unique_ptr<CredentialSource> MakeAwsProcessSource(AwsSettings settings);

// Static keys of the profile in the config file.
std::unique_ptr<CredentialSource> MakeAwsConfigFileSource(AwsSettings settings);

// AWS_CONTAINER_CREDENTIALS_RELATIVE_URI (against endpoints.container_host)
// or AWS_CONTAINER_CREDENTIALS_FULL_URI (https, or http to a loopback or the
// ECS/EKS link-local addresses only), with AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE
// (read at every fetch) or AWS_CONTAINER_AUTHORIZATION_TOKEN as the
// Authorization header (ECS, EKS Pod Identity).
std::unique_ptr<CredentialSource> MakeAwsContainerSource(AwsEndpointOptions endpoints);

// EC2 instance metadata, IMDSv2 only: PUT /latest/api/token
// (X-aws-ec2-metadata-token-ttl-seconds), then GET
// /latest/meta-data/iam/security-credentials/ and .../<role> with
// X-aws-ec2-metadata-token. Skipped when AWS_EC2_METADATA_DISABLED is true.
// The endpoint is AWS_EC2_METADATA_SERVICE_ENDPOINT when set; else
// 169.254.169.254 (or [fd00:ec2::254] with
// AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE=IPv6), probed only when
// endpoints.dmi_dir's sys_vendor, product_name or board_vendor says Amazon
// or EC2, so that off EC2 nobody waits for a timeout.
std::unique_ptr<CredentialSource> MakeAwsImdsSource(AwsEndpointOptions endpoints);

// Whether `dmi_dir`'s sys_vendor, product_name or board_vendor names Amazon
// or EC2 (Nitro instances say "Amazon EC2", Xen ones an "EC2" product or
// board). When not, *why_not says so (for the chain's record).
bool DmiSaysEc2(const std::string& dmi_dir, std::string* why_not);

// Splits a command line as a POSIX shell would for words (single and double
// quotes, backslash escapes; no expansion). kInvalidArgument on an
// unterminated quote.
Result<std::vector<std::string>> SplitCommandLine(std::string_view line);

}  // namespace sluice
