// A loopback fake of Google's credential endpoints and of GCS's XML API,
// for tests only: no emulator of Google's OAuth2, STS or IAM Credentials
// endpoints runs here. One server answers every path, checking what
// Google's endpoints check and refusing like them:
//   POST /token            OAuth2: grant_type=refresh_token with the
//                          expected client_id, client_secret and
//                          refresh_token (400 invalid_grant / invalid_client),
//                          or a JWT-bearer grant (its claims recorded; with
//                          a target_audience, an ID token for it:
//                          {"id_token": a JWT with aud and exp});
//   POST /v1/token         STS token exchange: grant_type token-exchange,
//                          requested_token_type access_token, the expected
//                          audience, subject_token and subject_token_type;
//   POST /v1/projects/-/serviceAccounts/EMAIL:generateAccessToken
//                          IAM: a Bearer token this fake issued, a JSON body
//                          with "scope" (a list) and "lifetime" ("Ns");
//   GET  /subject          a subject token (JSON {"id_token": ...}) behind
//                          the header "Metadata: True";
//   GET  /computeMetadata/v1/instance/service-accounts/default/token
//                          with Metadata-Flavor: Google;
//   GET/HEAD /bkt/KEY      an object, for a bearer token it issued (401
//                          otherwise); /pub/data/a.txt for anyone (a public
//                          bucket).
// Tokens are "ya29.<grant>-<n>". Every request's form (or JSON body) and
// headers are recorded per path. Thread-safe (the server's threads run the
// handler).
#pragma once

#include <functional>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "tests/stores/common/fake_http_server.h"

namespace sluice::testing {

struct FakeGoogleExpect {
  std::string client_id = "client-123.apps.googleusercontent.com";
  std::string client_secret = "client-secret-never-shown";
  std::string refresh_token = "1//refresh-token-never-shown";
  std::string audience =
      "//iam.googleapis.com/projects/123/locations/global/workloadIdentityPools/pool/providers/p";
  std::string subject_token = "eyJ.subject-token-never-shown.sig";
  std::string subject_token_type = "urn:ietf:params:oauth:token-type:jwt";
};

class FakeGoogle {
 public:
  explicit FakeGoogle(FakeGoogleExpect expect = {});
  std::string url() const { return server_->url(); }
  std::string host() const { return url().substr(7); }  // host:port, for GCE_METADATA_HOST
  const FakeGoogleExpect& expect() const { return expect_; }

  // Requests answered (any status) on `path` ("/token", "/v1/token",
  // "iam", "/subject", "metadata", "objects").
  int requests(const std::string& path) const;
  // A form field (or for "iam" the JSON body as "body", for "metadata" the
  // query as "query", or a header as "header:NAME") of the last request on
  // `path`; "" when absent.
  std::string last(const std::string& path, const std::string& field) const;
  // The form fields' names of the last request on `path`, sorted.
  std::vector<std::string> last_fields(const std::string& path) const;
  // The Authorization of the last object request.
  std::string last_object_authorization() const;

  std::atomic<int> expires_in{3600};
  std::atomic<bool> reject{false};  // every credential endpoint refuses
  // Told every token issued (another fake that must accept them); set
  // before the first request.
  std::function<void(const std::string&)> on_issue;

  const std::string object_bytes = "hello from gcs via adc";

 private:
  FakeResponse Handle(const FakeRequest& r);
  FakeResponse Issue(const std::string& grant, const std::string& path);
  FakeGoogleExpect expect_;
  mutable std::mutex mu_;
  std::map<std::string, int> requests_;
  std::map<std::string, std::map<std::string, std::string>> last_;
  std::set<std::string> issued_;
  std::string last_object_authorization_;
  int counter_ = 0;
  std::unique_ptr<FakeHttpServer> server_;  // last: stops before the members it uses go
};

}  // namespace sluice::testing
