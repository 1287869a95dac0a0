// Managed identity: App Service / Azure ML endpoints from the environment,
// else the instance metadata service (IMDS), only where it can exist.
#include "base/file.h"
#include "stores/common/store_keys.h"
#include "stores/credentials/azure_identity_sources.h"
#include "stores/credentials/azure_token.h"
#include "stores/credentials/blocking_http.h"
#include "stores/http/url.h"
#include "stores/signing/uri_encoding.h"

namespace sluice {
namespace {

// azure-identity gives managed identity endpoints a few seconds; IMDS
// answers within one on a VM.
constexpr int64_t kEndpointTimeoutMs = 5000;
constexpr char kAzureAssetTag[] = "7783-7084-3265-9085";

struct Endpoint {
  std::string kind;  // "App Service", "Azure ML", "IMDS"
  std::string url;   // with its query
  std::string shown;  // for error text: without the query
  std::pair<std::string, std::string> header;
};

std::string Query(const std::string& api_version, const char* client_param) {
  std::string q = "api-version=" + api_version + "&resource=" + UriEncode(kAzureStorageResource);
  if (auto id = GetEnv("AZURE_CLIENT_ID")) q += std::string("&") + client_param + "=" + UriEncode(*id);
  return q;
}

std::string WithQuery(std::string url, const std::string& query) {
  return url + (url.find('?') == std::string::npos ? "?" : "&") + query;
}

class AzureManagedIdentitySource final : public CredentialSource {
 public:
  explicit AzureManagedIdentitySource(AzureEndpointOptions endpoints)
      : endpoints_(std::move(endpoints)) {}

  std::string name() const override { return "managed identity"; }

  Result<Credential> Fetch(int64_t now) override {
    SLUICE_ASSIGN_OR_RETURN(Endpoint ep, Choose());
    HttpRequest req;
    req.url = ep.url;
    if (ep.header.second.find_first_of("\r\n") != std::string::npos) {
      return InvalidArgumentError("the " + ep.kind + " identity header holds a line break");
    }
    req.headers.push_back(ep.header);
    HttpClientOptions options = CredentialEndpointOptions(kEndpointTimeoutMs);
    options.error_detail = [](std::string_view body) { return AzureTokenErrorDetail(body); };
    const std::string where = ep.kind + " endpoint " + RedactUrl(ep.shown);
    auto resp = SendBlocking(std::move(req), std::move(options));
    if (!resp.ok()) {
      // IMDS says 400 when no identity (or not the one asked for) is
      // assigned: azure-identity then goes on, and so does the chain.
      if (ep.kind == "IMDS" && resp.status().message().find(" 400 ") != std::string::npos) {
        return NotFoundError(where + ": no identity assigned to this machine (" +
                             resp.status().message() + ")");
      }
      StatusCode code =
          IsNotFound(resp.status()) ? StatusCode::kPermissionDenied : resp.status().code();
      return Status(code, where + ": " + resp.status().message());
    }
    SLUICE_ASSIGN_OR_RETURN(Credential c, ParseAzureTokenResponse(resp->body, now, where));
    auto id = GetEnv("AZURE_CLIENT_ID");
    c.source = "managed identity (" + ep.kind + (id ? ", client id " + *id : "") + ")";
    return c;
  }

 private:
  Result<Endpoint> Choose() const {
    auto identity_endpoint = GetEnv("IDENTITY_ENDPOINT");
    auto identity_header = GetEnv("IDENTITY_HEADER");
    if (identity_endpoint) {
      if (identity_header && GetEnv("IDENTITY_SERVER_THUMBPRINT")) {
        return UnimplementedError("Service Fabric managed identity (IDENTITY_SERVER_THUMBPRINT) is not supported");
      }
      if (identity_header) {
        return Endpoint{"App Service", WithQuery(*identity_endpoint, Query("2019-08-01", "client_id")),
                        *identity_endpoint, {"x-identity-header", *identity_header}};
      }
      if (GetEnv("IMDS_ENDPOINT")) {
        return UnimplementedError("Azure Arc managed identity (IMDS_ENDPOINT) is not supported");
      }
    }
    auto msi_endpoint = GetEnv("MSI_ENDPOINT");
    if (msi_endpoint) {
      auto secret = GetEnv("MSI_SECRET");
      if (!secret) {
        return UnimplementedError("Cloud Shell managed identity (MSI_ENDPOINT without MSI_SECRET) is not supported");
      }
      return Endpoint{"Azure ML", WithQuery(*msi_endpoint, Query("2017-09-01", "clientid")),
                      *msi_endpoint, {"secret", *secret}};
    }
    std::string base = endpoints_.imds_endpoint;
    if (base.empty()) base = GetEnv("AZURE_POD_IDENTITY_AUTHORITY_HOST").value_or("");
    if (base.empty()) {
      auto disabled = GetEnv("SLUICE_AZURE_METADATA_DISABLED");
      if (disabled && (*disabled == "1" || *disabled == "true")) {
        return NotFoundError("SLUICE_AZURE_METADATA_DISABLED is set");
      }
      std::string why_not;
      if (!DmiSaysAzure(endpoints_.dmi_dir, &why_not)) return NotFoundError(why_not);
      base = "http://169.254.169.254";
    }
    while (!base.empty() && base.back() == '/') base.pop_back();
    const std::string token_url = base + "/metadata/identity/oauth2/token";
    return Endpoint{"IMDS", token_url + "?" + Query("2018-02-01", "client_id"), token_url,
                    {"metadata", "true"}};
  }

  AzureEndpointOptions endpoints_;
};

}  // namespace

bool DmiSaysAzure(const std::string& dmi_dir, std::string* why_not) {
  auto tag = ReadFile(dmi_dir + "/chassis_asset_tag", 4096);
  if (tag.ok() && tag->find(kAzureAssetTag) != std::string::npos) return true;
  *why_not = std::string("not on an Azure VM (") + dmi_dir +
             "/chassis_asset_tag is not Azure's; IDENTITY_ENDPOINT, MSI_ENDPOINT and "
             "AZURE_POD_IDENTITY_AUTHORITY_HOST not set)";
  return false;
}

std::unique_ptr<CredentialSource> MakeAzureManagedIdentitySource(AzureEndpointOptions endpoints) {
  return std::make_unique<AzureManagedIdentitySource>(std::move(endpoints));
}

}  // namespace sluice
