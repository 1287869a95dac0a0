#include "stores/signing/jwt_rs256.h"

#include <openssl/evp.h>
#include <openssl/pem.h>

#include <memory>

#include "stores/signing/digest.h"

namespace sluice {
namespace {

struct PkeyFree {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
struct MdCtxFree {
  void operator()(EVP_MD_CTX* p) const { EVP_MD_CTX_free(p); }
};

// Refuses a passphrase prompt: an encrypted key is reported, not asked for.
int NoPassphrase(char* /*buf*/, int /*size*/, int /*rwflag*/, void* /*u*/) { return -1; }

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
  BIO* bio = BIO_new_mem_buf(private_key_pem.data(), static_cast<int>(private_key_pem.size()));
  if (bio == nullptr) return InternalError("out of memory reading the private key of " + std::string(what));
  std::string pass(passphrase);
  std::unique_ptr<EVP_PKEY, PkeyFree> pkey(
      pass.empty() ? PEM_read_bio_PrivateKey(bio, nullptr, NoPassphrase, nullptr)
                   : PEM_read_bio_PrivateKey(bio, nullptr, nullptr, pass.data()));
  BIO_free(bio);
  if (!pkey) {
    return InvalidArgumentError(std::string(what) + (pass.empty()
                                    ? " holds no unencrypted PEM private key"
                                    : " holds no PEM private key that its passphrase opens"));
  }
  if (EVP_PKEY_base_id(pkey.get()) != EVP_PKEY_RSA) {
    return InvalidArgumentError("the private key of " + std::string(what) +
                                " is not an RSA key (RSA-SHA256 needs one)");
  }
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
