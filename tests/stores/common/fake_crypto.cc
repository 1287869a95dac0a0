#include "tests/stores/common/fake_crypto.h"

#include <openssl/pem.h>

#include <algorithm>

namespace sluice::testing {

std::string FakeBase64(const std::string& bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(bytes.data()),
                                static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

std::string FakeBase64Url(const std::string& bytes) {
  std::string s = FakeBase64(bytes);
  while (!s.empty() && s.back() == '=') s.pop_back();
  for (char& c : s) {
    if (c == '+') c = '-';
    if (c == '/') c = '_';
  }
  return s;
}

std::string FakeDigest(const std::string& data, const EVP_MD* md) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), out, &len, md, nullptr);
  return std::string(reinterpret_cast<const char*>(out), len);
}

std::string QuotedAfter(const std::string& s, const std::string& open) {
  const size_t a = s.find(open);
  if (a == std::string::npos) return "";
  const size_t b = s.find('"', a + open.size());
  return b == std::string::npos ? "" : s.substr(a + open.size(), b - a - open.size());
}

bool VerifiesRsaSha256(EVP_PKEY* key, const std::string& sig_b64, const std::string& data) {
  if (key == nullptr || sig_b64.size() < 2) return false;
  std::string sig(sig_b64.size(), '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(sig.data()),
                                reinterpret_cast<const unsigned char*>(sig_b64.data()),
                                static_cast<int>(sig_b64.size()));
  if (n < 0) return false;
  sig.resize(static_cast<size_t>(n) -
             static_cast<size_t>(std::count(sig_b64.end() - 2, sig_b64.end(), '=')));
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  const bool ok =
      EVP_DigestVerifyInit(ctx, nullptr, EVP_sha256(), nullptr, key) == 1 &&
      EVP_DigestVerify(ctx, reinterpret_cast<const unsigned char*>(sig.data()), sig.size(),
                       reinterpret_cast<const unsigned char*>(data.data()), data.size()) == 1;
  EVP_MD_CTX_free(ctx);
  return ok;
}

bool VerifiesRsaSha256Pem(const std::string& public_pem, const std::string& sig_b64,
                          const std::string& data) {
  BIO* bio = BIO_new_mem_buf(public_pem.data(), static_cast<int>(public_pem.size()));
  EVP_PKEY* key = PEM_read_bio_PUBKEY(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  const bool ok = VerifiesRsaSha256(key, sig_b64, data);
  EVP_PKEY_free(key);
  return ok;
}

std::string PublicPemOf(const std::string& private_pem) {
  BIO* in = BIO_new_mem_buf(private_pem.data(), static_cast<int>(private_pem.size()));
  EVP_PKEY* key = PEM_read_bio_PrivateKey(in, nullptr, nullptr, nullptr);
  BIO_free(in);
  if (key == nullptr) return "";
  BIO* out = BIO_new(BIO_s_mem());
  PEM_write_bio_PUBKEY(out, key);
  char* data = nullptr;
  const long n = BIO_get_mem_data(out, &data);
  std::string pem(data, static_cast<size_t>(n));
  BIO_free(out);
  EVP_PKEY_free(key);
  return pem;
}

}  // namespace sluice::testing
