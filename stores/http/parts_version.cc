#include "stores/http/parts_version.h"

#include <utility>

#include "stores/http/http_client.h"

namespace sluice {

std::string PartsVersion::Etag() const {
  std::lock_guard<std::mutex> lock(mu_);
  return etag_;
}

std::optional<std::string> PartsVersion::Disagreement(uint64_t part, std::string_view etag) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!known_) {
    known_ = true;
    etag_ = std::string(etag);
    part_ = part;
    return std::nullopt;
  }
  if (SameEtag(etag_, etag)) return std::nullopt;
  auto said = [](uint64_t p, std::string_view t) {
    return "part " + std::to_string(p + 1) + " has ETag " +
           (t.empty() ? std::string("(none)") : std::string(t));
  };
  std::string low = said(part_, etag_), high = said(part, etag);
  if (part < part_) std::swap(low, high);
  return low + ", " + high;
}

uint64_t PartsVersion::first_part() const {
  std::lock_guard<std::mutex> lock(mu_);
  return part_;
}

}  // namespace sluice
