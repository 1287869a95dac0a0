// OCI regions as the OCI SDK resolves them before it builds a service's
// endpoint (oci.regions.endpoint_for): a config file, OCI_REGION, a resource
// principal's environment or the instance metadata may give a region as its
// short code ("phx"), which names the region "us-phoenix-1"; each region
// belongs to a realm whose second-level domain ends its hosts
// (objectstorage.us-phoenix-1.oraclecloud.com, but
// objectstorage.us-langley-1.oraclegovcloud.com). The table
// (oci_region_table.cc) holds the SDK's published regions (oci 2.189.0's
// regions_definitions); a region newer than it is taken as named, in the
// commercial realm (OCI_DEFAULT_REALM's domain when set), as the SDK does.
// Pure functions over constant data (OciRegionHost reads OCI_DEFAULT_REALM):
// thread-safe.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "base/status.h"

namespace sluice {

struct OciRegionEntry {
  std::string_view short_code;  // "phx"
  std::string_view name;        // "us-phoenix-1"
  std::string_view domain;      // its realm's second-level domain, "oraclecloud.com"
};

// Every region of the table, sorted by name.
std::span<const OciRegionEntry> OciRegionTable();

// The region name `region` stands for, lower-cased: a known short code's
// region; else a name with a '-' as it is (a region newer than the table).
// A value with no '-' that is no known short code is refused
// (kInvalidArgument): "OCI region 'xyz' from <from> is neither a region name
// (such as us-phoenix-1) nor a known short code (such as phx)"; `from` says
// where the value came from ("region of profile DEFAULT in /home/u/.oci/config",
// "OCI_REGION", "OCI instance metadata http://.../instance/region").
Result<std::string> CanonicalOciRegion(std::string_view region, std::string_view from);

// "https://<service>.<region>.<domain>": the realm domain of the canonical
// `region` from the table, else OCI_DEFAULT_REALM when set, else
// oraclecloud.com.
std::string OciServiceEndpoint(std::string_view service, std::string_view region);

}  // namespace sluice
