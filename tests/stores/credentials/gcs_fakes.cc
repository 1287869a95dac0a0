#include "tests/stores/credentials/gcs_fakes.h"

#include <ctime>

#include "formats/json/py_json.h"
#include "stores/signing/digest.h"
#include "stores/signing/jwt_rs256.h"
#include "tests/stores/credentials/aws_fakes.h"
#include "tests/stores/credentials/form_fields.h"

namespace sluice::testing {
namespace {

FakeResponse OAuthError(const std::string& code) {
  // Google's description echoes nothing of the request; neither does this.
  return {400,
          {{"content-type", "application/json"}},
          "{\"error\": \"" + code + "\", \"error_description\": \"Bad Request\"}"};
}

FakeResponse RpcError(int status, const std::string& rpc_status) {
  return {status,
          {{"content-type", "application/json"}},
          "{\"error\": {\"code\": " + std::to_string(status) +
              ", \"message\": \"refused\", \"status\": \"" + rpc_status + "\"}}"};
}

}  // namespace

FakeGoogle::FakeGoogle(FakeGoogleExpect expect)
    : expect_(std::move(expect)),
      server_(
          std::make_unique<FakeHttpServer>([this](const FakeRequest& r) { return Handle(r); })) {}

int FakeGoogle::requests(const std::string& path) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = requests_.find(path);
  return it == requests_.end() ? 0 : it->second;
}

std::string FakeGoogle::last(const std::string& path, const std::string& field) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = last_.find(path);
  if (it == last_.end()) return "";
  auto f = it->second.find(field);
  return f == it->second.end() ? "" : f->second;
}

std::vector<std::string> FakeGoogle::last_fields(const std::string& path) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out;
  auto it = last_.find(path);
  if (it == last_.end()) return out;
  for (const auto& [k, v] : it->second) {
    if (k.rfind("header:", 0) != 0 && k != "body") out.push_back(k);
  }
  return out;
}

std::string FakeGoogle::last_object_authorization() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_object_authorization_;
}

FakeResponse FakeGoogle::Issue(const std::string& grant, const std::string& path) {
  std::string token = "ya29." + grant + "-" + std::to_string(++counter_);
  issued_.insert(token);
  if (on_issue) on_issue(token);
  (void)path;
  return {200,
          {{"content-type", "application/json"}},
          "{\"access_token\": \"" + token + "\", \"expires_in\": " +
              std::to_string(expires_in.load()) + ", \"token_type\": \"Bearer\"}"};
}

FakeResponse FakeGoogle::Handle(const FakeRequest& r) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string path = r.target.substr(0, r.target.find('?'));
  std::string key = path;
  if (path.rfind("/v1/projects/-/serviceAccounts/", 0) == 0) key = "iam";
  if (path.rfind("/computeMetadata/", 0) == 0) key = "metadata";
  if (path.rfind("/bkt/", 0) == 0 || path.rfind("/pub/", 0) == 0) key = "objects";
  ++requests_[key];
  std::map<std::string, std::string> record;
  if (key == "/token" || key == "/v1/token") record = FormFields(r.body);
  if (key == "iam") record["body"] = r.body;
  if (key == "metadata" && r.target.find('?') != std::string::npos) {
    record["query"] = r.target.substr(r.target.find('?') + 1);
  }
  for (const auto& [name, value] : r.headers) record["header:" + name] = value;
  last_[key] = record;
  auto field = [&record](const std::string& name) {
    auto it = record.find(name);
    return it == record.end() ? std::string() : it->second;
  };

  if (key == "/token") {
    if (r.method != "POST" ||
        field("header:content-type") != "application/x-www-form-urlencoded") {
      return OAuthError("invalid_request");
    }
    if (reject) return OAuthError("invalid_grant");
    if (field("grant_type") == "refresh_token") {
      if (field("client_id") != expect_.client_id ||
          field("client_secret") != expect_.client_secret) {
        return OAuthError("invalid_client");
      }
      if (field("refresh_token") != expect_.refresh_token) return OAuthError("invalid_grant");
      return Issue("user", path);
    }
    if (field("grant_type") == "urn:ietf:params:oauth:grant-type:jwt-bearer") {
      std::string jwt = field("assertion");
      size_t dot1 = jwt.find('.'), dot2 = jwt.rfind('.');
      if (dot1 == std::string::npos || dot2 == dot1) return OAuthError("invalid_grant");
      std::string claims = jwt.substr(dot1 + 1, dot2 - dot1 - 1);
      for (char& c : claims) {
        if (c == '-') c = '+';
        if (c == '_') c = '/';
      }
      while (claims.size() % 4 != 0) claims += '=';
      std::string decoded;
      Base64Decode(claims, &decoded);
      auto parsed = ParsePyJson(decoded);
      last_[key]["jwt_scope"] = parsed.ok() ? JsonStringMember(*parsed, "scope") : "";
      const std::string audience = parsed.ok() ? JsonStringMember(*parsed, "target_audience") : "";
      last_[key]["jwt_target_audience"] = audience;
      if (!audience.empty()) {  // google-auth's IDTokenCredentials: an ID token for it
        std::string token = "eyJhbGciOiJSUzI1NiJ9." +
                            Base64UrlEncode("{\"aud\": \"" + audience + "\", \"exp\": " +
                                            std::to_string(std::time(nullptr) + expires_in.load()) + "}") +
                            ".id-sig-" + std::to_string(++counter_);
        issued_.insert(token);
        if (on_issue) on_issue(token);
        return {200, {{"content-type", "application/json"}}, "{\"id_token\": \"" + token + "\"}"};
      }
      return Issue("sa", path);
    }
    return OAuthError("unsupported_grant_type");
  }
  if (key == "/v1/token") {
    if (r.method != "POST" || reject) return OAuthError("invalid_grant");
    if (field("grant_type") != "urn:ietf:params:oauth:grant-type:token-exchange" ||
        field("requested_token_type") != "urn:ietf:params:oauth:token-type:access_token") {
      return OAuthError("invalid_request");
    }
    if (field("audience") != expect_.audience) return OAuthError("invalid_target");
    if (field("subject_token_type") != expect_.subject_token_type ||
        field("subject_token") != expect_.subject_token) {
      return OAuthError("invalid_grant");
    }
    if (field("scope").empty()) return OAuthError("invalid_scope");
    return Issue("sts", path);
  }
  if (key == "iam") {
    constexpr std::string_view kSuffix = ":generateAccessToken";
    constexpr std::string_view kIdSuffix = ":generateIdToken";
    const bool id_token = path.size() > kIdSuffix.size() &&
                          path.compare(path.size() - kIdSuffix.size(), kIdSuffix.size(), kIdSuffix) == 0;
    if (r.method != "POST" || (!id_token && (path.size() <= kSuffix.size() ||
                                             path.compare(path.size() - kSuffix.size(), kSuffix.size(), kSuffix) != 0))) {
      return RpcError(404, "NOT_FOUND");
    }
    std::string auth = field("header:authorization");
    if (auth.rfind("Bearer ", 0) != 0 || issued_.count(auth.substr(7)) == 0) {
      return RpcError(401, "UNAUTHENTICATED");
    }
    if (reject) return RpcError(403, "PERMISSION_DENIED");
    auto body = ParsePyJson(r.body);
    if (!body.ok()) return RpcError(400, "INVALID_ARGUMENT");
    if (id_token) {  // IAM Credentials' generateIdToken: an ID token for the audience
      const std::string audience = JsonStringMember(*body, "audience");
      if (audience.empty()) return RpcError(400, "INVALID_ARGUMENT");
      std::string token = "eyJhbGciOiJSUzI1NiJ9." +
                          Base64UrlEncode("{\"aud\": \"" + audience + "\", \"exp\": " +
                                          std::to_string(std::time(nullptr) + expires_in.load()) + "}") +
                          ".id-sig-" + std::to_string(++counter_);
      issued_.insert(token);
      if (on_issue) on_issue(token);
      return {200, {{"content-type", "application/json"}}, "{\"token\": \"" + token + "\"}"};
    }
    const JsonValue* scope = JsonMember(*body, "scope");
    std::string lifetime = JsonStringMember(*body, "lifetime");
    if (scope == nullptr || !std::holds_alternative<JsonValue::Array>(scope->v) ||
        std::get<JsonValue::Array>(scope->v).empty() || lifetime.size() < 2 ||
        lifetime.back() != 's') {
      return RpcError(400, "INVALID_ARGUMENT");
    }
    int64_t seconds = std::stoll(lifetime.substr(0, lifetime.size() - 1));
    std::string token = "ya29.impersonated-" + std::to_string(++counter_);
    issued_.insert(token);
    if (on_issue) on_issue(token);
    return {200,
            {{"content-type", "application/json"}},
            "{\"accessToken\": \"" + token + "\", \"expireTime\": \"" +
                Iso8601(static_cast<int64_t>(std::time(nullptr)) + seconds) + "\"}"};
  }
  if (key == "/subject") {
    if (field("header:metadata") != "True") return {400, {}, "missing Metadata header"};
    return {200,
            {{"content-type", "application/json"}},
            "{\"id_token\": \"" + expect_.subject_token + "\"}"};
  }
  if (key == "metadata") {
    if (field("header:metadata-flavor") != "Google") {
      return {403, {}, "Missing Metadata-Flavor:Google header."};
    }
    if (path != "/computeMetadata/v1/instance/service-accounts/default/token") {
      return {404, {}, "not found"};
    }
    if (reject) return {404, {}, "no service account"};
    return Issue("metadata", path);
  }
  if (key == "objects") {
    last_object_authorization_ = field("header:authorization");
    const std::string& auth = last_object_authorization_;
    if (path == "/pub/data/a.txt") return {200, {}, object_bytes};  // a public bucket
    if (auth.rfind("Bearer ", 0) != 0 || issued_.count(auth.substr(7)) == 0) {
      return {401, {}, "<Error><Code>AuthenticationRequired</Code></Error>"};
    }
    if (path == "/bkt/data/a.txt") return {200, {}, object_bytes};
    return {404, {}, "<Error><Code>NoSuchKey</Code></Error>"};
  }
  return {404, {}, "no such fake endpoint"};
}

}  // namespace sluice::testing
