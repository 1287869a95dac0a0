// Azure Storage connection strings (stores/signing/azure_connection_string.h).
// Checks: the account key and SAS token never appear in an error message;
// what parses has a Blob endpoint with an http(s) scheme and no trailing
// '/', a protocol of http or https, and the key/token the text gave.
#include <cstddef>
#include <cstdint>
#include <string>

#include "stores/signing/azure_connection_string.h"
#include "tests/fuzz/fuzz_util.h"
#include "tests/fuzz/secret_scan.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = sluice::ParseAzureConnectionString(text);
  if (!parsed.ok()) {
    for (const std::string& secret : sluice::fuzz::SettingSecrets(
             text, '=', ";", {"accountkey", "sharedaccesssignature"})) {
      auto other = sluice::ParseAzureConnectionString(sluice::fuzz::RotateSecret(text, secret));
      FUZZ_CHECK(!sluice::fuzz::Echoes(parsed.status(), other.status(), secret),
                 "error shows a secret: %s", parsed.status().message().c_str());
    }
    return 0;
  }
  const sluice::AzureConnectionString& c = *parsed;
  FUZZ_CHECK(c.protocol == "http" || c.protocol == "https", "protocol %s", c.protocol.c_str());
  FUZZ_CHECK(!c.blob_endpoint.empty() && c.blob_endpoint.back() != '/',
             "blob endpoint '%s'", c.blob_endpoint.c_str());
  FUZZ_CHECK(c.sas_token.empty() || c.sas_token[0] != '?');
  return 0;
}
