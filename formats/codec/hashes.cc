#include "formats/codec/hashes.h"

#include <openssl/evp.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "base/bytes.h"

namespace sluice {

namespace {

enum class Kind { kOpenSsl, kXxh32, kXxh64, kXxh3_64, kXxh3_128 };

struct Algo {
  std::string_view name;     // Mosaic's (hashlib / python-xxhash) name
  Kind kind;
  const char* openssl_name;  // for kOpenSsl
};

// Sorted by name.
constexpr std::array<Algo, 17> kAlgos = {{
    {"blake2b", Kind::kOpenSsl, "BLAKE2B-512"},
    {"blake2s", Kind::kOpenSsl, "BLAKE2S-256"},
    {"md5", Kind::kOpenSsl, "MD5"},
    {"sha1", Kind::kOpenSsl, "SHA1"},
    {"sha224", Kind::kOpenSsl, "SHA224"},
    {"sha256", Kind::kOpenSsl, "SHA256"},
    {"sha384", Kind::kOpenSsl, "SHA384"},
    {"sha3_224", Kind::kOpenSsl, "SHA3-224"},
    {"sha3_256", Kind::kOpenSsl, "SHA3-256"},
    {"sha3_384", Kind::kOpenSsl, "SHA3-384"},
    {"sha3_512", Kind::kOpenSsl, "SHA3-512"},
    {"sha512", Kind::kOpenSsl, "SHA512"},
    {"xxh128", Kind::kXxh3_128, nullptr},  // python-xxhash: xxh128 is xxh3_128
    {"xxh32", Kind::kXxh32, nullptr},
    {"xxh3_128", Kind::kXxh3_128, nullptr},
    {"xxh3_64", Kind::kXxh3_64, nullptr},
    {"xxh64", Kind::kXxh64, nullptr},
}};

const Algo* FindAlgo(std::string_view name) {
  for (const Algo& a : kAlgos) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

std::string CanonicalHex(const void* canonical, size_t size) {
  return HexEncode(std::string_view(static_cast<const char*>(canonical), size));
}

Result<std::string> OpenSslHex(const Algo& a, std::string_view data) {
  // Legacy lookup: static tables, nothing to free, safe from any thread.
  const EVP_MD* md = EVP_get_digestbyname(a.openssl_name);
  if (md == nullptr) {
    return UnimplementedError("hash " + std::string(a.name) + ": OpenSSL has no " +
                              a.openssl_name);
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_Digest(data.data(), data.size(), digest, &size, md, nullptr) != 1) {
    return InternalError("hash " + std::string(a.name) + ": OpenSSL digest failed");
  }
  return CanonicalHex(digest, size);
}

}  // namespace

bool IsSupportedHash(std::string_view algo) { return FindAlgo(algo) != nullptr; }

const std::vector<std::string>& SupportedHashes() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const Algo& a : kAlgos) v.emplace_back(a.name);
    std::sort(v.begin(), v.end());
    return v;
  }();
  return names;
}

Result<std::string> HashHex(std::string_view algo, std::string_view data) {
  const Algo* a = FindAlgo(algo);
  if (a == nullptr) {
    return UnimplementedError("unknown hash algorithm \"" + std::string(algo) + "\"");
  }
  switch (a->kind) {
    case Kind::kOpenSsl:
      return OpenSslHex(*a, data);
    case Kind::kXxh32: {
      XXH32_canonical_t c;
      XXH32_canonicalFromHash(&c, XXH32(data.data(), data.size(), 0));
      return CanonicalHex(&c, sizeof(c));
    }
    case Kind::kXxh64: {
      std::string hex;
      AppendXxh64Hex(&hex, data);
      return hex;
    }
    case Kind::kXxh3_64: {
      XXH64_canonical_t c;
      XXH64_canonicalFromHash(&c, XXH3_64bits(data.data(), data.size()));
      return CanonicalHex(&c, sizeof(c));
    }
    case Kind::kXxh3_128: {
      XXH128_canonical_t c;
      XXH128_canonicalFromHash(&c, XXH3_128bits(data.data(), data.size()));
      return CanonicalHex(&c, sizeof(c));
    }
  }
  return InternalError("hash " + std::string(algo) + ": unhandled kind");
}

Xxh64Hasher::Xxh64Hasher() : state_(XXH64_createState()) {
  XXH64_reset(static_cast<XXH64_state_t*>(state_), 0);
}

Xxh64Hasher::~Xxh64Hasher() { XXH64_freeState(static_cast<XXH64_state_t*>(state_)); }

void Xxh64Hasher::Update(std::string_view data) {
  XXH64_update(static_cast<XXH64_state_t*>(state_), data.data(), data.size());
}

void AppendXxh64Hex(std::string* out, std::string_view data) {
  static constexpr char kDigits[] = "0123456789abcdef";
  const uint64_t h = XXH64(data.data(), data.size(), 0);
  const size_t at = out->size();
  out->resize(at + 16);
  // Big-endian, as XXH64_canonicalFromHash and python-xxhash's hexdigest().
  for (int i = 0; i < 16; ++i) (*out)[at + i] = kDigits[(h >> (60 - 4 * i)) & 0xf];
}

std::string Xxh64Hasher::Hex() const {
  XXH64_canonical_t c;
  XXH64_canonicalFromHash(&c, XXH64_digest(static_cast<const XXH64_state_t*>(state_)));
  return CanonicalHex(&c, sizeof(c));
}

Status VerifyHash(std::string_view algo, std::string_view data,
                  std::string_view expected_hex, std::string_view what) {
  auto actual = HashHex(algo, data);
  if (!actual.ok()) return actual.status().WithContext(what);
  std::string expected(expected_hex);
  for (char& ch : expected) {
    if (ch >= 'A' && ch <= 'F') ch = static_cast<char>(ch - 'A' + 'a');
  }
  if (*actual == expected) return Status::Ok();
  return HashMismatchError(std::string(what) + ": " + std::string(algo) +
                           " mismatch: expected " + std::string(expected_hex) + ", got " +
                           *actual + " (" + std::to_string(data.size()) + " bytes)");
}

}  // namespace sluice
