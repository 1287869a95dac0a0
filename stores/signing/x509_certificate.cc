#include "stores/signing/x509_certificate.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>

#include <memory>

#include "stores/signing/rsa_private_key.h"

namespace sluice {
namespace {

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
using BioPtr = std::unique_ptr<BIO, BioFree>;

std::string BioText(BIO* bio) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  return n > 0 ? std::string(data, static_cast<size_t>(n)) : std::string();
}

Result<RsaKeyPair> WrittenPair(EVP_PKEY* key) {
  BioPtr priv(BIO_new(BIO_s_mem()));
  BioPtr pub(BIO_new(BIO_s_mem()));
  const bool written =
      priv && pub &&
      PEM_write_bio_PrivateKey(priv.get(), key, nullptr, nullptr, 0, nullptr, nullptr) == 1 &&
      PEM_write_bio_PUBKEY(pub.get(), key) == 1;
  if (!written) return InternalError("cannot write an RSA key pair");
  return RsaKeyPair{BioText(priv.get()), BioText(pub.get())};
}

}  // namespace

Result<X509Summary> ReadX509Certificate(std::string_view pem, std::string_view what) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (!bio) return InternalError("out of memory reading " + std::string(what));
  X509* x509 = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr);
  if (x509 == nullptr) return InvalidArgumentError(std::string(what) + " holds no PEM certificate");
  X509Summary out;
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  const bool digested = X509_digest(x509, EVP_sha1(), md, &len) == 1;
  const X509_NAME* subject = X509_get_subject_name(x509);
  const int entries = subject ? X509_NAME_entry_count(subject) : 0;
  for (int i = 0; i < entries; ++i) {
    const ASN1_STRING* data = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, i));
    unsigned char* utf8 = nullptr;
    const int n = data ? ASN1_STRING_to_UTF8(&utf8, data) : -1;
    if (n >= 0) out.subject_values.emplace_back(reinterpret_cast<const char*>(utf8), n);
    OPENSSL_free(utf8);
  }
  X509_free(x509);
  if (!digested) return InternalError("cannot hash the certificate of " + std::string(what));
  out.der_sha1.assign(reinterpret_cast<const char*>(md), len);
  return out;
}

std::string ColonHex(std::string_view bytes) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : bytes) {
    if (!out.empty()) out += ':';
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

Result<RsaKeyPair> GenerateRsaKeyPair(int bits) {
  EVP_PKEY* key = EVP_RSA_gen(static_cast<unsigned int>(bits));
  if (key == nullptr) return InternalError("cannot generate an RSA key pair");
  auto pair = WrittenPair(key);
  EVP_PKEY_free(key);
  return pair;
}

Result<RsaKeyPair> OpenRsaKeyPair(std::string_view private_key_pem, std::string_view what,
                                  std::string_view passphrase) {
  SLUICE_ASSIGN_OR_RETURN(EvpPkeyPtr key, ReadRsaPrivateKey(private_key_pem, what, passphrase));
  return WrittenPair(key.get());
}

}  // namespace sluice
