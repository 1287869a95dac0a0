// The two AWS credential endpoints that live on the machine's network: the
// container endpoint (ECS, EKS Pod Identity) and EC2 instance metadata.
#include "base/ascii.h"
#include "base/file.h"
#include "stores/common/store_keys.h"
#include "stores/credentials/aws_credential_documents.h"
#include "stores/credentials/aws_sources.h"
#include "stores/credentials/blocking_http.h"

namespace sluice {
namespace {

constexpr int64_t kContainerTimeoutMs = 2000;
constexpr int64_t kImdsTimeoutMs = 1000;  // boto3's metadata_service_timeout
constexpr uint64_t kMaxMetadataTokenFile = uint64_t{1} << 16;

bool EnvTrue(const char* name) {
  auto v = GetEnv(name);
  return v && AsciiToLower(*v) == "true";
}

// The hosts AWS_CONTAINER_CREDENTIALS_FULL_URI may name over plain http, as
// the AWS SDKs allow: loopback, and the ECS and EKS Pod Identity addresses.
bool AllowedPlainHttpHost(const std::string& host) {
  return host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1" ||
         host == "169.254.170.2" || host == "169.254.170.23" || host == "fd00:ec2::23";
}

class AwsContainerSource final : public CredentialSource {
 public:
  explicit AwsContainerSource(AwsEndpointOptions endpoints) : endpoints_(std::move(endpoints)) {}

  std::string name() const override { return "container endpoint"; }

  Result<Credential> Fetch(int64_t /*now*/) override {
    std::string url;
    if (auto rel = GetEnv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"); rel && !rel->empty()) {
      url = endpoints_.container_host + (rel->front() == '/' ? "" : "/") + *rel;
    } else if (auto full = GetEnv("AWS_CONTAINER_CREDENTIALS_FULL_URI"); full && !full->empty()) {
      auto parsed = ParseUrl(*full);
      if (!parsed.ok()) {
        return InvalidArgumentError("AWS_CONTAINER_CREDENTIALS_FULL_URI is not an http(s) URL");
      }
      if (parsed->scheme != "https" && !AllowedPlainHttpHost(parsed->host)) {
        return InvalidArgumentError(
            "AWS_CONTAINER_CREDENTIALS_FULL_URI " + parsed->Redacted() +
            ": plain http only to a loopback address, 169.254.170.2 or 169.254.170.23");
      }
      url = *full;
    } else {
      return NotFoundError(
          "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI and AWS_CONTAINER_CREDENTIALS_FULL_URI not set");
    }
    HttpRequest req;
    req.url = url;
    std::string token;
    if (auto file = GetEnv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"); file && !file->empty()) {
      auto read = ReadFile(*file, kMaxMetadataTokenFile);
      if (!read.ok()) {
        return PermissionDeniedError("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE: " +
                                     read.status().message());
      }
      token = std::move(*read);
      while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) token.pop_back();
    } else {
      token = GetEnv("AWS_CONTAINER_AUTHORIZATION_TOKEN").value_or("");
    }
    if (token.find_first_of("\r\n") != std::string::npos) {
      return InvalidArgumentError("the container authorization token holds a line break");
    }
    if (!token.empty()) req.headers.emplace_back("authorization", token);
    auto resp = SendBlocking(std::move(req), CredentialEndpointOptions(kContainerTimeoutMs));
    if (!resp.ok()) {
      return Status(
          IsNotFound(resp.status()) ? StatusCode::kPermissionDenied : resp.status().code(),
          resp.status().message());
    }
    SLUICE_ASSIGN_OR_RETURN(Credential out,
                            ParseAwsCredentialJson(resp->body, AwsCredentialJson::kEndpoint,
                                                   "container endpoint " + UrlForErrors(url)));
    out.source = "container endpoint";
    return out;
  }

 private:
  AwsEndpointOptions endpoints_;
};

}  // namespace

bool DmiSaysEc2(const std::string& dmi_dir, std::string* why_not) {
  for (const char* file : {"sys_vendor", "product_name", "board_vendor"}) {
    auto text = ReadFile(dmi_dir + "/" + file, 4096);
    if (text.ok() &&
        (text->find("Amazon") != std::string::npos || text->find("EC2") != std::string::npos)) {
      return true;
    }
  }
  *why_not = "not on EC2 (" + dmi_dir +
             "/{sys_vendor,product_name,board_vendor} name neither Amazon nor EC2; set "
             "AWS_EC2_METADATA_SERVICE_ENDPOINT to probe anyway)";
  return false;
}

namespace {

class AwsImdsSource final : public CredentialSource {
 public:
  explicit AwsImdsSource(AwsEndpointOptions endpoints) : endpoints_(std::move(endpoints)) {}

  std::string name() const override { return "EC2 instance metadata"; }

  Result<Credential> Fetch(int64_t /*now*/) override {
    if (EnvTrue("AWS_EC2_METADATA_DISABLED")) {
      return NotFoundError("AWS_EC2_METADATA_DISABLED is true");
    }
    std::string base;
    if (auto ep = GetEnv("AWS_EC2_METADATA_SERVICE_ENDPOINT"); ep && !ep->empty()) {
      auto parsed = ParseUrl(*ep);
      if (!parsed.ok()) {
        return InvalidArgumentError("AWS_EC2_METADATA_SERVICE_ENDPOINT is not an http(s) URL");
      }
      base = *ep;
      while (!base.empty() && base.back() == '/') base.pop_back();
    } else {
      std::string why_not;
      if (!DmiSaysEc2(endpoints_.dmi_dir, &why_not)) return NotFoundError(why_not);
      auto mode = GetEnv("AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE");
      base = mode && AsciiToLower(*mode) == "ipv6" ? "http://[fd00:ec2::254]"
                                                   : "http://169.254.169.254";
    }
    const std::string where = UrlForErrors(base);
    HttpRequest token_req;
    token_req.method = HttpMethod::kPut;
    token_req.url = base + "/latest/api/token";
    token_req.headers.emplace_back("x-aws-ec2-metadata-token-ttl-seconds", "21600");
    auto token = SendBlocking(std::move(token_req), CredentialEndpointOptions(kImdsTimeoutMs));
    if (!token.ok()) {
      return UnavailableError(where + ": no IMDSv2 session token: " + token.status().message());
    }
    std::string session = token->body;
    if (session.empty() || session.find_first_of("\r\n") != std::string::npos) {
      return UnavailableError(where + ": the IMDSv2 session token is empty or malformed");
    }
    auto get = [&](const std::string& path) {
      HttpRequest req;
      req.url = base + path;
      req.headers.emplace_back("x-aws-ec2-metadata-token", session);
      return SendBlocking(std::move(req), CredentialEndpointOptions(kImdsTimeoutMs));
    };
    const std::string roles_path = "/latest/meta-data/iam/security-credentials/";
    auto roles = get(roles_path);
    if (!roles.ok()) {
      if (IsNotFound(roles.status())) {
        return PermissionDeniedError(where + ": the instance has no IAM role attached");
      }
      return roles.status().WithContext(where);
    }
    std::string role = roles->body.substr(0, roles->body.find('\n'));
    while (!role.empty() && (role.back() == '\r' || role.back() == ' ')) role.pop_back();
    if (role.empty() || role.find('/') != std::string::npos) {
      return PermissionDeniedError(where + ": the instance has no IAM role attached");
    }
    auto creds = get(roles_path + role);
    if (!creds.ok()) return creds.status().WithContext(where);
    SLUICE_ASSIGN_OR_RETURN(Credential out,
                            ParseAwsCredentialJson(creds->body, AwsCredentialJson::kEndpoint,
                                                   where + " (role '" + role + "')"));
    // (errors above name the endpoint; the chain adds the source's name)
    out.source = "EC2 instance metadata (role '" + role + "')";
    return out;
  }

 private:
  AwsEndpointOptions endpoints_;
};

}  // namespace

std::unique_ptr<CredentialSource> MakeAwsContainerSource(AwsEndpointOptions endpoints) {
  return std::make_unique<AwsContainerSource>(std::move(endpoints));
}

std::unique_ptr<CredentialSource> MakeAwsImdsSource(AwsEndpointOptions endpoints) {
  return std::make_unique<AwsImdsSource>(std::move(endpoints));
}

}  // namespace sluice
