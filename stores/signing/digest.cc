#include "stores/signing/digest.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include <cstdint>

#include "base/bytes.h"

namespace sluice {

std::string Sha256(std::string_view data) {
  unsigned char md[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), md);
  return std::string(reinterpret_cast<const char*>(md), sizeof(md));
}

std::string Sha256Hex(std::string_view data) { return HexEncode(Sha256(data)); }

std::string Sha1Hex(std::string_view data) {
  unsigned char md[SHA_DIGEST_LENGTH];
  SHA1(reinterpret_cast<const unsigned char*>(data.data()), data.size(), md);
  return HexEncode(std::string_view(reinterpret_cast<const char*>(md), sizeof(md)));
}

std::string HmacSha256(std::string_view key, std::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  // A non-null key pointer even for an empty key: OpenSSL treats a null key
  // as "reuse the previous one".
  static const unsigned char kEmpty = 0;
  const unsigned char* key_ptr =
      key.empty() ? &kEmpty : reinterpret_cast<const unsigned char*>(key.data());
  HMAC(EVP_sha256(), key_ptr, static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), md, &len);
  return std::string(reinterpret_cast<const char*>(md), len);
}

namespace {
constexpr char kAlphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int DecodeChar(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}
}  // namespace

std::string Base64Encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    uint32_t v = (uint32_t(uint8_t(bytes[i])) << 16) |
                 (uint32_t(uint8_t(bytes[i + 1])) << 8) | uint8_t(bytes[i + 2]);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  size_t rest = bytes.size() - i;
  if (rest == 1) {
    uint32_t v = uint32_t(uint8_t(bytes[i])) << 16;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += "==";
  } else if (rest == 2) {
    uint32_t v = (uint32_t(uint8_t(bytes[i])) << 16) | (uint32_t(uint8_t(bytes[i + 1])) << 8);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

bool Base64Decode(std::string_view text, std::string* out) {
  out->clear();
  if (text.size() % 4 != 0) return false;
  out->reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    int pad = 0;
    if (last && text[i + 3] == '=') pad = text[i + 2] == '=' ? 2 : 1;
    int v[4];
    for (int k = 0; k < 4 - pad; ++k) {
      v[k] = DecodeChar(text[i + k]);
      if (v[k] < 0) return false;
    }
    uint32_t n = (uint32_t(v[0]) << 18) | (uint32_t(v[1]) << 12);
    if (pad < 2) n |= uint32_t(v[2]) << 6;
    if (pad < 1) n |= uint32_t(v[3]);
    out->push_back(char((n >> 16) & 0xff));
    if (pad < 2) out->push_back(char((n >> 8) & 0xff));
    if (pad < 1) out->push_back(char(n & 0xff));
    // Non-canonical encodings carry bits past the end; reject them.
    if (pad == 2 && (n & 0xffff) != 0) return false;
    if (pad == 1 && (n & 0xff) != 0) return false;
  }
  return true;
}

}  // namespace sluice
