#include "stores/credentials/aws_sts.h"

#include <utility>
#include <vector>

#include "stores/common/object_http.h"
#include "stores/common/store_keys.h"
#include "stores/credentials/aws_credential_documents.h"
#include "stores/credentials/blocking_http.h"
#include "stores/signing/digest.h"
#include "stores/signing/uri_encoding.h"

namespace sluice {
namespace {

constexpr int64_t kStsTimeoutMs = 10000;

std::string Form(const std::vector<std::pair<std::string, std::string>>& fields) {
  std::string out;
  for (const auto& [name, value] : fields) {
    if (!out.empty()) out += '&';
    out += UriEncode(name) + "=" + UriEncode(value);
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> RoleFields(const StsRoleRequest& r,
                                                            std::string action) {
  std::vector<std::pair<std::string, std::string>> f = {{"Action", std::move(action)},
                                                        {"Version", "2011-06-15"},
                                                        {"RoleArn", r.role_arn},
                                                        {"RoleSessionName", r.session_name}};
  if (r.duration_seconds) f.push_back({"DurationSeconds", std::to_string(*r.duration_seconds)});
  return f;
}

std::string Authority(const Url& u) {
  std::string host = u.is_ipv6_literal() ? "[" + u.host + "]" : u.host;
  return u.explicit_port ? host + ":" + std::to_string(u.port) : host;
}

Result<Credential> Post(const StsRoleRequest& r, const std::string& action, std::string body,
                        HttpHeaders headers) {
  HttpRequest req;
  req.method = HttpMethod::kPost;
  req.url = r.endpoint.scheme + "://" + Authority(r.endpoint) + "/";
  req.headers = std::move(headers);
  req.headers.emplace_back("content-type", "application/x-www-form-urlencoded; charset=utf-8");
  req.body = std::move(body);
  HttpClientOptions options = CredentialEndpointOptions(kStsTimeoutMs);
  options.error_detail = XmlErrorDetail;  // STS's <Code>: <Message>, no secret
  auto resp = SendBlocking(std::move(req), std::move(options));
  if (!resp.ok()) {
    return Status(resp.status().code(), r.source + ": STS " + action + " for " + r.role_arn +
                                            " failed: " + resp.status().message());
  }
  return ParseStsCredentialsXml(resp->body, action, r.source);
}

}  // namespace

Result<Credential> StsAssumeRole(const StsRoleRequest& r, const SigV4Credentials& signer,
                                 int64_t now) {
  auto fields = RoleFields(r, "AssumeRole");
  if (!r.external_id.empty()) fields.push_back({"ExternalId", r.external_id});
  std::string body = Form(fields);
  SigningRequest sr;
  sr.method = "POST";
  sr.path = "/";
  sr.headers.push_back({"content-type", "application/x-www-form-urlencoded; charset=utf-8"});
  sr.headers.push_back({"host", Authority(r.endpoint)});
  sr.payload_hash = Sha256Hex(body);
  auto sig = SignSigV4Headers(sr, signer, ServiceSigV4Config(r.region, "sts"), now);
  if (!sig.ok()) return sig.status().WithContext(r.source + ": signing AssumeRole");
  HttpHeaders headers;
  for (const auto& h : sig->headers_to_add) headers.emplace_back(h.name, h.value);
  return Post(r, "AssumeRole", std::move(body), std::move(headers));
}

Result<Credential> StsAssumeRoleWithWebIdentity(const StsRoleRequest& r,
                                                const std::string& web_identity_token) {
  auto fields = RoleFields(r, "AssumeRoleWithWebIdentity");
  fields.push_back({"WebIdentityToken", web_identity_token});
  return Post(r, "AssumeRoleWithWebIdentity", Form(fields), {});
}

}  // namespace sluice
