// Loopback fakes of the AWS credential endpoints, for tests only: no
// emulator of STS, EC2 instance metadata or the ECS/EKS container endpoint
// runs here. Each checks what the real service checks and refuses like it:
//   FakeSts: POST form (Action, Version=2011-06-15, RoleArn, RoleSessionName);
//     AssumeRole must carry a SigV4 Authorization for service "sts" made with
//     the expected access key, or with the key it hands out together with a
//     session token it issued (a role session assuming the next role),
//     AssumeRoleWithWebIdentity the expected token; answers STS's XML (or
//     its ErrorResponse).
//   FakeImds: IMDSv2 only: PUT /latest/api/token needs
//     X-aws-ec2-metadata-token-ttl-seconds in 1..21600; every GET needs a
//     token it issued (401 otherwise); one role.
//   FakeContainerEndpoint: GET of its path with the expected Authorization.
// Each hands out `keys` (the s3rver's pair, so reads through s3rver work)
// with a session token numbered per answer and an Expiration `lifetime_s`
// from now. Thread-safe (the server's threads run the handlers).
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "stores/signing/sigv4.h"
#include "tests/stores/common/fake_http_server.h"

namespace sluice::testing {

// "YYYY-MM-DDTHH:MM:SSZ" for unix time `t`.
std::string Iso8601(int64_t t);

// An AWS SSO token cache file (~/.aws/sso/cache/<sha1>.json) of the start
// URL https://corp.awsapps.com/start, client "client-7", region eu-west-1.
std::string CachedSsoToken(const std::string& access, int64_t expires, const std::string& refresh,
                           int64_t registration);

struct FakeCredentialOptions {
  SigV4Credentials keys;  // handed out (session token replaced)
  int64_t lifetime_s = 3600;
};

class FakeSts {
 public:
  FakeSts(FakeCredentialOptions options, std::string signer_key_id, std::string web_identity_token);
  std::string url() const { return server_->url(); }
  int answers() const { return answers_; }               // credentials handed out
  std::string last_form(const std::string& name) const;  // a field of the last request
  // "<RoleArn> by <signing key id>[ with sts-session-N]" of each AssumeRole answered, in order.
  std::vector<std::string> assumed() const;

 private:
  FakeResponse Handle(const FakeRequest& req);
  FakeCredentialOptions options_;
  std::string signer_key_id_, web_identity_token_;
  std::atomic<int> answers_{0};
  mutable std::mutex mu_;
  std::map<std::string, std::string> last_form_;
  std::vector<std::string> assumed_;
  std::unique_ptr<FakeHttpServer> server_;
};

class FakeImds {
 public:
  FakeImds(FakeCredentialOptions options, std::string role);
  std::string url() const { return server_->url(); }
  int answers() const { return answers_; }
  int refused() const { return refused_; }  // requests refused (no/unknown token, bad TTL)

 private:
  FakeResponse Handle(const FakeRequest& req);
  FakeCredentialOptions options_;
  std::string role_;
  std::atomic<int> answers_{0}, refused_{0}, tokens_{0};
  std::mutex mu_;
  std::set<std::string> issued_;
  std::unique_ptr<FakeHttpServer> server_;
};

class FakeContainerEndpoint {
 public:
  FakeContainerEndpoint(FakeCredentialOptions options, std::string path, std::string token);
  std::string url() const { return server_->url(); }
  int answers() const { return answers_; }

 private:
  FakeResponse Handle(const FakeRequest& req);
  FakeCredentialOptions options_;
  std::string path_, token_;
  std::atomic<int> answers_{0};
  std::unique_ptr<FakeHttpServer> server_;
};

// The SSO portal's GetRoleCredentials: GET /federation/credentials with
// account_id and role_name, authorized by x-amz-sso_bearer_token.
class FakeSsoPortal {
 public:
  FakeSsoPortal(FakeCredentialOptions options, std::string bearer, std::string account,
                std::string role);
  std::string url() const { return server_->url(); }
  int answers() const { return answers_; }

 private:
  FakeResponse Handle(const FakeRequest& req);
  FakeCredentialOptions options_;
  std::string bearer_, account_, role_;
  std::atomic<int> answers_{0};
  std::unique_ptr<FakeHttpServer> server_;
};

// SSO-OIDC's CreateToken with grantType refresh_token: POST /token, a JSON
// body with the registered clientId and clientSecret and the current
// refresh token; answers a new access token (`access_token`, expiresIn
// `lifetime_s`) and rotates the refresh token ("refresh-<n>"), so a refresh
// token works once. Refuses like the service: 400 {"error": "invalid_grant"}
// or "invalid_client".
class FakeSsoOidc {
 public:
  FakeSsoOidc(std::string client_id, std::string client_secret, std::string refresh_token,
              std::string access_token, int64_t lifetime_s);
  std::string url() const { return server_->url(); }
  int answers() const { return answers_; }
  int refused() const { return refused_; }

 private:
  FakeResponse Handle(const FakeRequest& req);
  std::string client_id_, client_secret_, access_token_;
  int64_t lifetime_s_;
  std::mutex mu_;
  std::string refresh_token_;
  std::atomic<int> answers_{0}, refused_{0};
  std::unique_ptr<FakeHttpServer> server_;
};

}  // namespace sluice::testing
