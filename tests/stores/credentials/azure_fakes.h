// Loopback fakes of Azure's token endpoints and of a Blob endpoint that takes
// bearer tokens, for tests only (no emulator of Entra ID or IMDS exists; the
// Blob fake lets tests set token lifetimes, azurite is the real storage in
// azure_azurite_bearer_test.cc). Each checks what the real service checks
// and refuses like it:
//   FakeEntraId: POST /<tenant>/oauth2/v2.0/token, form-encoded, with
//     grant_type=client_credentials, the expected client_id and
//     scope=https://storage.azure.com/.default, and one of: the expected
//     client_secret; a client_assertion (type jwt-bearer) equal to the
//     expected federated token; or an RS256 JWT whose signature verifies
//     with the expected certificate's public key, whose x5t is that
//     certificate's thumbprint, aud this endpoint, iss = sub = client_id and
//     exp in the future. Answers {"token_type","expires_in","access_token":
//     "entra-token-<n>"}; refuses 400/401 {"error","error_description"}.
//   FakeManagedIdentity: IMDS (GET /metadata/identity/oauth2/token,
//     api-version=2018-02-01, Metadata: true; string expires_in), App Service
//     (GET /msi/token, api-version=2019-08-01, X-IDENTITY-HEADER; string
//     expires_on) or Azure ML (GET /msi/token, api-version=2017-09-01, header
//     secret; integer expires_on), each with resource=https://storage.azure.com;
//     tokens "mi-token-<n>".
//   FakeBearerBlob: GET/HEAD /<account>/<container>/<blob> of fixed blobs
//     with x-ms-version and Authorization: Bearer <a token it is told>;
//     ranges answered 206.
// Thread-safe (the server's threads run the handlers).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "tests/stores/common/fake_http_server.h"

namespace sluice::testing {

// An RSA key and a self-signed certificate for it, as PEM (made in memory),
// valid for 127.0.0.1 (subjectAltName), so it can serve TLS too.
struct TestCertificate {
  std::string cert_pem;
  std::string key_pem;
  std::string x5t;  // base64url SHA-1 of the certificate's DER
};
TestCertificate MakeTestCertificate(const std::string& common_name);

struct FakeEntraOptions {
  std::string tenant;
  std::string client_id;
  std::string client_secret;    // accepted when non-empty
  std::string federated_token;  // accepted as client_assertion when non-empty
  std::string cert_pem;         // assertions signed by its key accepted when non-empty
  int64_t lifetime_s = 3600;
  // Hand out tokens shaped as Entra ID's (an unsigned JWT with aud
  // https://storage.azure.com, iss https://sts.windows.net/<tenant>/, nbf,
  // iat, exp), as azurite's `--oauth basic` checks them; else opaque
  // "entra-token-<n>".
  bool jwt_tokens = false;
  // Told of every token handed out and its expiry (unix seconds), e.g. to
  // let a FakeBearerBlob accept it.
  std::function<void(const std::string& token, int64_t expires_at)> on_issue;
};

class FakeEntraId {
 public:
  explicit FakeEntraId(FakeEntraOptions options);
  std::string url() const { return server_->url(); }
  int answers() const { return answers_; }
  int refused() const { return refused_; }
  // How the last accepted request authenticated: "secret", "federated", "certificate".
  std::string last_kind() const;
  // The tokens handed out, in order ("entra-token-1", ...).
  std::string TokenNumber(int n) const;

 private:
  FakeResponse Handle(const FakeRequest& req);
  FakeResponse Refuse(int status, const std::string& error, const std::string& description);
  std::string MakeX5t() const;  // of options_.cert_pem
  FakeEntraOptions options_;
  std::atomic<int> answers_{0}, refused_{0};
  mutable std::mutex mu_;
  std::string last_kind_;
  std::set<std::string> jtis_;  // a replayed assertion is refused
  std::unique_ptr<FakeHttpServer> server_;
};

enum class ManagedIdentityKind { kImds, kAppService, kAzureMl };

class FakeManagedIdentity {
 public:
  // `secret`: the X-IDENTITY-HEADER or secret value (unused for IMDS);
  // `client_id`: the user-assigned identity's, or "" for system-assigned
  // (a request naming another is refused 400, as IMDS does).
  FakeManagedIdentity(ManagedIdentityKind kind, std::string secret, std::string client_id,
                      int64_t lifetime_s);
  std::string url() const { return server_->url(); }
  // The endpoint variable's value: IMDS's base, or the full /msi/token URL.
  std::string endpoint() const;
  int answers() const { return answers_; }
  int refused() const { return refused_; }

 private:
  FakeResponse Handle(const FakeRequest& req);
  ManagedIdentityKind kind_;
  std::string secret_, client_id_;
  int64_t lifetime_s_;
  std::atomic<int> answers_{0}, refused_{0};
  std::unique_ptr<FakeHttpServer> server_;
};

class FakeBearerBlob {
 public:
  FakeBearerBlob(std::string account, std::map<std::string, std::string> blobs);
  std::string url() const { return server_->url() + "/" + account_; }
  // Accepts `token` from now on until `expires_at` (unix seconds; after it,
  // 401 "InvalidAuthenticationInfo", as Blob answers an expired token).
  void Accept(const std::string& token, int64_t expires_at = INT64_MAX);
  int distinct_tokens() const;  // tokens that authorized a request
  int served() const { return served_; }
  int refused() const { return refused_; }

 private:
  FakeResponse Handle(const FakeRequest& req);
  std::string account_;
  std::map<std::string, std::string> blobs_;  // "container/blob" -> bytes
  mutable std::mutex mu_;
  std::map<std::string, int64_t> tokens_;  // token -> expiry
  std::set<std::string> used_;
  std::atomic<int> served_{0}, refused_{0};
  std::unique_ptr<FakeHttpServer> server_;
};

}  // namespace sluice::testing
