// Azure's bearer-token sources, in DefaultAzureCredential's order (the
// whole chain: azure_credential.h). Each reads the environment and its
// files when Fetch() runs, so a rotated federated token or certificate is
// read again on refresh. Every token is for kAzureStorageScope. Not
// thread-safe (a chain calls them from one thread at a time). Errors and
// names never hold a secret.
#pragma once

#include <memory>
#include <string>

#include "stores/credentials/credential_source.h"

namespace sluice {

// "environment": a service principal from AZURE_TENANT_ID + AZURE_CLIENT_ID
// with AZURE_CLIENT_SECRET (grant client_credentials with client_secret),
// else with AZURE_CLIENT_CERTIFICATE_PATH (a PEM certificate with its
// private key: a signed client assertion, azure_client_assertion.h), at
// AZURE_AUTHORITY_HOST's token endpoint. kNotFound naming what is missing.
std::unique_ptr<CredentialSource> MakeAzureEnvironmentSource();

// "workload identity" (AKS): AZURE_FEDERATED_TOKEN_FILE's token (read at
// every fetch: the kubelet rotates it) as the client assertion of
// AZURE_CLIENT_ID in AZURE_TENANT_ID. kNotFound unless all three are set.
std::unique_ptr<CredentialSource> MakeAzureWorkloadIdentitySource();

// Where managed identity may be looked for. Tests point both at fakes.
struct AzureEndpointOptions {
  std::string dmi_dir = "/sys/class/dmi/id";  // where an Azure VM is recognized
  // The IMDS base URL; "" : AZURE_POD_IDENTITY_AUTHORITY_HOST, else
  // http://169.254.169.254 probed only on an Azure VM.
  std::string imds_endpoint;
};

// "managed identity", as azure-identity picks the endpoint:
//   IDENTITY_ENDPOINT + IDENTITY_HEADER (App Service, Functions, Azure ML
//     compute): GET ?api-version=2019-08-01&resource=..., header
//     X-IDENTITY-HEADER, client_id=AZURE_CLIENT_ID when set;
//   MSI_ENDPOINT + MSI_SECRET (Azure ML): GET ?api-version=2017-09-01
//     &resource=..., header secret, clientid=AZURE_CLIENT_ID when set;
//   else IMDS: GET /metadata/identity/oauth2/token?api-version=2018-02-01
//     &resource=... with Metadata: true (client_id=AZURE_CLIENT_ID when set),
//     only when endpoints.imds_endpoint or AZURE_POD_IDENTITY_AUTHORITY_HOST
//     names it or the DMI chassis asset tag says Azure (never probed
//     elsewhere: kNotFound saying so; nor with
//     SLUICE_AZURE_METADATA_DISABLED=true, as tests on Azure VMs set).
// Service Fabric, Azure Arc and Cloud Shell endpoints are kUnimplemented.
std::unique_ptr<CredentialSource> MakeAzureManagedIdentitySource(AzureEndpointOptions endpoints);

// "Azure CLI": the token `az account get-access-token --output json
// --resource https://storage.azure.com` prints for the account `az login`
// signed in, as azure-identity's AzureCliCredential asks for it (with
// AZURE_CORE_NO_COLOR=true, at most 10 s). The program is $SLUICE_AZURE_CLI,
// else az on PATH; the CLI refreshes the token itself, so each fetch runs it
// again. kNotFound when there is no such program, or when it says to run
// 'az login' or 'az account set'; any other failure is an error quoting the
// first line of its stderr (never its stdout, which holds the token).
std::unique_ptr<CredentialSource> MakeAzureCliSource();

// "Azure PowerShell": the token of the account `Connect-AzAccount` signed
// in, as azure-identity's AzurePowerShellCredential asks for it, after the
// Azure CLI as in DefaultAzureCredential: `pwsh -NoProfile -NonInteractive
// -EncodedCommand <script>` (at most 10 s), the script calling
// Get-AzAccessToken -ResourceUrl https://storage.azure.com of Az.Accounts
// 2.2.0 or later and printing "azsdk%<token>%<unix expiry>". The program is
// $SLUICE_AZURE_POWERSHELL, else pwsh on PATH (never Windows' powershell).
// As in DefaultAzureCredential, where every failure of this source is
// "unavailable", it never stops the chain: kNotFound when there is no such
// program, no Az.Accounts, no login ('Connect-AzAccount'), an execution
// policy refusal, no token line, or any other failure (quoting the first
// line of pwsh's stderr, never its stdout). Only a malformed token line is
// an error (kPermissionDenied), as it is for azure-identity.
std::unique_ptr<CredentialSource> MakeAzurePowerShellSource();

// "Azure Developer CLI": the token `azd auth token --output json --no-prompt
// --scope https://storage.azure.com/.default` prints for the account `azd
// auth login` signed in, as azure-identity's AzureDeveloperCliCredential
// asks for it (with NO_COLOR=true, at most 10 s), after Azure PowerShell as in
// DefaultAzureCredential. The program is $SLUICE_AZURE_DEVELOPER_CLI, else
// azd on PATH. kNotFound when there is no such program or it says it is
// not logged in; any other failure is an error quoting azd's own error
// (the "error" of its JSON lines on stderr, else their first line), never
// its stdout.
std::unique_ptr<CredentialSource> MakeAzureDeveloperCliSource();

// Whether `dmi_dir`'s chassis_asset_tag is Azure's (7783-7084-3265-9085).
// When not, *why_not says so.
bool DmiSaysAzure(const std::string& dmi_dir, std::string* why_not);

}  // namespace sluice
