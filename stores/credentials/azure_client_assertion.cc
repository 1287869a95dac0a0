#include "stores/credentials/azure_client_assertion.h"

#include <openssl/rand.h>

#include "base/file.h"
#include "formats/json/py_json.h"
#include "stores/signing/digest.h"
#include "stores/signing/jwt_rs256.h"
#include "stores/signing/x509_certificate.h"

namespace sluice {
namespace {

constexpr uint64_t kMaxPemFile = uint64_t{1} << 20;

Result<std::string> JsonQuoted(std::string_view s) {
  std::string out;
  SLUICE_RETURN_IF_ERROR(AppendPyJsonString(out, s));
  return out;
}

// A random UUID (version 4) as text.
Result<std::string> RandomUuid() {
  unsigned char b[16];
  if (RAND_bytes(b, sizeof b) != 1) return InternalError("no random bytes for a client assertion");
  b[6] = static_cast<unsigned char>((b[6] & 0x0f) | 0x40);
  b[8] = static_cast<unsigned char>((b[8] & 0x3f) | 0x80);
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += kHex[b[i] >> 4];
    out += kHex[b[i] & 15];
  }
  return out;
}

}  // namespace

Result<ClientCertificate> ReadClientCertificate(const std::string& path) {
  auto text = ReadFile(path, kMaxPemFile);
  if (!text.ok()) return text.status().WithContext("AZURE_CLIENT_CERTIFICATE_PATH");
  SLUICE_ASSIGN_OR_RETURN(X509Summary x509,
                          ReadX509Certificate(*text, "AZURE_CLIENT_CERTIFICATE_PATH " + path));
  ClientCertificate cert;
  cert.x5t = Base64UrlEncode(x509.der_sha1);
  cert.private_key_pem = std::move(*text);
  // Signing once checks the key now, so that a broken file is reported by name.
  SLUICE_RETURN_IF_ERROR(
      SignJwtRs256("{}", "{}", cert.private_key_pem, "AZURE_CLIENT_CERTIFICATE_PATH " + path)
          .status());
  return cert;
}

Result<std::string> MakeClientAssertion(const ClientCertificate& cert, std::string_view client_id,
                                        std::string_view audience, int64_t now,
                                        std::string_view path) {
  SLUICE_ASSIGN_OR_RETURN(std::string x5t, JsonQuoted(cert.x5t));
  SLUICE_ASSIGN_OR_RETURN(std::string aud, JsonQuoted(audience));
  SLUICE_ASSIGN_OR_RETURN(std::string client, JsonQuoted(client_id));
  SLUICE_ASSIGN_OR_RETURN(std::string jti, RandomUuid());
  const std::string header = "{\"alg\":\"RS256\",\"typ\":\"JWT\",\"x5t\":" + x5t + "}";
  const std::string claims = "{\"aud\":" + aud + ",\"iss\":" + client + ",\"sub\":" + client +
                             ",\"jti\":\"" + jti + "\",\"iat\":" + std::to_string(now) +
                             ",\"exp\":" + std::to_string(now + 600) + "}";
  return SignJwtRs256(header, claims, cert.private_key_pem,
                      "AZURE_CLIENT_CERTIFICATE_PATH " + std::string(path));
}

}  // namespace sluice
