// A fake of the two OCI endpoints a resource principal buys its session
// token at (no emulator exists): the resource principal token (RPT) service,
// answering any GET, and the identity service's POST
// /v1/resourcePrincipalSessionToken, on one loopback port. Both check what
// the real ones check: an OCI signature ("date (request-target) host", plus
// "content-length content-type x-content-sha256" for the POST, x-content-sha256
// the body's) that verifies with the public key the test registered for its
// key id, or for "ST$<token>" the session key of a token this fake issued
// or the test registered; the POST's body exactly as the SDK's json.dumps
// writes {"resourcePrincipalToken", "servicePrincipalSessionToken",
// "sessionPublicKey"}, naming an RPT and SPST this fake handed out. Tokens
// are JWTs expiring an hour after they are issued. Thread-safe.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tests/stores/common/fake_crypto.h"  // PublicPemOf, for the tests that use these fakes
#include "tests/stores/common/fake_http_server.h"

namespace sluice::testing {

class FakeOciRpService {
 public:
  FakeOciRpService();
  ~FakeOciRpService();

  std::string url() const { return server_->url(); }

  // Requests signed with `key_id` verify with `public_pem` ("BEGIN PUBLIC KEY").
  void AddKey(const std::string& key_id, const std::string& public_pem);
  // The RPT answer for `path` carries "opc-parent-rpt-url: <url>".
  void SetParent(const std::string& path, const std::string& url);

  // "GET /path key=<key id>" or "POST /v1/... key=<key id>" (a key id "ST$..."
  // shown as "ST$<token n>", n the order the fake issued or the test
  // registered it), plus " security-context=<v>" when sent, in order.
  std::vector<std::string> log();
  int refused();
  std::string last_refusal();
  std::string last_token();
  std::string last_session_public_pem();

 private:
  FakeResponse Handle(const FakeRequest& r);
  std::string ShowKeyId(const std::string& key_id);

  std::mutex mu_;
  std::map<std::string, std::string> keys_;   // key id -> public PEM
  std::vector<std::string> token_order_;      // "ST$" key ids in registration order
  std::map<std::string, std::string> parents_;
  std::map<std::string, std::string> rpts_;   // rpt -> spst handed out
  std::vector<std::string> log_;
  int refused_ = 0;
  int issued_ = 0;
  std::string last_refusal_;
  std::string last_token_;
  std::string last_public_;
  std::unique_ptr<FakeHttpServer> server_;
};

}  // namespace sluice::testing
