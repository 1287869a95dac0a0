// OCI instance principals as the OCI SDK's
// InstancePrincipalsSecurityTokenSigner obtains them, used only when chosen
// (OCI_CLI_AUTH=instance_principal: the metadata address exists only on an
// OCI instance, so it is never probed unasked):
//   the instance metadata service (OCI_METADATA_BASE_URL, as the SDK reads
//     it, else http://169.254.169.254/opc/v2; every GET with "Authorization: Bearer
//     Oracle"): instance/region, identity/cert.pem (the leaf certificate),
//     identity/key.pem (its private key), identity/intermediate.pem;
//   the tenancy: the leaf certificate's subject value "opc-tenant:<ocid>"
//     (or "opc-identity:<ocid>");
//   a new RSA-2048 session key pair per token;
//   the X.509 federation request: POST to the auth service
//     (SLUICE_OCI_FEDERATION_ENDPOINT, else
//     https://auth.<region>.oraclecloud.com/v1/x509) of {"certificate",
//     "publicKey", "intermediateCertificates"} (PEM bodies without their
//     armour lines or newlines), signed with the leaf key over "date
//     (request-target) content-length content-type x-content-sha256", key
//     id "<tenancy>/fed-x509/<the leaf certificate's SHA-1, AB:CD:...>";
//   the answer {"token": JWT}: requests are then signed with key id
//     "ST$<token>" and the session key, the token refreshed ahead of its
//     "exp" by the shared refresher (shared_credential.h).
// Thread-safe. The leaf key, the session key and the token are secrets.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "stores/credentials/credential_source.h"
#include "stores/credentials/shared_credential.h"

namespace sluice {

struct OciInstancePrincipalEndpoints {
  std::string metadata;    // base URL, no trailing '/'
  std::string federation;  // "" until the region is known: see OciFederationEndpoint
};

// The endpoints by the environment (above).
OciInstancePrincipalEndpoints OciInstancePrincipalEndpointsFromEnv();

// The auth service's X.509 federation URL for `region` unless one is set.
std::string OciFederationEndpoint(const OciInstancePrincipalEndpoints& endpoints,
                                  const std::string& region);

// The instance's region (GET {metadata}/instance/region, trimmed, lower
// case). Blocks. Errors name the URL.
Result<std::string> FetchOciInstanceRegion(const std::string& metadata);

// A PEM body as OCI's token requests carry keys and certificates (the SDK's
// sanitize_certificate_string): no armour lines, no newlines.
std::string OciPemBody(const std::string& pem);

// The instance's OCID (GET {metadata}/instance/id, trimmed, lower case, as
// the SDK's resource principal 1.1 takes it). Blocks. Errors name the URL.
Result<std::string> FetchOciInstanceId(const std::string& metadata);

// The source behind the shared credential (exposed for tests): each Fetch()
// reads the certificates and key again and federates with a new session key.
// Its credential: `bearer` the token, `session_key_pem` the session key,
// `expires_at` the token's "exp".
std::unique_ptr<CredentialSource> MakeOciInstancePrincipalSource(std::string metadata,
                                                                 std::string federation);

// The process-wide refreshing credential for these endpoints.
std::shared_ptr<SharedCredential> OciInstancePrincipalCredential(const std::string& metadata,
                                                                 const std::string& federation);

}  // namespace sluice
