#include "tests/stores/credentials/aws_fakes.h"

#include <ctime>

#include "formats/json/py_json.h"
#include "tests/stores/credentials/form_fields.h"

namespace sluice::testing {
namespace {

FakeResponse StsError(int status, const std::string& code, const std::string& message) {
  return {status,
          {{"content-type", "text/xml"}},
          "<ErrorResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\"><Error>"
          "<Type>Sender</Type><Code>" +
              code + "</Code><Message>" + message +
              "</Message></Error><RequestId>fake</RequestId></ErrorResponse>"};
}

}  // namespace

std::string Iso8601(int64_t t) {
  std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string CachedSsoToken(const std::string& access, int64_t expires, const std::string& refresh,
                           int64_t registration) {
  return "{\"startUrl\": \"https://corp.awsapps.com/start\", \"region\": \"eu-west-1\", "
         "\"accessToken\": \"" + access + "\", \"expiresAt\": \"" + Iso8601(expires) +
         "\", \"clientId\": \"client-7\", \"clientSecret\": \"client-secret-Zq8\", "
         "\"registrationExpiresAt\": \"" + Iso8601(registration) +
         "\", \"refreshToken\": \"" + refresh + "\"}";
}

FakeSts::FakeSts(FakeCredentialOptions options, std::string signer_key_id,
                 std::string web_identity_token)
    : options_(std::move(options)),
      signer_key_id_(std::move(signer_key_id)),
      web_identity_token_(std::move(web_identity_token)),
      server_(
          std::make_unique<FakeHttpServer>([this](const FakeRequest& r) { return Handle(r); })) {}

std::string FakeSts::last_form(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = last_form_.find(name);
  return it == last_form_.end() ? "" : it->second;
}

std::vector<std::string> FakeSts::assumed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return assumed_;
}

FakeResponse FakeSts::Handle(const FakeRequest& req) {
  if (req.method != "POST" || req.target != "/")
    return StsError(405, "InvalidAction", "POST / only");
  if (req.Header("content-type").rfind("application/x-www-form-urlencoded", 0) != 0) {
    return StsError(400, "InvalidParameterValue", "form body expected");
  }
  auto form = FormFields(req.body);
  {
    std::lock_guard<std::mutex> lock(mu_);
    last_form_ = form;
  }
  const std::string action = form["Action"];
  if (form["Version"] != "2011-06-15") return StsError(400, "InvalidParameterValue", "Version");
  if (form["RoleArn"].rfind("arn:aws:iam::", 0) != 0) {
    return StsError(400, "ValidationError", "RoleArn is not an IAM role ARN");
  }
  if (form["RoleSessionName"].empty()) return StsError(400, "ValidationError", "RoleSessionName");
  std::string assumed;
  if (action == "AssumeRole") {
    const std::string auth = req.Header("authorization");
    const std::string session = req.Header("x-amz-security-token");
    auto signed_by = [&](const std::string& key) {
      return auth.rfind("AWS4-HMAC-SHA256 Credential=" + key + "/", 0) == 0;
    };
    // A session token this fake issued, numbered 1..answers_.
    const std::string prefix = "sts-session-";
    const bool own_session =
        session.rfind(prefix, 0) == 0 && session.size() > prefix.size() &&
        session.find_first_not_of("0123456789", prefix.size()) == std::string::npos &&
        std::stoll(session.substr(prefix.size())) <= answers_;
    if (!(signed_by(signer_key_id_) || (signed_by(options_.keys.access_key_id) && own_session)) ||
        auth.find("/sts/aws4_request") == std::string::npos || req.Header("x-amz-date").empty()) {
      return StsError(403, "InvalidClientTokenId",
                      "The security token included in the request is invalid.");
    }
    assumed = form["RoleArn"] + " by " +
              (signed_by(signer_key_id_) ? signer_key_id_ : options_.keys.access_key_id) +
              (session.empty() ? "" : " with " + session);
  } else if (action == "AssumeRoleWithWebIdentity") {
    if (form["WebIdentityToken"] != web_identity_token_) {
      return StsError(400, "InvalidIdentityToken",
                      "Couldn't retrieve verification key from your identity provider");
    }
  } else {
    return StsError(400, "InvalidAction", "unknown action");
  }
  if (!assumed.empty()) {
    std::lock_guard<std::mutex> lock(mu_);
    assumed_.push_back(assumed);
  }
  int n = ++answers_;
  int64_t expires = static_cast<int64_t>(std::time(nullptr)) + options_.lifetime_s;
  return {200,
          {{"content-type", "text/xml"}},
          "<" + action + "Response xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\"><" + action +
              "Result><Credentials><AccessKeyId>" + options_.keys.access_key_id +
              "</AccessKeyId><SecretAccessKey>" + options_.keys.secret_access_key +
              "</SecretAccessKey><SessionToken>sts-session-" + std::to_string(n) +
              "</SessionToken><Expiration>" + Iso8601(expires) +
              "</Expiration></Credentials><AssumedRoleUser><Arn>" + form["RoleArn"] +
              "</Arn></AssumedRoleUser></" + action + "Result></" + action + "Response>"};
}

FakeImds::FakeImds(FakeCredentialOptions options, std::string role)
    : options_(std::move(options)),
      role_(std::move(role)),
      server_(
          std::make_unique<FakeHttpServer>([this](const FakeRequest& r) { return Handle(r); })) {}

FakeResponse FakeImds::Handle(const FakeRequest& req) {
  if (req.target == "/latest/api/token") {
    if (req.method != "PUT") {
      ++refused_;
      return {405, {}, ""};
    }
    const std::string ttl = req.Header("x-aws-ec2-metadata-token-ttl-seconds");
    int seconds = ttl.empty() ? 0 : std::atoi(ttl.c_str());
    if (seconds < 1 || seconds > 21600) {
      ++refused_;
      return {400, {}, ""};
    }
    std::string token = "imds-token-" + std::to_string(++tokens_);
    std::lock_guard<std::mutex> lock(mu_);
    issued_.insert(token);
    return {200, {{"x-aws-ec2-metadata-token-ttl-seconds", ttl}}, token};
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (req.method != "GET" || !issued_.count(req.Header("x-aws-ec2-metadata-token"))) {
      ++refused_;
      return {401, {}, ""};  // IMDSv2 only: no IMDSv1 answers
    }
  }
  const std::string roles = "/latest/meta-data/iam/security-credentials/";
  if (req.target == roles) {
    return role_.empty() ? FakeResponse{404, {}, ""} : FakeResponse{200, {}, role_};
  }
  if (!role_.empty() && req.target == roles + role_) {
    int n = ++answers_;
    int64_t now = static_cast<int64_t>(std::time(nullptr));
    return {200,
            {{"content-type", "text/plain"}},
            "{\n  \"Code\" : \"Success\",\n  \"LastUpdated\" : \"" + Iso8601(now) +
                "\",\n  \"Type\" : \"AWS-HMAC\",\n  \"AccessKeyId\" : \"" +
                options_.keys.access_key_id + "\",\n  \"SecretAccessKey\" : \"" +
                options_.keys.secret_access_key + "\",\n  \"Token\" : \"imds-session-" +
                std::to_string(n) + "\",\n  \"Expiration\" : \"" +
                Iso8601(now + options_.lifetime_s) + "\"\n}"};
  }
  return {404, {}, ""};
}

FakeContainerEndpoint::FakeContainerEndpoint(FakeCredentialOptions options, std::string path,
                                             std::string token)
    : options_(std::move(options)),
      path_(std::move(path)),
      token_(std::move(token)),
      server_(
          std::make_unique<FakeHttpServer>([this](const FakeRequest& r) { return Handle(r); })) {}

FakeResponse FakeContainerEndpoint::Handle(const FakeRequest& req) {
  if (req.method != "GET" || req.target != path_) return {404, {}, ""};
  if (!token_.empty() && req.Header("authorization") != token_) {
    return {401,
            {{"content-type", "application/json"}},
            "{\"code\":\"AccessDeniedException\",\"message\":\"invalid token\"}"};
  }
  int n = ++answers_;
  int64_t now = static_cast<int64_t>(std::time(nullptr));
  return {200,
          {{"content-type", "application/json"}},
          "{\"AccessKeyId\":\"" + options_.keys.access_key_id + "\",\"SecretAccessKey\":\"" +
              options_.keys.secret_access_key + "\",\"Token\":\"container-session-" +
              std::to_string(n) + "\",\"Expiration\":\"" + Iso8601(now + options_.lifetime_s) +
              "\",\"RoleArn\":\"arn:aws:iam::123456789012:role/task\"}"};
}

FakeSsoPortal::FakeSsoPortal(FakeCredentialOptions options, std::string bearer, std::string account,
                             std::string role)
    : options_(std::move(options)),
      bearer_(std::move(bearer)),
      account_(std::move(account)),
      role_(std::move(role)),
      server_(
          std::make_unique<FakeHttpServer>([this](const FakeRequest& r) { return Handle(r); })) {}

FakeResponse FakeSsoPortal::Handle(const FakeRequest& req) {
  if (req.Header("x-amz-sso_bearer_token") != bearer_) {
    return {401,
            {{"content-type", "application/json"}},
            "{\"message\":\"Session token not found or invalid\"}"};
  }
  if (req.method != "GET" ||
      req.target != "/federation/credentials?account_id=" + account_ + "&role_name=" + role_) {
    return {403, {{"content-type", "application/json"}}, "{\"message\":\"No access\"}"};
  }
  int n = ++answers_;
  int64_t expires_ms = (static_cast<int64_t>(std::time(nullptr)) + options_.lifetime_s) * 1000;
  return {200,
          {{"content-type", "application/json"}},
          "{\"roleCredentials\":{\"accessKeyId\":\"" + options_.keys.access_key_id +
              "\",\"secretAccessKey\":\"" + options_.keys.secret_access_key +
              "\",\"sessionToken\":\"sso-session-" + std::to_string(n) +
              "\",\"expiration\":" + std::to_string(expires_ms) + "}}"};
}

FakeSsoOidc::FakeSsoOidc(std::string client_id, std::string client_secret,
                         std::string refresh_token, std::string access_token, int64_t lifetime_s)
    : client_id_(std::move(client_id)),
      client_secret_(std::move(client_secret)),
      access_token_(std::move(access_token)),
      lifetime_s_(lifetime_s),
      refresh_token_(std::move(refresh_token)),
      server_(
          std::make_unique<FakeHttpServer>([this](const FakeRequest& r) { return Handle(r); })) {}

FakeResponse FakeSsoOidc::Handle(const FakeRequest& req) {
  auto error = [this](const std::string& code) -> FakeResponse {
    ++refused_;
    return {400,
            {{"content-type", "application/json"}},
            "{\"error\":\"" + code + "\",\"error_description\":\"fake refused\"}"};
  };
  if (req.method != "POST" || req.target != "/token") return {404, {}, ""};
  if (req.Header("content-type").rfind("application/json", 0) != 0) {
    return error("invalid_request");
  }
  auto body = ParsePyJson(req.body);
  if (!body.ok()) return error("invalid_request");
  auto field = [&](const char* name) -> std::string {
    const auto* object = std::get_if<JsonValue::Object>(&body->v);
    if (object == nullptr) return "";
    for (const auto& [k, v] : *object) {
      if (k == name) {
        const auto* s = std::get_if<std::string>(&v.v);
        return s ? *s : "";
      }
    }
    return "";
  };
  if (field("grantType") != "refresh_token") return error("unsupported_grant_type");
  if (field("clientId") != client_id_ || field("clientSecret") != client_secret_) {
    return error("invalid_client");
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (field("refreshToken") != refresh_token_) return error("invalid_grant");
  int n = ++answers_;
  refresh_token_ = "refresh-" + std::to_string(n);
  return {200,
          {{"content-type", "application/json"}},
          "{\"accessToken\":\"" + access_token_ + "\",\"expiresIn\":" +
              std::to_string(lifetime_s_) + ",\"refreshToken\":\"" + refresh_token_ +
              "\",\"tokenType\":\"Bearer\"}"};
}

}  // namespace sluice::testing
