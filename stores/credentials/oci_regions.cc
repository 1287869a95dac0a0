#include "stores/credentials/oci_regions.h"

#include <algorithm>
#include <cctype>

#include "stores/common/store_keys.h"

namespace sluice {

namespace {

const OciRegionEntry* FindOciRegionByName(std::string_view name) {
  auto table = OciRegionTable();
  auto it = std::lower_bound(table.begin(), table.end(), name,
                             [](const OciRegionEntry& e, std::string_view n) { return e.name < n; });
  return it != table.end() && it->name == name ? &*it : nullptr;
}

}  // namespace

Result<std::string> CanonicalOciRegion(std::string_view region, std::string_view from) {
  std::string lower(region);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const OciRegionEntry& e : OciRegionTable()) {
    if (e.short_code == lower) return std::string(e.name);
  }
  if (lower.find('-') != std::string::npos) return lower;
  return InvalidArgumentError("OCI region '" + std::string(region) + "' from " + std::string(from) +
                              " is neither a region name (such as us-phoenix-1) nor a known short "
                              "code (such as phx)");
}

std::string OciServiceEndpoint(std::string_view service, std::string_view region) {
  std::string domain;
  if (const OciRegionEntry* e = FindOciRegionByName(region)) {
    domain = e->domain;
  } else {
    domain = GetEnv("OCI_DEFAULT_REALM").value_or("");
    if (domain.empty()) domain = "oraclecloud.com";
  }
  return "https://" + std::string(service) + "." + std::string(region) + "." + domain;
}

}  // namespace sluice
