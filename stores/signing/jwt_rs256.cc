#include "stores/signing/jwt_rs256.h"

#include <openssl/evp.h>

#include <memory>

#include "stores/signing/digest.h"
#include "stores/signing/rsa_private_key.h"

namespace sluice {
namespace {

struct MdCtxFree {
  void operator()(EVP_MD_CTX* p) const { EVP_MD_CTX_free(p); }
};

}  // namespace

std::string Base64UrlEncode(std::string_view bytes) {
  std::string b = Base64Encode(bytes);
  while (!b.empty() && b.back() == '=') b.pop_back();
  for (char& c : b) {
    if (c == '+') c = '-';
    if (c == '/') c = '_';
  }
  return b;
}

std::optional<std::string> JwtClaimsText(std::string_view token) {
  const size_t a = token.find('.');
  const size_t b = a == std::string_view::npos ? a : token.find('.', a + 1);
  if (b == std::string_view::npos || token.find('.', b + 1) != std::string_view::npos) return std::nullopt;
  std::string part(token.substr(a + 1, b - a - 1));
  for (char& c : part) {
    if (c == '-') c = '+';
    if (c == '_') c = '/';
  }
  part.append((4 - part.size() % 4) % 4, '=');
  std::string claims;
  if (!Base64Decode(part, &claims)) return std::nullopt;
  return claims;
}

Result<std::string> RsaSha256Sign(std::string_view data, std::string_view private_key_pem,
                                  std::string_view what, std::string_view passphrase) {
  SLUICE_ASSIGN_OR_RETURN(EvpPkeyPtr pkey, ReadRsaPrivateKey(private_key_pem, what, passphrase));
  std::unique_ptr<EVP_MD_CTX, MdCtxFree> ctx(EVP_MD_CTX_new());
  size_t len = 0;
  const auto* bytes = reinterpret_cast<const unsigned char*>(data.data());
  bool ok = ctx && EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, pkey.get()) == 1 &&
            EVP_DigestSign(ctx.get(), nullptr, &len, bytes, data.size()) == 1;
  std::string sig;
  if (ok) {
    sig.resize(len);
    ok = EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()), &len, bytes,
                        data.size()) == 1;
    sig.resize(len);
  }
  if (!ok) return InvalidArgumentError("cannot sign with the private key of " + std::string(what));
  return sig;
}

Result<std::string> SignJwtRs256(std::string_view header_json, std::string_view claims_json,
                                 std::string_view private_key_pem, std::string_view what) {
  const std::string input = Base64UrlEncode(header_json) + "." + Base64UrlEncode(claims_json);
  SLUICE_ASSIGN_OR_RETURN(std::string sig, RsaSha256Sign(input, private_key_pem, what));
  return input + "." + Base64UrlEncode(sig);
}

}  // namespace sluice
