#ifndef SLUICE_STORES_HTTP_PARTS_VERSION_H_
#define SLUICE_STORES_HTTP_PARTS_VERSION_H_

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace sluice {

// The one rule for which answers of a read in parts (a download's parts,
// GetToFile; a ranged read's parts, GetRangeInPartsInto) are of one version
// of the object: the first answer to come fixes the version by the ETag it
// states, "none" included, and every other answer must state the same ETag
// (SameEtag). So a server that never states an ETag is read as one version,
// and one that states it for some answers and not for others cannot show
// its parts are of one version and is refused. Thread-safe: the parts may
// answer on any thread of the store's executor.
class PartsVersion {
 public:
  // The ETag a part sent after the first answer asks for (If-Match): the
  // first answer's, "" before it came or when it stated none.
  std::string Etag() const;

  // Part `part`'s (0-based) answer stated `etag`: nullopt when it is of
  // the first answer's version (or is the first), else what differs,
  // worded for an error: "part 1 has ETag "v1", part 3 has ETag (none)"
  // (parts 1-based, the lower first).
  std::optional<std::string> Disagreement(uint64_t part, std::string_view etag);

  // The part whose answer came first (0 before any).
  uint64_t first_part() const;

 private:
  mutable std::mutex mu_;
  bool known_ = false;
  std::string etag_;
  uint64_t part_ = 0;
};

}  // namespace sluice

#endif  // SLUICE_STORES_HTTP_PARTS_VERSION_H_
