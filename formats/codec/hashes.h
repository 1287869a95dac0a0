// The hashes Mosaic offers, as lower-case hex digests: hashlib's blake2b,
// blake2s, md5, sha1, sha224, sha256, sha384, sha512, sha3_224, sha3_256,
// sha3_384, sha3_512 (OpenSSL) and xxh32, xxh64, xxh3_64, xxh3_128, xxh128
// (xxHash, seed 0; canonical big-endian hex as python-xxhash's hexdigest(),
// e.g. xxh64 of "" = "ef46db3751d8e999"). xxh128 is xxh3_128, as in
// python-xxhash. blake2b/blake2s are the unkeyed 64/32-byte digests.
// Pure functions; thread-safe; results are owned by the caller.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace sluice {

// True for exactly the names above (case-sensitive, as Mosaic spells them).
bool IsSupportedHash(std::string_view algo);

// All supported algorithm names, sorted. Static storage, never changes.
const std::vector<std::string>& SupportedHashes();

// Lower-case hex digest of `data`.
// Unknown algorithm -> kUnimplemented: `unknown hash algorithm "<algo>"`.
Result<std::string> HashHex(std::string_view algo, std::string_view data);

// HashHex("xxh64", data) appended to `out` (16 characters): for callers
// that name things by it a file at a time (a row group's cache name), where
// the algorithm's lookup and the answer's allocation cost more than the hash.
void AppendXxh64Hex(std::string* out, std::string_view data);

// Checks `data` against `expected_hex` (either case) with `algo`. A mismatch
// is kHashMismatch: "<what>: <algo> mismatch: expected <hex>, got <hex>
// (<n> bytes)"; an unknown algorithm is kUnimplemented prefixed "<what>: ".
Status VerifyHash(std::string_view algo, std::string_view data,
                  std::string_view expected_hex, std::string_view what);

// HashHex("xxh64", ...) of everything Update was given, in order, without
// holding it. One thread.
class Xxh64Hasher {
 public:
  Xxh64Hasher();
  ~Xxh64Hasher();
  Xxh64Hasher(const Xxh64Hasher&) = delete;
  Xxh64Hasher& operator=(const Xxh64Hasher&) = delete;
  void Update(std::string_view data);
  std::string Hex() const;

 private:
  void* state_;  // XXH64_state_t
};

}  // namespace sluice
