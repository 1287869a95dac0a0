// GCS credentials (stores/credentials/gcs_*): service-account key files
// (ParseServiceAccountKey) and OAuth2 token responses
// (ParseAccessTokenResponse). Input: a control byte picking one, then the
// JSON text. Checks: the private key and the access token never appear in
// an error; what parses has the fields the callers use.
#include <cstddef>
#include <cstdint>
#include <string>

#include "stores/credentials/gcs_access_token.h"
#include "stores/credentials/gcs_service_account.h"
#include "tests/fuzz/fuzz_util.h"
#include "tests/fuzz/secret_scan.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sluice::fuzz::Input in(data, size);
  const uint8_t control = in.Byte();
  const std::string_view json = in.Rest();
  if (control & 1) {
    auto key = sluice::ParseServiceAccountKey(json, "/keys/sa.json");
    if (!key.ok()) {
      for (const std::string& secret : sluice::fuzz::JsonStringSecrets(json, "private_key")) {
        auto other = sluice::ParseServiceAccountKey(sluice::fuzz::RotateSecret(json, secret),
                                                    "/keys/sa.json");
        FUZZ_CHECK(!sluice::fuzz::Echoes(key.status(), other.status(), secret),
                   "error shows the private key");
      }
      return 0;
    }
    FUZZ_CHECK(!key->client_email.empty() && !key->private_key_pem.empty() &&
               !key->token_uri.empty(), "a key without the fields a token needs");
  } else {
    auto token = sluice::ParseAccessTokenResponse(json, "https://oauth2.example/token");
    if (!token.ok()) {
      for (const std::string& secret : sluice::fuzz::JsonStringSecrets(json, "access_token")) {
        auto other = sluice::ParseAccessTokenResponse(sluice::fuzz::RotateSecret(json, secret),
                                                      "https://oauth2.example/token");
        FUZZ_CHECK(!sluice::fuzz::Echoes(token.status(), other.status(), secret),
                   "error shows the access token");
      }
      return 0;
    }
    FUZZ_CHECK(!token->token.empty(), "empty access token accepted");
  }
  return 0;
}
