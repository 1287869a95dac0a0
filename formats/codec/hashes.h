// The hashes Mosaic offers, as lower-case hex digests: hashlib's blake2b,
// blake2s, md5, sha1, sha224, sha256, sha384, sha512, sha3_224, sha3_256,
// sha3_384, sha3_512 (OpenSSL) and xxh32, xxh64, xxh3_64, xxh3_128, xxh128
// (xxHash; canonical big-endian hex as python-xxhash's hexdigest()).
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace sluice {

bool IsSupportedHash(std::string_view algo);

// All supported algorithm names, sorted.
const std::vector<std::string>& SupportedHashes();

// Unknown algorithm -> kUnimplemented naming it.
Result<std::string> HashHex(std::string_view algo, std::string_view data);

// Checks `data` against `expected_hex` with `algo`; kHashMismatch naming
// `what`, the algorithm, expected and actual digests.
Status VerifyHash(std::string_view algo, std::string_view data,
                  std::string_view expected_hex, std::string_view what);

}  // namespace sluice
