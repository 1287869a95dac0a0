#include "stores/signing/rsa_private_key.h"

#include <openssl/pem.h>

#include <string>

namespace sluice {
namespace {

// Refuses a passphrase prompt: an encrypted key without its passphrase is
// reported, not asked for on the terminal.
int RefusePassphrasePrompt(char* /*buf*/, int /*size*/, int /*rwflag*/, void* /*u*/) { return -1; }

struct PemBioFree {
  void operator()(BIO* p) const { BIO_free(p); }
};

}  // namespace

Result<EvpPkeyPtr> ReadRsaPrivateKey(std::string_view pem, std::string_view what,
                                     std::string_view passphrase) {
  std::unique_ptr<BIO, PemBioFree> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (!bio) return InternalError("out of memory reading the private key of " + std::string(what));
  std::string pass(passphrase);
  EvpPkeyPtr key(pass.empty()
                     ? PEM_read_bio_PrivateKey(bio.get(), nullptr, RefusePassphrasePrompt, nullptr)
                     : PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, pass.data()));
  if (!key) {
    return InvalidArgumentError(std::string(what) +
                                (pass.empty() ? " holds no unencrypted PEM private key"
                                              : " holds no PEM private key that its passphrase opens"));
  }
  if (EVP_PKEY_base_id(key.get()) != EVP_PKEY_RSA) {
    return InvalidArgumentError("the private key of " + std::string(what) + " is not an RSA key");
  }
  return key;
}

}  // namespace sluice
