// Reading an RSA private key from PEM text: the one rule every signer and
// key-pair reader uses (an encrypted key opens with its passphrase, never
// with a prompt). A private key is a secret: error text names the key's
// `what` (a file, a variable), never its bytes or passphrase.
// Pure functions; thread-safe.
#pragma once

#include <openssl/evp.h>

#include <memory>
#include <string_view>

#include "base/status.h"

namespace sluice {

struct EvpPkeyFree {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
// Owns an OpenSSL key.
using EvpPkeyPtr = std::unique_ptr<EVP_PKEY, EvpPkeyFree>;

// The RSA private key in `pem`, decrypted with `passphrase` when it is not
// empty. kInvalidArgument: "<what> holds no unencrypted PEM private key"
// (or "... no PEM private key that its passphrase opens"), "the private key
// of <what> is not an RSA key".
Result<EvpPkeyPtr> ReadRsaPrivateKey(std::string_view pem, std::string_view what,
                                     std::string_view passphrase);

}  // namespace sluice
