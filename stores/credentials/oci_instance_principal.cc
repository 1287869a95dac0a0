#include "stores/credentials/oci_instance_principal.h"

#include <cctype>
#include <ctime>
#include <vector>

#include "formats/json/py_json.h"
#include "stores/common/store_keys.h"
#include "stores/credentials/blocking_http.h"
#include "stores/credentials/credential_chain.h"
#include "stores/credentials/jwt_expiry.h"
#include "stores/credentials/oci_config.h"
#include "stores/credentials/oci_regions.h"
#include "stores/credentials/oci_resource_principal.h"
#include "stores/http/url.h"
#include "stores/signing/digest.h"
#include "stores/signing/oci_signature.h"
#include "stores/signing/x509_certificate.h"

namespace sluice {
namespace {

constexpr char kDefaultMetadata[] = "http://169.254.169.254/opc/v2";
constexpr int64_t kIpTimeoutMs = 10000;

// Trimmed of spaces (a blank value is unset, as the SDK takes it) and of
// trailing '/'.
std::string MetadataBase(std::string s) {
  while (!s.empty() && (s.back() == '/' || std::isspace(static_cast<unsigned char>(s.back())))) {
    s.pop_back();
  }
  size_t lead = 0;
  while (lead < s.size() && std::isspace(static_cast<unsigned char>(s[lead]))) ++lead;
  return s.substr(lead);
}

// GET {metadata}/{path} as the SDK asks it: "Authorization: Bearer Oracle".
Result<std::string> MetadataGet(const std::string& metadata, const std::string& path) {
  HttpRequest req;
  req.url = metadata + "/" + path;
  req.headers.emplace_back("authorization", "Bearer Oracle");
  auto resp = SendBlocking(std::move(req), CredentialEndpointOptions(kIpTimeoutMs));
  if (!resp.ok()) {
    // A 404 is a failure here, not "does not apply": instance principals
    // are only ever asked for.
    Status s = resp.status().WithContext("OCI instance metadata " + metadata + "/" + path);
    return s.code() == StatusCode::kNotFound ? PermissionDeniedError(s.message()) : s;
  }
  return std::move(resp->body);
}

Result<std::string> TenancyOfCertificate(const X509Summary& cert, const std::string& url) {
  for (const std::string& v : cert.subject_values) {
    for (std::string_view prefix : {"opc-tenant:", "opc-identity:"}) {
      if (v.rfind(prefix, 0) == 0) return v.substr(prefix.size());
    }
  }
  return PermissionDeniedError("the leaf certificate " + url +
                               " names no tenancy (no subject value opc-tenant:...)");
}

class OciInstancePrincipalSource final : public CredentialSource {
 public:
  OciInstancePrincipalSource(std::string metadata, std::string federation)
      : metadata_(std::move(metadata)), federation_(std::move(federation)) {}

  std::string name() const override { return "OCI instance principal"; }

  Result<Credential> Fetch(int64_t now) override {
    SLUICE_ASSIGN_OR_RETURN(std::string cert_pem, MetadataGet(metadata_, "identity/cert.pem"));
    SLUICE_ASSIGN_OR_RETURN(std::string leaf_key, MetadataGet(metadata_, "identity/key.pem"));
    SLUICE_ASSIGN_OR_RETURN(std::string intermediate,
                            MetadataGet(metadata_, "identity/intermediate.pem"));
    const std::string cert_url = metadata_ + "/identity/cert.pem";
    SLUICE_ASSIGN_OR_RETURN(X509Summary cert, ReadX509Certificate(cert_pem, "the leaf certificate " + cert_url));
    SLUICE_ASSIGN_OR_RETURN(std::string tenancy, TenancyOfCertificate(cert, cert_url));
    SLUICE_ASSIGN_OR_RETURN(RsaKeyPair session, GenerateRsaKeyPair(2048));

    // The body as the SDK's json.dumps writes it.
    std::string body = "{\"certificate\": ";
    SLUICE_RETURN_IF_ERROR(AppendPyJsonString(body, OciPemBody(cert_pem)));
    body += ", \"publicKey\": ";
    SLUICE_RETURN_IF_ERROR(AppendPyJsonString(body, OciPemBody(session.public_pem)));
    body += ", \"intermediateCertificates\": [";
    SLUICE_RETURN_IF_ERROR(AppendPyJsonString(body, OciPemBody(intermediate)));
    body += "]}";

    SLUICE_ASSIGN_OR_RETURN(Url url, ParseUrl(federation_));
    OciRequestToSign r;
    r.method = "POST";
    r.host = url.Authority();
    r.target = url.target;
    r.date = OciHttpDate(now);
    r.sign_host = false;
    r.sign_body = true;
    r.content_length = body.size();
    r.content_type = "application/json";
    r.content_sha256_b64 = Base64Encode(Sha256(body));
    OciApiKey leaf;
    leaf.key_id = tenancy + "/fed-x509/" + ColonHex(cert.der_sha1);
    leaf.private_key_pem = std::move(leaf_key);
    leaf.what = "the leaf key " + metadata_ + "/identity/key.pem";
    SLUICE_ASSIGN_OR_RETURN(std::string auth, OciAuthorization(r, leaf));

    HttpRequest req;
    req.method = HttpMethod::kPost;
    req.url = federation_;
    req.headers = {{"date", r.date},
                   {"authorization", std::move(auth)},
                   {"content-type", r.content_type},
                   {"x-content-sha256", r.content_sha256_b64}};
    req.body = std::move(body);
    HttpClientOptions options = CredentialEndpointOptions(kIpTimeoutMs);
    options.error_detail = OciErrorDetail;
    auto resp = SendBlocking(std::move(req), options);
    if (!resp.ok()) {
      return resp.status().WithContext("OCI X.509 federation at " + federation_ + " (tenancy " +
                                       tenancy + ")");
    }
    auto json = ParsePyJson(resp->body);
    std::string token = json.ok() ? JsonStringMember(*json, "token") : "";
    if (token.empty()) {
      return CorruptError("OCI X.509 federation at " + federation_ + " answered no token");
    }
    Credential out;
    out.source = "OCI instance principal (metadata " + metadata_ + ", tenancy " + tenancy + ")";
    out.expires_at = JwtExpiry(token);
    out.bearer = std::move(token);
    out.session_key_pem = std::move(session.private_pem);
    return out;
  }

 private:
  std::string metadata_;
  std::string federation_;
};

}  // namespace

std::string OciPemBody(const std::string& pem) {
  std::string out;
  size_t pos = 0;
  while (pos < pem.size()) {
    size_t end = pem.find('\n', pos);
    if (end == std::string::npos) end = pem.size();
    std::string line = pem.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.rfind("-----", 0) != 0) out += line;
    pos = end + 1;
  }
  return out;
}

OciInstancePrincipalEndpoints OciInstancePrincipalEndpointsFromEnv() {
  OciInstancePrincipalEndpoints out;
  out.metadata = MetadataBase(GetEnv("OCI_METADATA_BASE_URL").value_or(""));
  if (out.metadata.empty()) out.metadata = kDefaultMetadata;
  out.federation = GetEnv("SLUICE_OCI_FEDERATION_ENDPOINT").value_or("");
  return out;
}

std::string OciFederationEndpoint(const OciInstancePrincipalEndpoints& endpoints,
                                  const std::string& region) {
  if (!endpoints.federation.empty()) return endpoints.federation;
  return OciServiceEndpoint("auth", region) + "/v1/x509";
}

Result<std::string> FetchOciInstanceRegion(const std::string& metadata) {
  SLUICE_ASSIGN_OR_RETURN(std::string region, MetadataGet(metadata, "instance/region"));
  std::string out;
  for (char c : region) {
    if (!std::isspace(static_cast<unsigned char>(c))) {
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  if (out.empty() || out.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") != std::string::npos) {
    return CorruptError("OCI instance metadata " + metadata + "/instance/region is not a region");
  }
  return CanonicalOciRegion(out, "OCI instance metadata " + metadata + "/instance/region");
}

Result<std::string> FetchOciInstanceId(const std::string& metadata) {
  SLUICE_ASSIGN_OR_RETURN(std::string id, MetadataGet(metadata, "instance/id"));
  std::string out;
  for (char c : id) {
    if (!std::isspace(static_cast<unsigned char>(c))) {
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  if (out.empty()) return CorruptError("OCI instance metadata " + metadata + "/instance/id is empty");
  return out;
}

std::unique_ptr<CredentialSource> MakeOciInstancePrincipalSource(std::string metadata,
                                                                 std::string federation) {
  return std::make_unique<OciInstancePrincipalSource>(std::move(metadata), std::move(federation));
}

std::shared_ptr<SharedCredential> OciInstancePrincipalCredential(const std::string& metadata,
                                                                 const std::string& federation) {
  return SharedCredentialFor(Sha256Hex("oci-instance-principal\n" + metadata + "\n" + federation), [&] {
    std::vector<std::unique_ptr<CredentialSource>> sources;
    sources.push_back(MakeOciInstancePrincipalSource(metadata, federation));
    SharedCredentialOptions options;
    // A request signed with a token about to expire could arrive after it.
    options.min_validity_s = 60;
    options.retry_first_fetch = true;
    return std::make_shared<SharedCredential>(
        std::make_unique<CredentialChain>("OCI instance principal credentials", std::move(sources)),
        options);
  });
}

}  // namespace sluice
