// OCI resource principals that buy their session token (RPST) from the
// identity service, as the OCI SDK's get_resource_principals_signer() (oci
// 2.189.0) does for these OCI_RESOURCE_PRINCIPAL_VERSIONs (2.2, a token the
// platform hands over, is oci_resource_principal.h's):
//   1.1  the instance principal (oci_instance_principal.h) signs; the
//        resource principal token (RPT) from OCI_RESOURCE_PRINCIPAL_RPT_ENDPOINT
//        at OCI_RESOURCE_PRINCIPAL_RPT_PATH (default
//        "/20180711/resourcePrincipalToken/{id}"; "{id}" is
//        OCI_RESOURCE_PRINCIPAL_RPT_ID, else the instance's OCID from the
//        metadata service); the RPST from OCI_RESOURCE_PRINCIPAL_RPST_ENDPOINT
//        (default https://auth.<region>.oraclecloud.com) for a new RSA-2048
//        session key.
//   2.1, 2.1.1, 2.1.2  the resource's own key OCI_RESOURCE_PRINCIPAL_PRIVATE_PEM
//        (with _PASSPHRASE; an absolute path names a file) signs, key id
//        "resource/v2.1/<OCI_RESOURCE_PRINCIPAL_RESOURCE_ID>" or
//        "resource/v<version>/<OCI_RESOURCE_PRINCIPAL_TENANCY_ID>/<resource id>";
//        the RPT from OCI_RESOURCE_PRINCIPAL_RPT_ENDPOINT at
//        "/20180711/resourcePrincipalTokenV2/<resource id>" (2.1.2:
//        ".../resourcePrincipalTokenV212/<id>", or OCI_RESOURCE_PRINCIPAL_RPT_PATH
//        with "{}" replaced by the id, else the id appended, and the header
//        security-context: OCI_RESOURCE_PRINCIPAL_SECURITY_CONTEXT when set);
//        the RPST from OCI_RESOURCE_PRINCIPAL_RPST_ENDPOINT for that same key.
//   3.0  a leaf resource of OCI_RESOURCE_PRINCIPAL_VERSION_FOR_LEAF_RESOURCE
//        (2.2, 2.1.x or 1.1, each reading its variables with the suffix
//        _FOR_LEAF_RESOURCE) signs, with its token and session key, the RPT
//        request to OCI_RESOURCE_PRINCIPAL_RPT_URL_FOR_PARENT_RESOURCE (the
//        whole URL) and the RPST request to
//        OCI_RESOURCE_PRINCIPAL_RPST_ENDPOINT_FOR_PARENT_RESOURCE, for the
//        leaf's session key. When the RPT answer names a further parent
//        (header opc-parent-rpt-url) the parent's token signs the same two
//        requests to that URL once more, as the SDK does (a parent naming
//        itself is refused as a cycle). Where the SDK 2.189.0 builds a 2.1.x
//        leaf with version "3.0" (and so fails), Sluice uses the leaf's own.
// Each exchange: GET <RPT URL> signed over "date (request-target) host",
// answered {"resourcePrincipalToken", "servicePrincipalSessionToken"}; POST
// <RPST endpoint>/v1/resourcePrincipalSessionToken of {"resourcePrincipalToken",
// "servicePrincipalSessionToken", "sessionPublicKey" (PEM body without armour
// or newlines)} signed with the body's headers too, answered {"token"}.
// Requests are then signed with key id "ST$<token>" and the session key; the
// token is refreshed ahead of its "exp" by the shared refresher.
// Thread-safe. Keys and tokens are secrets: errors and sources name
// variables, URLs and OCIDs only.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"
#include "stores/credentials/credential_source.h"
#include "stores/credentials/shared_credential.h"

namespace sluice {

// True for the versions above (1.1, 2.1, 2.1.1, 2.1.2, 3.0).
bool IsOciRpExchangeVersion(std::string_view version);

// The source behind the shared credential (exposed for tests), reading the
// environment now: kInvalidArgument naming a missing variable or an
// unsupported leaf version. Each Fetch() buys a token; its credential:
// `bearer` the RPST, `session_key_pem` the session key, `expires_at` its
// "exp", `source` what signed and where (no secret).
Result<std::unique_ptr<CredentialSource>> MakeOciRpExchangeSource(const std::string& version);

// The region of the exchange version's environment (""  when it names none:
// 1.1 asks the metadata service, at the first fetch).
std::string OciRpExchangeRegion(const std::string& version);

// The process-wide refreshing credential for the current environment.
Result<std::shared_ptr<SharedCredential>> OciRpExchangeCredential(const std::string& version);

}  // namespace sluice
