// Fakes of OCI's instance metadata service and its auth service's X.509
// federation endpoint (no emulator of either exists), checking what the real
// ones check: the metadata service answers only "Authorization: Bearer
// Oracle"; the auth service only a POST /v1/x509 whose body names the leaf
// certificate the metadata service handed out, with the intermediate, and
// whose signature verifies with that certificate's public key over
// "date (request-target) content-length content-type x-content-sha256"
// (x-content-sha256 the body's, key id "<tenancy>/fed-x509/<SHA-1 AB:CD:..>").
// It answers {"token": JWT} for the session public key sent. The
// certificates are made at construction (RSA-2048, self-signed; no key is
// committed). The instance's id (instance/id) is "OCID1.INSTANCE.OC1..FAKE\n".
// Thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "tests/stores/common/fake_http_server.h"

namespace sluice::testing {

struct TestCertificate {
  std::string cert_pem;
  std::string key_pem;  // PKCS#8, unencrypted
};

// A self-signed certificate with subject CN=`cn`, OU=`ou` (e.g.
// "opc-tenant:ocid1.tenancy.oc1..x"; empty: none), valid for a day.
TestCertificate MakeTestCertificate(const std::string& cn, const std::string& ou);

// "AB:CD:..": the SHA-1 of `cert_pem`'s DER, as OCI's fed-x509 key ids
// name a certificate.
std::string CertificateSha1(const std::string& cert_pem);

class FakeOciIdentity {
 public:
  // Tokens expire `token_ttl_s` after they are issued.
  FakeOciIdentity(std::string tenancy, std::string region, int64_t token_ttl_s = 3600);
  ~FakeOciIdentity();

  std::string metadata_url() const;    // ".../opc/v2"
  std::string federation_url() const;  // ".../v1/x509"
  const std::string& tenancy() const { return tenancy_; }
  std::string leaf_cert_pem();

  // Replaces the leaf certificate and key the metadata service hands out.
  void set_leaf(TestCertificate leaf);
  // The metadata path (e.g. "identity/key.pem") answers 404 when set.
  void set_missing_path(std::string path);

  int tokens_issued();
  std::string last_token();
  std::string last_session_public_pem();  // "BEGIN PUBLIC KEY" PEM
  int metadata_gets();
  int refused();
  std::string last_refusal();  // why the last refused request was refused

 private:
  FakeResponse Metadata(const FakeRequest& r);
  FakeResponse Federation(const FakeRequest& r);

  std::mutex mu_;
  std::string tenancy_;
  std::string region_;
  int64_t ttl_s_;
  TestCertificate leaf_;
  TestCertificate intermediate_;
  std::string missing_path_;
  int tokens_ = 0;
  std::string last_token_;
  std::string last_public_;
  int metadata_gets_ = 0;
  int refused_ = 0;
  std::string last_refusal_;
  std::unique_ptr<FakeHttpServer> metadata_;
  std::unique_ptr<FakeHttpServer> auth_;
};

}  // namespace sluice::testing
